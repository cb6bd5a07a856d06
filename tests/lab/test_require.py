"""Required capabilities on a real provider: what the device does not advertise fails the run, by name.

Which of srq, mw1 and mw2 the device advertises is read from the device itself (its attributes, as
the checks read them), not assumed per driver: the run must fail exactly for those it lacks. Three
inner runs of a 26-check slice (the last a usage error): 409 s on siw0 and 676 s on rxe0 under TCG on a
machine at load 25-36; a fraction of that idle.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_rdma.capabilities import lookup
from pytest_rdma.catalogue.index import Catalogue
from pytest_rdma.provider.device import DeviceUnderTest
from pytest_rdma.verbs import CATALOGUE

REPO = Path(__file__).resolve().parents[2]
SLICE = "ibv_create_srq or ibv_alloc_mw"
NAMES = ("srq", "mw1", "mw2")


def _lacks(device: str) -> dict[str, str]:
    """name -> the attribute and value that say the device does not advertise it ("" when it does)."""
    dut = DeviceUnderTest(device, Catalogue.of(CATALOGUE), 1, 0)
    try:
        return {name: next(filter(None, map(dut.missing, lookup(name).caps)), "") for name in NAMES}
    finally:
        dut.close()


def test_a_required_capability_fails_the_run_exactly_where_the_device_lacks_it(
    pytester: pytest.Pytester, device: str
) -> None:
    shutil.copy(REPO / "suites" / "test_verbs.py", pytester.path / "test_verbs.py")
    lacks = _lacks(device)
    base = ("--rdma-dev", device, "-k", SLICE)
    result = pytester.runpytest_subprocess(*base, "--rdma-require", ",".join(NAMES), "--rdma-json", "all.json")
    document = json.loads((pytester.path / "all.json").read_text())
    status = {entry["capability"]: entry for entry in document["profile"][device]}
    for name, missing in lacks.items():
        if missing:
            assert status[name]["status"] == "failed" and status[name]["why"] == missing, status[name]
            result.stdout.fnmatch_lines([f"*required, not advertised: {missing} ({name}, required by command line*"])
        else:
            assert status[name]["status"] in ("held", "not exercised"), status[name]
    assert status["srq"]["status"] != "not exercised"  # the slice reaches the SRQ either way
    failing = [r for r in document["results"] if r.get("required")]
    assert all(r["outcome"] == "unsupported" and r["pytest_outcome"] == "failed" for r in failing)
    assert result.ret == (pytest.ExitCode.TESTS_FAILED if any(lacks.values()) else pytest.ExitCode.OK)

    advertised = [name for name, missing in lacks.items() if not missing]
    if advertised:  # what it has, required alone, changes nothing
        held = pytester.runpytest_subprocess(*base, "--rdma-require", ",".join(advertised))
        assert held.ret == pytest.ExitCode.OK, held.stdout.str()[-3000:]
        held.stdout.fnmatch_lines([f"{device}: required capabilities:"])

    unknown = pytester.runpytest_subprocess(*base, "--rdma-require", "wings")
    assert unknown.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in unknown.stderr.lines if line.strip()]
    assert len(errors) == 1 and "unknown capability 'wings' (known: rc, uc, ud" in errors[0], errors
