"""Print README.md's set-up commands, one per line: install-and-main-job, then tests.

CI runs them verbatim, so README cannot drift from what is proven on a fresh machine.
"""

import pathlib
import re
import sys

readme = pathlib.Path(__file__).resolve().parent.parent / "README.md"
section = readme.read_text().split("## Set up a fresh machine", 1)[1].split("\n## ", 1)[0]
commands = [block.strip() for block in re.findall(r"```sh\n(.*?)```", section, re.S)]
if len(commands) != 2 or any("\n" in c for c in commands):
    sys.exit(
        f"README.md: expected two one-line sh blocks under 'Set up a fresh machine': {commands}"
    )
print("\n".join(commands))
