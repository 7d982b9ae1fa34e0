"""Launch `tenk sweep` from a checkout: `python scripts/sweep.py --help` (the installed command is the same)."""

import sys

from tenk_env.cli.main import main

sys.exit(main(["sweep", *sys.argv[1:]]))
