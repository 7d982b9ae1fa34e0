"""tenk's processes run NumPy's BLAS on one thread (tenk_env.threads: threaded, its small
matrix products wait for busy cores)."""

import subprocess
import sys

CODE = """
from threadpoolctl import threadpool_info
from tenk_env.cli.main import main
before = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
assert main(["rules", "classic"]) == 0
after = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
print("BLAS", before, after)
"""


def test_the_command_line_runs_blas_on_one_thread(tmp_path):
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "TENK_CACHE": str(tmp_path / "cache"),
        "OPENBLAS_NUM_THREADS": "2",
    }
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    line = next(x for x in out.stdout.splitlines() if x.startswith("BLAS"))
    before, after = eval(line[5:].replace("] [", "], ["))
    assert before == [2] and after == [1]
