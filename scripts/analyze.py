"""Launch `tenk analyze` from a checkout: `python scripts/analyze.py --help` (the installed command is the same)."""

import sys

from tenk_env.cli.main import main

sys.exit(main(["analyze", *sys.argv[1:]]))
