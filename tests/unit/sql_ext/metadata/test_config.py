"""The configuration `paimon-sql` resolves without Spark is the one Spark would start with."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from sql_ext.metadata.config import parse_properties, session_conf, spark_defaults
from sql_ext.shell import LazySession, lazy_session


def test_properties_parse_as_java_reads_spark_defaults() -> None:
    text = (
        "# comment\n"
        "! also a comment\n"
        "spark.a   one two  \n"
        "spark.b=2\n"
        "spark.c : 3\n"
        "  spark.d\t4\n"
        "spark.e = long \\\n"
        "    value\n"
        "spark.f\\:g = h\\u0041\\n\n"
        "spark.empty\n"
    )
    assert parse_properties(text) == {
        "spark.a": "one two",
        "spark.b": "2",
        "spark.c": "3",
        "spark.d": "4",
        "spark.e": "long value",
        "spark.f:g": "hA",
        "spark.empty": "",
    }


def test_defaults_come_from_spark_conf_dir_then_spark_home(tmp_path: Path) -> None:
    conf_dir, home = tmp_path / "conf-dir", tmp_path / "home"
    (home / "conf").mkdir(parents=True)
    conf_dir.mkdir()
    (conf_dir / "spark-defaults.conf").write_text("spark.x 1\nnot.spark 2\n")
    (home / "conf" / "spark-defaults.conf").write_text("spark.y 3\n")
    assert spark_defaults({"SPARK_CONF_DIR": str(conf_dir), "SPARK_HOME": str(home)}) == {
        "spark.x": "1"
    }
    assert spark_defaults({"SPARK_HOME": str(home)}) == {"spark.y": "3"}
    assert spark_defaults({"SPARK_CONF_DIR": str(tmp_path / "missing")}) == {}


def test_conf_arguments_win_over_defaults(tmp_path: Path) -> None:
    (tmp_path / "spark-defaults.conf").write_text("spark.a 1\nspark.b 2\n")
    environ = {"SPARK_CONF_DIR": str(tmp_path)}
    assert session_conf([("spark.b", "3"), ("spark.c", "4")], environ) == {
        "spark.a": "1",
        "spark.b": "3",
        "spark.c": "4",
    }


def test_the_shell_engine_gets_the_warehouse_and_catalog_options_of_the_conf(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conf_dir = tmp_path / "conf"
    conf_dir.mkdir()
    (conf_dir / "spark-defaults.conf").write_text(
        f"spark.sql.catalog.paimon.warehouse   file://{tmp_path}/from-defaults\n"
        "spark.sql.catalog.paimon.s3.endpoint  http://127.0.0.1:1\n"
        "spark.sql.session.timeZone            UTC\n"
    )
    monkeypatch.setenv("SPARK_CONF_DIR", str(conf_dir))
    args = argparse.Namespace(
        warehouse=None, conf=[("spark.sql.catalog.paimon.s3.region", "eu-1")], master=None
    )
    session = lazy_session(args)
    assert isinstance(session, LazySession) and session.spark_session is None
    engine = session.engine
    assert engine.warehouse == f"{tmp_path}/from-defaults"
    assert engine.catalog.options == {"s3.endpoint": "http://127.0.0.1:1", "s3.region": "eu-1"}
    args.warehouse = str(tmp_path / "argument")
    assert lazy_session(args).engine.warehouse == str(tmp_path / "argument")
