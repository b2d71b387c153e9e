"""Every third-party module the shipped packages import is a declared runtime dependency.

The ``test`` extra pulls in much more (pypaimon brings numpy, pandas, ...), so a missing
declaration only shows on a fresh ``pip install -e .``: this test finds it from the source.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ("paimon_core", "procedures", "sql_ext")
# Import name -> distribution name, where they differ.
DISTRIBUTION = {"yaml": "pyyaml", "google": "protobuf"}


def declared_distributions() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {
        _normalise(re.split(r"[<>=!~\[; ]", dep, maxsplit=1)[0]) for dep in project["dependencies"]
    }


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def imported_top_level_modules() -> dict[str, set[str]]:
    """Top-level module -> the files importing it, for absolute imports outside the stdlib."""
    found: dict[str, set[str]] = {}
    for package in SHIPPED:
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.split(".")[0]
                    if top in SHIPPED or top in sys.stdlib_module_names or top == "__future__":
                        continue
                    found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_third_party_import_is_a_declared_dependency() -> None:
    declared = declared_distributions()
    missing = {
        module: sorted(files)
        for module, files in imported_top_level_modules().items()
        if _normalise(DISTRIBUTION.get(module, module)) not in declared
    }
    assert missing == {}, f"imported but not in [project].dependencies: {missing}"


def test_the_scan_sees_the_known_imports() -> None:
    modules = imported_top_level_modules()
    assert {"pyarrow", "numpy", "sqlglot", "pyspark"} <= set(modules)
