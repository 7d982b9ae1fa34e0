"""One BLAS thread for NumPy in tenk's processes.

tenk's NumPy matrix products are small (an afterstate value net over a turn's few hundred
end positions, a NumPy PPO actor over a batch of observations). Threaded, each product waits
for every BLAS thread, and on a busy machine for a free core: on the 2-core machine, with other
work running, a [128, 128] value net over 250 positions took 11.8 ms with OpenBLAS's threads
and 2.8 ms with one. Processes that want several cores run several workers instead.
"""

from __future__ import annotations

from threadpoolctl import threadpool_limits

__all__ = ["one_blas_thread"]

_DONE = False


def one_blas_thread() -> None:
    """Limit NumPy's BLAS to one thread for the rest of this process (once; later calls are free)."""
    global _DONE
    if not _DONE:
        threadpool_limits(1, user_api="blas")
        _DONE = True
