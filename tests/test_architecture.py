"""The metadata core must stay free of Spark and sqlglot: it runs on executors and in plain Python;
and its layers (io, format, operations, lifecycle, then the table) only ever import downwards."""

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

BLOCKER = """
import sys, importlib.abc
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split('.')[0] in ('pyspark', 'sqlglot', 'py4j'):
            raise ImportError('blocked: ' + name)
sys.meta_path.insert(0, Block())
import pkgutil, importlib, paimon_core
mods = [m.name for m in pkgutil.walk_packages(paimon_core.__path__, 'paimon_core.')]
for m in mods:
    importlib.import_module(m)
print(len(mods))
"""


def test_core_imports_without_pyspark_and_sqlglot() -> None:
    proc = subprocess.run([sys.executable, "-c", BLOCKER], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout.strip()) >= 10


# paimon_core's layers, lowest first: a module may import its own layer and those below it.
LAYERS = ("exceptions", "io", "format", "operations", "lifecycle", "table")
TOP = {"table", "catalog"}


def _layer(module: str) -> int:
    """``paimon_core.format.schema`` -> the rank of ``format``; ``table``/``catalog`` are top."""
    part = module.split(".")[1]
    return LAYERS.index("table" if part in TOP else part)


def _runtime_imports(path: Path) -> Iterator[tuple[int, str]]:
    """Every ``paimon_core`` import that runs (module level or in a function), skipping
    ``if TYPE_CHECKING:`` blocks, which only annotations see."""
    tree = ast.parse(path.read_text())
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING"):
            skipped.update(id(n) for child in node.body for n in ast.walk(child))
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            package = (
                node.module == "paimon_core"
                or node.module.removeprefix("paimon_core.") in LAYERS[1:5]
            )
            names = [f"{node.module}.{a.name}" for a in node.names] if package else [node.module]
            for name in names:
                if name.startswith("paimon_core."):
                    yield node.lineno, name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("paimon_core."):
                    yield node.lineno, alias.name


def test_core_layers_never_import_upwards() -> None:
    core = Path(__file__).resolve().parent.parent / "paimon_core"
    modules = [p for p in core.rglob("*.py") if p.name != "__init__.py"]
    # A layer may hold sub-packages (operations/merge): a module's layer is its first folder.
    layers = {
        p.relative_to(core).parts[0] if len(p.relative_to(core).parts) > 1 else "paimon_core"
        for p in modules
    }
    assert layers == {"paimon_core", *LAYERS[1:5]}
    violations = []
    for path in modules:
        rel = path.relative_to(core.parent).with_suffix("")
        importer = ".".join(rel.parts)
        for line, imported in _runtime_imports(path):
            if _layer(imported) > _layer(importer):
                violations.append(f"{rel}.py:{line} imports {imported}")
    assert not violations, "\n".join(violations)


def test_the_layer_check_sees_an_upward_import(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from paimon_core.table import FileStoreTable\n"
        "def f():\n    from paimon_core.lifecycle import expire\n"
    )
    assert list(_runtime_imports(source)) == [(5, "paimon_core.lifecycle.expire")]


def _module_graph() -> dict[str, set[str]]:
    """paimon_core module -> the paimon_core modules it imports at run time."""
    root = Path(__file__).resolve().parent.parent
    graph: dict[str, set[str]] = {}
    for path in (root / "paimon_core").rglob("*.py"):
        if path.name == "__init__.py":
            continue
        name = ".".join(path.relative_to(root).with_suffix("").parts)
        deps = set()
        for _, imported in _runtime_imports(path):
            parts = imported.split(".")
            for size in (4, 3, 2):
                if root.joinpath(*parts[:size]).with_suffix(".py").exists():
                    deps.add(".".join(parts[:size]))
                    break
        graph[name] = deps - {name}
    return graph


def test_core_modules_import_each_other_without_cycles() -> None:
    graph = _module_graph()
    done: set[str] = set()

    def visit(module: str, trail: tuple[str, ...]) -> None:
        if module in trail:
            cycle = (*trail[trail.index(module) :], module)
            raise AssertionError("import cycle: " + " -> ".join(cycle))
        if module in done:
            return
        for dep in sorted(graph.get(module, ())):
            visit(dep, (*trail, module))
        done.add(module)

    for module in sorted(graph):
        visit(module, ())
    assert len(graph) >= 30


def _sql_ext_graph() -> dict[str, set[str]]:
    """Every import between `sql_ext` modules: module level, in functions and in
    `if TYPE_CHECKING:` blocks alike."""
    root = Path(__file__).resolve().parent.parent
    modules = {
        ".".join(p.relative_to(root).with_suffix("").parts).removesuffix(".__init__"): p
        for p in (root / "sql_ext").rglob("*.py")
    }
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    deps.add(target)
        graph[name] = deps
    return graph


def test_sql_ext_has_no_import_circle() -> None:
    graph = _sql_ext_graph()
    done: set[str] = set()

    def visit(module: str, trail: tuple[str, ...]) -> None:
        if module in trail:
            cycle = (*trail[trail.index(module) :], module)
            raise AssertionError("import circle: " + " -> ".join(cycle))
        if module in done:
            return
        for dep in sorted(graph.get(module, ())):
            visit(dep, (*trail, module))
        done.add(module)

    for module in sorted(graph):
        visit(module, ())
    assert "sql_ext.statements.routes" in graph


def test_statements_are_routed_by_the_route_table_alone() -> None:
    """The session and the in-process engine pick a statement's handler from `ROUTES` (no
    isinstance ladder over statement types), and no other module routes."""
    root = Path(__file__).resolve().parent.parent / "sql_ext"
    families = {
        "CallStatement",
        "TagStatement",
        "AlterHead",
        "DatabaseStatement",
        "ExplainStatement",
        "ShowStatement",
        "UseStatement",
        "DescribeStatement",
        "CreateStatement",
        "DropStatement",
        "InsertStatement",
        "RowLevelStatement",
        "ReadStatement",
    }
    for router in ("session.py", "metadata/engine.py"):
        tree = ast.parse((root / router).read_text())
        assert any(
            isinstance(n, ast.Call) and getattr(n.func, "id", None) == "route"
            for n in ast.walk(tree)
        ), router
        checked = {
            name.id
            for n in ast.walk(tree)
            if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "isinstance"
            for name in ast.walk(n.args[1])
            if isinstance(name, ast.Name)
        }
        assert not checked & families, (router, checked & families)
    users = [
        p.relative_to(root).as_posix()
        for p in root.rglob("*.py")
        if "import route\n" in p.read_text() or "import ROUTES" in p.read_text()
    ]
    assert sorted(users) == ["metadata/engine.py", "session.py"]
