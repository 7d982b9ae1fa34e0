"""The `tenk` command: thin programs over tenk_env and agents."""
