"""The single-game envs' dice: faces drawn from the env's ``np_random``, a block at a time.

Both engines of :class:`~tenk_env.env.TenThousandEnv` and :class:`~tenk_env.aec.TenThousandAEC`
take their dice from here, in the same order from the same generator calls, so the same
seed deals the same game on either: :class:`DiceStream` hands faces to the Python turn
machine, :class:`FaceBuffer` lays the same faces out in an array the compiled turn machine
reads (:func:`tenk_env.vector.nb_backend.k_run`'s stream modes).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["DiceStream", "FaceBuffer", "BLOCK", "check_script"]

#: faces drawn per generator call: one ``integers(1, 7, size=k)`` call per roll costs more
#: than the rest of a game step
BLOCK = 1024


def check_script(script: Sequence[int]) -> list[int]:
    faces = [int(f) for f in script]
    if any(f < 1 or f > 6 for f in faces):
        raise ValueError(f"scripted dice {list(script)!r}: every face must be 1 to 6")
    return faces


class DiceStream:
    """Dice faces drawn from a generator, :data:`BLOCK` at a time, handed out in order.

    Every face is a function of the generator's seed (an env restarts the stream on every
    seeded reset). Scripted faces, when given, are used first: tests and tutorials can fix
    the dice of a game.
    """

    __slots__ = ("_rng", "_buf", "_pos", "_script")
    BLOCK = BLOCK

    def __init__(self, rng: np.random.Generator, script: Sequence[int] = ()):
        self._rng = rng
        self._buf: list[int] = []
        self._pos = 0
        self._script = check_script(script)

    def draw(self, k: int) -> list[int]:
        if self._script:
            if len(self._script) < k:
                # A roll never mixes scripted and random faces: that would make the script's
                # meaning depend on how many dice the next roll happens to need.
                self._script = []
            else:
                out, self._script = self._script[:k], self._script[k:]
                return out
        pos = self._pos
        end = pos + k
        if end > len(self._buf):
            self._buf = self._buf[pos:] + self._rng.integers(1, 7, size=BLOCK).tolist()
            pos, end = 0, k
        self._pos = end
        return self._buf[pos:end]


class FaceBuffer:
    """:class:`DiceStream`'s faces as arrays: ``faces`` holds the script, then the random
    faces not yet used; ``cursor`` is (random start, random end, script position, script
    end), moved by the compiled kernel as it rolls. :meth:`refill` is called when a roll
    needs more random faces than are left, which is exactly when ``DiceStream.draw`` draws
    its next block, so both take the same faces from the same generator calls."""

    __slots__ = ("rng", "faces", "cursor", "_s")

    def __init__(self, rng: np.random.Generator, script: Sequence[int] = ()):
        s = np.asarray(check_script(script), np.int64)
        self.rng = rng
        self._s = len(s)
        self.faces = np.zeros(self._s + 2 * BLOCK, np.int64)
        self.faces[: self._s] = s
        self.cursor = np.array([self._s, self._s, 0, self._s], np.int64)

    def refill(self) -> None:
        f, c, s = self.faces, self.cursor, self._s
        left = f[c[0] : c[1]].copy()
        f[s : s + len(left)] = left
        f[s + len(left) : s + len(left) + BLOCK] = self.rng.integers(1, 7, size=BLOCK)
        c[0], c[1] = s, s + len(left) + BLOCK
