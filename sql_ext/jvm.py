"""Bulk exchanges with Spark's JVM in one py4j round trip each.

Every py4j call is a socket round trip (about 0.3-3 ms, more on a loaded machine), and py4j
moves collections one element per call: iterating a Java map of the session's ~20 settings
costs ~20 calls, handing Spark a list of 40 file paths ~40. A statement makes such exchanges
every time it runs, so they go as JSON text instead, encoded and decoded by the Jackson
``ObjectMapper`` that Spark itself ships.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_CACHE: dict[str, Any] = {}
"""The gateway the cached JVM objects belong to, and those objects (made once per JVM)."""


def _jackson(spark: SparkSession) -> tuple[Any, Any]:
    """Spark's JVM's ObjectMapper and ``java.util.ArrayList``'s class, made once per JVM."""
    gateway = spark.sparkContext._gateway
    if _CACHE.get("gateway") is not gateway:
        jvm = spark.sparkContext._jvm
        assert jvm is not None
        _CACHE.clear()
        _CACHE["mapper"] = jvm.com.fasterxml.jackson.databind.ObjectMapper()
        _CACHE["list_class"] = jvm.java.util.ArrayList._java_lang_class
        _CACHE["to_seq"] = jvm.org.apache.spark.api.python.PythonUtils.toSeq
        _CACHE["as_java"] = jvm.scala.jdk.javaapi.CollectionConverters.asJava
        _CACHE["gateway"] = gateway
    return _CACHE["mapper"], _CACHE["list_class"]


def session_confs(spark: SparkSession) -> dict[str, str]:
    """``spark.conf.getAll`` in two round trips (it takes one per setting)."""
    mapper, _ = _jackson(spark)
    jconf = spark.conf._jconf  # type: ignore[attr-defined]
    settings = json.loads(mapper.writeValueAsString(jconf.getAllAsJava()))
    assert isinstance(settings, dict)
    return settings


def string_seq(spark: SparkSession, items: Sequence[str]) -> Any:
    """A Scala ``Seq[String]`` of ``items`` in the JVM, in two round trips."""
    mapper, list_class = _jackson(spark)
    return _CACHE["to_seq"](mapper.readValue(json.dumps(list(items)), list_class))


def scala_string_map(spark: SparkSession, scala_map: Any) -> dict[str, str]:
    """A Scala ``Map[String, String]`` of the JVM as a dict, in two round trips."""
    mapper, _ = _jackson(spark)
    entries = json.loads(mapper.writeValueAsString(_CACHE["as_java"](scala_map)))
    assert isinstance(entries, dict)
    return entries


def is_temp_view(spark: SparkSession, name: str) -> bool:
    """Whether the session has a temporary view ``name`` (as Spark resolves an unqualified
    name: case-insensitively unless ``spark.sql.caseSensitive``), in two round trips and
    without an exception for a name that is none."""
    catalog = _SESSION_CATALOGS.get(spark)
    if catalog is None:
        jsession = spark._jsparkSession  # type: ignore[attr-defined]
        catalog = _SESSION_CATALOGS[spark] = jsession.sessionState().catalog()
    return bool(catalog.getTempView(name).isDefined())


_SESSION_CATALOGS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
"""Each SparkSession's session catalog (one object for the session's life)."""
