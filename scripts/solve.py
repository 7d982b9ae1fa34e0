"""Launch `tenk solve` from a checkout: `python scripts/solve.py --help` (the installed command is the same)."""

import sys

from tenk_env.cli.main import main

sys.exit(main(["solve", *sys.argv[1:]]))
