"""Launch `tenk train` from a checkout: `python scripts/train.py --help` (the installed command is the same)."""

import sys

from tenk_env.cli.main import main

sys.exit(main(["train", *sys.argv[1:]]))
