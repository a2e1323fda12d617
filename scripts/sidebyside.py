#!/usr/bin/env python3
"""Run dbperf and the reference client iibench.py side by side (issue 9): a launcher for the
package tools/sidebyside/, whose docstring (tools/sidebyside/__init__.py) tells what it
measures and how. Usage, from the repository's root, after `make build`:

    python3 scripts/sidebyside.py --iibench /path/to/iibench.py [--out sidebyside] ...
"""

import os
import subprocess  # noqa: F401  (scripts/sysbench_sidebyside.py uses sbs.subprocess)
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tools.sidebyside.children import run_measured, tail  # noqa: E402,F401
from tools.sidebyside.cli import main, on_signal  # noqa: E402,F401
from tools.sidebyside.common import EngineFailed, Interrupted, log  # noqa: E402,F401
from tools.sidebyside.rounds import dbperf_step  # noqa: E402,F401
from tools.sidebyside.servers import Server, parse_dsn, settle  # noqa: E402,F401
# (the names above are the helpers scripts/sysbench_sidebyside.py takes from this module)

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
