"""Ray start-up for `tenk sweep` and `tenk tournament --ray`: a private local runtime, or a cluster.

Ray is an optional extra (``pip install -e ".[ray]"``); nothing here imports it at module
level, so `tenk` starts without it and names the extra when a command needs it.

* No address (and no ``RAY_ADDRESS`` in the environment): :func:`ray_session` starts a
  private local runtime sized to the machine (``num_cpus``: every core, or the option),
  with the dashboard off, every Ray process listening on 127.0.0.1 only, logs kept out of
  the terminal (``log_to_driver=False``, Ray's own logger at ERROR), its workers at the
  user's own priority (Ray's default lowers them), and shuts it down when the block ends,
  however it ends.
* ``--ray-address HOST:PORT`` (or ``RAY_ADDRESS``, or ``auto``): connects to a running
  cluster (``ray start --head`` on one machine, ``ray start --address HEAD:6379`` on the
  others) and leaves it running. The address is checked first (a TCP connection, a few
  seconds): Ray itself retries an unreachable address for minutes.
* A runtime this process already holds (``ray.is_initialized()``: a notebook, the tests)
  is used as it is and left running.

Binding to 127.0.0.1: ``ray.init`` replaces a loopback ``_node_ip_address`` with the
machine's outward address, and its servers then listen on every interface. Ray keeps
everything on the loopback address only when it believes it cannot form a cluster
(``ray._private.ray_constants.ENABLE_RAY_CLUSTER``, the ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER``
variable, read when Ray is imported), so the local runtime sets both for its lifetime and
puts them back after (checked in tests/training/test_ray.py: the node's address is 127.0.0.1).
"""

from __future__ import annotations

import logging
import os
import re
import signal
import socket
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

__all__ = [
    "EXTRA",
    "RayUnavailableError",
    "RayAddressError",
    "import_ray",
    "import_tune",
    "import_rliable",
    "ray_session",
    "RaySession",
    "RayExecutor",
    "resolve_address",
    "check_address",
]

#: how to install what these commands need
EXTRA = 'pip install -e ".[ray]"'
#: the local runtime's workers run at the user's own priority: Ray's default (15) lets any
#: other busy process on the machine starve the trials (a 4-trial sweep beside two busy
#: processes took 513 s instead of 49 s)
WORKER_NICENESS = 0
#: the variable that keeps a Ray node on the loopback address (see the module docstring)
_LOOPBACK_VAR = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def add_ray_arguments(parser: Any, address_help: str) -> None:
    """The options every command that runs on Ray takes."""
    parser.add_argument("--ray-address", metavar="HOST:PORT", help=address_help)
    parser.add_argument("--ray-cpus", type=int, metavar="N", help="CPUs of the local Ray runtime (default: every core)")


class RayUnavailableError(ValueError):
    """Ray (or rliable) is not installed; the message names the extra."""


class RayAddressError(ValueError):
    """A cluster address that is malformed or where no Ray head answers."""


def _missing(what: str, module: str, e: ImportError) -> RayUnavailableError:
    return RayUnavailableError(
        f"{what} needs {module}, which is not installed ({e}): install the optional extra with "
        f'`{EXTRA}` (from the repository root; or pip install -c constraints.txt -e ".[dev,ray]" '
        "for the tests too)"
    )


def import_ray(what: str = "this command") -> Any:
    """``ray``, or :class:`RayUnavailableError` naming the extra."""
    try:
        import ray
    except ImportError as e:
        raise _missing(what, "Ray", e) from None
    return ray


def import_tune(what: str = "tenk sweep") -> Any:
    """``ray.tune``, or :class:`RayUnavailableError` naming the extra."""
    import_ray(what)
    try:
        from ray import tune
    except ImportError as e:
        raise _missing(what, "Ray Tune (ray[tune])", e) from None
    return tune


def import_rliable(what: str = "tenk sweep report") -> tuple[Any, Any, Any]:
    """(``rliable.library``, ``rliable.metrics``, ``rliable.plot_utils``), or
    :class:`RayUnavailableError` naming the extra."""
    try:
        from rliable import library, metrics, plot_utils
    except ImportError as e:
        raise _missing(what, "rliable", e) from None
    except TypeError as e:  # arch < 8 (which rliable 1.2 requires) under pandas 3
        raise RayUnavailableError(
            f"{what}: rliable fails to import ({e}); its dependency arch 7 needs pandas < 3: "
            f"reinstall the extra with `{EXTRA}`, which pins it"
        ) from None
    return library, metrics, plot_utils


# --------------------------------------------------------------------------- addresses
def resolve_address(address: str | None) -> str | None:
    """The cluster address to use: the option, else ``RAY_ADDRESS``, else None (a local runtime)."""
    if address is not None and not address.strip():
        raise RayAddressError(
            "--ray-address is empty: give HOST:PORT of a Ray head (e.g. 10.0.0.5:6379), auto, "
            "or leave it out for a private local runtime"
        )
    return address or os.environ.get("RAY_ADDRESS") or None


_HOST_PORT = re.compile(r"^(?:ray://)?(\[[0-9a-fA-F:]+\]|[\w.-]+):(\d{1,5})$")


def check_address(address: str, timeout: float = 3.0) -> None:
    """Fail fast, naming the fix, when ``address`` is malformed or nothing listens there.
    ``auto`` (the cluster ``ray start`` left on this machine) is left to Ray."""
    if address == "auto":
        return
    m = _HOST_PORT.match(address)
    if not m or not 0 < int(m.group(2)) < 65536:
        raise RayAddressError(
            f"Ray address {address!r}: give HOST:PORT of the head node (e.g. 10.0.0.5:6379, the "
            "address `ray start --head` prints), ray://HOST:PORT, or auto"
        )
    host, port = m.group(1).strip("[]"), int(m.group(2))
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as e:
        raise RayAddressError(
            f"no Ray cluster answers at {address} ({e.strerror or e}): start one with `ray start --head "
            f"--node-ip-address HOST --port {port}` on the head node (and `ray start --address HOST:{port}` on "
            "the others), check the address and the firewall, or leave out --ray-address (and RAY_ADDRESS) "
            "for a private local runtime"
        ) from None


def _is_loopback(address: str) -> bool:
    m = _HOST_PORT.match(address)
    if not m:
        return False
    host = m.group(1).strip("[]")
    return host == "localhost" or host == "::1" or host.startswith("127.")


# --------------------------------------------------------------------------- the session
@dataclass
class RaySession:
    mode: str  #: "local" (started here, shut down at the end), "cluster" or "existing"
    address: str  #: the GCS address
    cpus: float  #: CPUs the cluster offers

    def describe(self) -> str:
        what = {
            "local": "a private local Ray runtime (127.0.0.1 only, dashboard off)",
            "cluster": "the Ray cluster",
            "existing": "the Ray runtime this process holds",
        }[self.mode]
        return f"{what} at {self.address}, {self.cpus:g} CPUs"


@contextmanager
def _loopback_only(ray_constants: Any | None) -> Iterator[None]:
    old_env = os.environ.get(_LOOPBACK_VAR)
    old_const = getattr(ray_constants, "ENABLE_RAY_CLUSTER", None)
    os.environ[_LOOPBACK_VAR] = "0"
    if ray_constants is not None:
        ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        if old_env is None:
            os.environ.pop(_LOOPBACK_VAR, None)
        else:
            os.environ[_LOOPBACK_VAR] = old_env
        if ray_constants is not None and old_const is not None:
            ray_constants.ENABLE_RAY_CLUSTER = old_const


@contextmanager
def _keep_sigterm_handler() -> Iterator[None]:
    """Put back the Python SIGTERM handler (`tenk`'s, which ends a command with one line) that
    ``ray.init`` replaces with its own, which dumps a C++ stack trace and leaves the command
    no chance to shut Ray down and report."""
    old = signal.getsignal(signal.SIGTERM)
    try:
        yield
    finally:
        if callable(old) and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, old)


@contextmanager
def ray_session(
    address: str | None = None,
    *,
    num_cpus: int | None = None,
    what: str = "this command",
    say: Callable[[str], None] | None = None,
) -> Iterator[RaySession]:
    """Ray, connected for the duration of the block (see the module docstring).

    ``address``: a cluster's HOST:PORT (None: ``RAY_ADDRESS``, else a private local runtime of
    ``num_cpus`` CPUs, default every core). ``say`` gets one line naming what it connected to."""
    address = resolve_address(address)
    if num_cpus is not None and (isinstance(num_cpus, bool) or not isinstance(num_cpus, int) or num_cpus < 1):
        raise ValueError(f"--ray-cpus {num_cpus!r}: give a whole number of CPUs, at least 1")
    if address is not None:
        check_address(address)
    ray = import_ray(what)
    if ray.is_initialized():
        yield _session(ray, "existing", say)
        return
    quiet = dict(include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR, namespace="tenk")
    if address is not None:
        import ray._private.ray_constants as ray_constants

        # A head on this machine's loopback address (`ray start --head --node-ip-address
        # 127.0.0.1`): ray.init would swap 127.0.0.1 for the outward address, where nothing
        # listens, and retry for minutes; the loopback switch keeps it on 127.0.0.1.
        local = _is_loopback(address)
        try:
            with _loopback_only(ray_constants) if local else nullcontext(), _keep_sigterm_handler():
                ray.init(address=address, **quiet)
        except ConnectionError as e:
            raise RayAddressError(f"cannot join the Ray cluster at {address}: {e}") from None
        mode = "cluster"
    else:
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        import ray._private.ray_constants as ray_constants

        with _loopback_only(ray_constants), _keep_sigterm_handler():
            # "local": a new runtime even where `ray start` left a cluster on this machine,
            # which ray.init() with no address would join
            ray.init(
                address="local",
                num_cpus=num_cpus or os.cpu_count() or 1,
                _node_ip_address="127.0.0.1",
                _system_config={"worker_niceness": WORKER_NICENESS},
                **quiet,
            )
        mode = "local"
    try:
        yield _session(ray, mode, say)
    finally:
        # a cluster keeps running (this only disconnects); a local runtime ends here
        ray.shutdown()


def _session(ray: Any, mode: str, say: Callable[[str], None] | None) -> RaySession:
    ctx = ray.get_runtime_context()
    s = RaySession(mode, str(ctx.gcs_address), float(ray.cluster_resources().get("CPU", 0)))
    if say:
        say(f"using {s.describe()}")
    return s


# --------------------------------------------------------------------------- tasks
class RayExecutor:
    """Runs jobs as Ray tasks (the executor :func:`tenk_env.evaluation.match.run_tasks` takes):
    ``run(fn, jobs, on_result)`` calls ``on_result(fn(job))`` here as each job finishes, in any
    order. ``fn`` must be a module-level function the workers can import (the package is
    installed on every node); Ray retries a job whose worker died. Ctrl-C or an error cancels
    the jobs not yet finished."""

    def __init__(self, cpus_per_job: float = 1.0):
        self.cpus = cpus_per_job

    def run(self, fn: Callable[[Any], Any], jobs: Sequence[Any], on_result: Callable[[Any], None]) -> None:
        if not jobs:
            return
        ray = import_ray()
        remote = ray.remote(num_cpus=self.cpus, max_retries=3)(fn)
        pending = [remote.remote(job) for job in jobs]
        try:
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                for ref in done:
                    on_result(ray.get(ref))
        except BaseException:
            for ref in pending:
                ray.cancel(ref, force=True)
            raise
