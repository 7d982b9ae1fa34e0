"""The wheel holds one import package, ``tenk_env``, with the zoo and the shipped configs in it.

Before the move into ``tenk_env`` a wheel installed top-level ``agents`` and ``scripts``
packages (names that clash with other projects) and left the zoo's weights and the configs
out, so ``zoo:NAME`` and ``tenk train --config ppo_demo`` worked only from a checkout.
"""

from __future__ import annotations

import configparser
import importlib.util
import shutil
import subprocess
import sys
import zipfile

from tenk_env.io import DISTRIBUTION

from support import ROOT


def _can_build_here() -> bool:
    # without build isolation pip uses this environment's setuptools, which must meet
    # pyproject.toml's build requirement; otherwise pip fetches one (needs the network)
    if importlib.util.find_spec("setuptools") is None:
        return False
    import setuptools

    return int(setuptools.__version__.split(".")[0]) >= 68


def test_wheel_holds_tenk_env_only_with_its_data(tmp_path):
    had_build = (ROOT / "build").exists()
    cmd = [sys.executable, "-m", "pip", "wheel", ".", "--no-deps", "-w", str(tmp_path)]
    if _can_build_here():
        cmd.append("--no-build-isolation")
    try:
        out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    finally:
        if not had_build:  # setuptools builds in the checkout; leave it as it was
            shutil.rmtree(ROOT / "build", ignore_errors=True)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    # the distribution is tenk-env ("tenk" on PyPI is another project's), its wheel tenk_env-*
    (wheel,) = tmp_path.glob("tenk_env-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        (dist_info,) = {n.split("/")[0] for n in names if n.split("/")[0].endswith(".dist-info")}
        record = z.read(f"{dist_info}/RECORD").decode()
        entry_points = z.read(f"{dist_info}/entry_points.txt").decode()
        metadata = z.read(f"{dist_info}/METADATA").decode()
    assert f"Name: {DISTRIBUTION}\n" in metadata and dist_info.startswith("tenk_env-")

    recorded = [line.split(",")[0] for line in record.splitlines() if line]
    assert sorted(recorded) == sorted(names)
    # a stale build/ folder from an older layout would show up here too: remove it
    assert {n.split("/")[0] for n in names} == {"tenk_env", dist_info}
    for path in (
        "tenk_env/zoo/classic_ppo_demo/agent.yaml",
        "tenk_env/zoo/classic_ppo_demo/weights.npz",
        "tenk_env/configs/ppo_demo.yaml",
        "tenk_env/configs/rules/classic.yaml",
    ):
        assert path in names, path

    eps = configparser.ConfigParser()
    eps.optionxform = str  # entry point names are case-sensitive
    eps.read_string(entry_points)
    targets = {f"{g}:{k}": v for g in eps.sections() for k, v in eps[g].items()}
    assert targets["console_scripts:tenk"] == "tenk_env.cli.main:main"
    assert "tenk.agents:zoo" in targets and "tenk.batched:tenk" in targets
    outside = {k: v for k, v in targets.items() if not v.startswith("tenk_env.")}
    assert not outside


def test_every_subpackage_is_listed_for_the_wheel():
    """pyproject.toml lists the packages explicitly (two are mapped from agents/ and configs/):
    a new subpackage left off the list would be missing from every wheel."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "tenk_env").rglob("__init__.py")}
    assert found <= listed, f"add to [tool.setuptools] packages in pyproject.toml: {sorted(found - listed)}"
    assert {"tenk_env.zoo", "tenk_env.configs"} <= listed
