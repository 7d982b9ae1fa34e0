"""tenk: Ten Thousand (Farkle, Zilch, Dix Mille) for reinforcement learning."""

from tenk_env.rules import PRESETS, Ruleset, RulesetError, load_ruleset
from tenk_env.tables import Tables, get_tables

__version__ = "0.1.0"
__all__ = ["PRESETS", "Ruleset", "RulesetError", "load_ruleset", "Tables", "get_tables"]
