"""The metadata core must stay free of Spark and sqlglot: it runs on executors and in plain Python."""

import subprocess
import sys

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
