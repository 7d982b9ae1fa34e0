"""tenk: Ten Thousand (Farkle, Zilch, Dix Mille) for reinforcement learning."""

from tenk_env.game import Game, IllegalMoveError, Phase
from tenk_env.rules import PRESETS, Ruleset, RulesetError, load_ruleset
from tenk_env.tables import Tables, get_tables

__version__ = "0.1.0"
__all__ = [
    "Game",
    "IllegalMoveError",
    "Phase",
    "PRESETS",
    "Ruleset",
    "RulesetError",
    "load_ruleset",
    "Tables",
    "get_tables",
]

# ---------------------------------------------------------------------- environments
# gymnasium.make("TenThousand-v0", ...) works once tenk_env is imported. The env classes
# themselves load lazily (PEP 562), so `import tenk_env` does not pull in PettingZoo.
import gymnasium as _gym

if "TenThousand-v0" not in _gym.registry:
    _gym.register(
        id="TenThousand-v0",
        entry_point="tenk_env.env:TenThousandEnv",
        vector_entry_point="tenk_env.vector.envs:TenThousandVectorEnv",
    )

_LAZY = {"TenThousandEnv": "tenk_env.env", "TenThousandAEC": "tenk_env.aec"}
__all__ += list(_LAZY)


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'tenk_env' has no attribute {name!r}")
