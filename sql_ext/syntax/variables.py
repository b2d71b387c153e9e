"""Spark's `${var}` substitution of a statement's text, before it is parsed."""

from __future__ import annotations

import os
import re
from collections.abc import Callable

from sql_ext.errors import SqlError

__all__ = ["substitute_variables"]

_SUBSTITUTE_CONF = "spark.sql.variable.substitute"
_VARIABLE = re.compile(r"\$\{(?:(\w+?):)?(\S+?)\}")  # Spark's ConfigReader.REF_RE
_CONF_PREFIXES = frozenset({"spark", "sparkconf", "hivevar", "hiveconf"})


def substitute_variables(text: str, conf: Callable[[str], str | None]) -> str:
    """`text` after Spark's `${var}` substitution (`VariableSubstitution`), done before
    parsing so that `SET tbl=t; SELECT * FROM ${tbl}` reads a Paimon table as Spark would;
    `conf(key)` is the session's setting (None: unset).

    `${name}`, `${spark:name}`, `${sparkconf:name}`, `${hivevar:name}` and
    `${hiveconf:name}` are session configuration values, `${env:NAME}` environment
    variables; values are substituted in turn; unknown references stay as written.
    """
    if "${" not in text:
        return text
    enabled = conf(_SUBSTITUTE_CONF)
    if str("true" if enabled is None else enabled).strip().lower() != "true":
        return text

    def lookup(prefix: str | None, name: str) -> str | None:
        if prefix is None or prefix.lower() in _CONF_PREFIXES:
            return conf(name) or None
        if prefix.lower() == "env":
            return os.environ.get(name) or None
        return None

    def substitute(value: str, seen: frozenset[str]) -> str:
        def replace(match: re.Match[str]) -> str:
            reference = match.group()
            found = lookup(match.group(1), match.group(2))
            if found is None:
                return reference
            if reference in seen:
                raise SqlError(f"Circular reference in {reference}")
            return substitute(found, seen | {reference})

        return _VARIABLE.sub(replace, value)

    return substitute(text, frozenset())
