"""How tenk prints a regret: one unit in every command, table, log and CSV file.

A regret is the win probability an agent gives away per game against perfect play (a
probability between 0 and 1, as the solvers and the JSON result files hold it). Everything
a person reads prints it in percentage points of win probability per game, "pp/game", with
two decimals: a regret of 0.0187 prints as ``1.87``, under a header that names the unit, so a
0.0187 beside a 1.87 (a 100x misreading) cannot happen.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["REGRET_UNIT", "REGRET_HEADER", "REGRET_COLUMN", "pp", "regret_text", "pp_interval"]

#: the unit, as a table header or a sentence names it
REGRET_UNIT = "pp/game"
#: a table column of regrets
REGRET_HEADER = f"regret ({REGRET_UNIT})"
#: a CSV column of regrets written for people to read (the same unit, in an identifier)
REGRET_COLUMN = "regret_pp_per_game"


def pp(x: float, digits: int = 2) -> str:
    """A probability (0.0187) as percentage points ("1.87"); "n/a" for NaN."""
    return "n/a" if x is None or math.isnan(x) else f"{100 * x:.{digits}f}"


def pp_interval(ci: Sequence[float] | None, digits: int = 2, note: str | None = None) -> str:
    """An interval of probabilities as percentage points, "[1.70, 2.04]"; when there is none,
    "(no interval)", or ``note`` in parentheses: why the sample gives none."""
    if ci is None or len(ci) != 2 or any(c is None or math.isnan(c) for c in ci):
        return f"({note})" if note else "(no interval)"
    return f"[{pp(ci[0], digits)}, {pp(ci[1], digits)}]"


def regret_text(x: float, ci: Sequence[float] | None = None, digits: int = 2, note: str | None = None) -> str:
    """A regret with its unit, and its interval when given: "1.87 pp/game [1.70, 2.04]"
    (``note``: what stands for an interval that is not given, see :func:`pp_interval`)."""
    out = f"{pp(x, digits)} {REGRET_UNIT}"
    return out if ci is None else f"{out} {pp_interval(ci, digits, note)}"
