"""A deviation's reproducers run outside the suite, on the provider that deviated.

Per lab driver, a data-path check whose deviation is known (and waived): its C program is built and
run by the suite (`--rdma-confirm`) and must say REPRODUCED; its Python script, run on its own as a
user would, must replay every call without an error of its own. On siw the pair connects through
rdma_cm, whose objects come back through out pointers and whose sockaddr stands in for a struct
sockaddr: three faults of the Python replay hid there (an IntEnum written as its repr, the out
pointer read as a number, the returned object without its type), each a crash before the verdict.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# Per lab device: a -k slice with a waived data-path deviation, and the exit statuses its Python
# script may give (0 reproduced; 3 an observation Python cannot judge alone, such as placed data).
SLICES = {
    "rxe0": ("bind-mw-range-only and type-2 and IBV_WR_RDMA_WRITE and outside", (0,)),
    "siw0": ("access-error-terminates and IBV_WR_RDMA_READ", (0, 3)),
}


@pytest.mark.parametrize("device", sorted(SLICES))
def test_each_deviations_reproducers_run_in_c_and_in_python(pytester: pytest.Pytester, device: str) -> None:
    selection, python_exits = SLICES[device]
    results, reproducers = pytester.path / "results.json", pytester.path / "reproducers"
    # Named: the lab's own run may hand its reproducers directory down through the environment.
    ran = pytester.runpytest_subprocess(
        str(REPO / "suites"),
        *("--rdma-dev", device, "--rdma-json", str(results), "--rdma-reproducers", str(reproducers)),
        *("--rdma-confirm", "-k", selection),
    )
    assert ran.ret == pytest.ExitCode.OK, ran.stdout.str()[-3000:]
    records = [r for r in json.loads(results.read_text())["results"] if r.get("reproducer")]
    assert records, f"the slice should deviate on {device}: {selection}"
    for record in records:
        reproducer = record["reproducer"]
        assert reproducer["confirmed"]["verdict"] == "reproduced", (record["stable_id"], reproducer["confirmed"])
        script = reproducers / reproducer["python"]
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=False)
        assert "Traceback" not in done.stderr, f"{script}:\n{done.stderr[-3000:]}"
        assert done.returncode in python_exits, f"{script} exited {done.returncode}:\n{done.stdout[-3000:]}"
