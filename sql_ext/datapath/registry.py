"""Which SparkSessions have the ``paimon`` data source, and with which defaults.

The bookkeeping of ``sql_ext.datapath.source.register``, kept apart so that the modules that
need the source registered (``read``) or its defaults (``stream_write``) do not import the
source, which imports them (its reader and writer).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "FORMAT",
    "PENDING",
    "REGISTERED",
    "ensure_registered",
    "registered_options",
    "session_key",
]

FORMAT = "paimon"

REGISTERED: dict[str, dict[str, str]] = {}
"""The defaults registered in each SparkSession (by its session UUID), for
``DataFrameWriter.save`` on the driver; the source itself carries them in its class."""

PENDING: dict[str, tuple[dict[str, str], Callable[[], None]]] = {}
"""Registrations put off (``register(..., lazy=True)``) until ``ensure_registered``, by
session: the defaults and the registration to carry out."""


def registered_options(spark: SparkSession) -> dict[str, str]:
    """The defaults (warehouse, catalog options) registered in ``spark`` by its latest
    ``PaimonSession``; empty when none registered any."""
    return dict(REGISTERED.get(session_key(spark), {}))


def ensure_registered(spark: SparkSession) -> None:
    """Carry out a registration of ``spark`` put off by ``register(..., lazy=True)``; free
    when none is pending."""
    if not PENDING:
        return
    pending = PENDING.get(session_key(spark))
    if pending is not None:
        pending[1]()


def session_key(spark: SparkSession) -> str:
    """The identity of ``spark`` in the JVM (its session UUID), the same for every Python
    object wrapping that session."""
    return str(spark._jsparkSession.sessionUUID())
