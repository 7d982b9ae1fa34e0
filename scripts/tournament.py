"""Launch `tenk tournament` from a checkout: `python scripts/tournament.py --help` (the installed command is the same)."""

import sys

from tenk_env.cli.main import main

sys.exit(main(["tournament", *sys.argv[1:]]))
