"""Launch `tenk play` from a checkout: `python scripts/play.py --help` (the installed command is the same)."""

import sys

from tenk_env.cli.main import main

sys.exit(main(["play", *sys.argv[1:]]))
