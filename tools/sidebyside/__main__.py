"""python3 -m tools.sidebyside (from the repository's root): the same as
python3 scripts/sidebyside.py."""

import sys

from .cli import main

sys.exit(main(sys.argv[1:], prog="python3 -m tools.sidebyside"))
