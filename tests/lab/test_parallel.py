"""Parallel and isolated runs in the lab: xdist changes no outcome, a crash costs one result,
and a run leaves the kernel's resource counts where it found them.

Each test runs an inner pytest session (a subprocess, as the lab does) on the device the
outer run was given (`pytest-rdma lab` runs once per device; rxe0 when none is given).
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from pathlib import Path

import pytest
from test_robustness import CRASH_TEST  # the same crashing checks as the crash test there

from pytest_rdma.expectations import SHIPPED_DIR, load
from pytest_rdma.lab.guest import chooses_xdist, isolation_args
from pytest_rdma.provider import netlink

REPO = Path(__file__).resolve().parents[2]

# About 100 generated checks with conforming, unsupported and waived (deviating, with the shipped
# expectations) outcomes on rxe and siw: QP creation with every attribute, flow steering and the
# device's limits.
PARALLEL_SLICE = "ibv_create_qp_ex or ibv_create_flow or (ibv_query_device and not ibv_query_device_ex)"
# Every verb family (device, pd, cq, srq, mr, mw, qp, flow, the data path's pairs) but the modify_qp
# transition checks, which make the same objects as the create_qp ones: about 860 checks.
# A check the shipped waivers record as ending the VM (an Oops, BUG, panic or hang: observed = { kernel_fault = ...
# }) would end this test's VM too and cost it the whole lab step; the kernel matrix runs those (README, Interrupted
# runs): here they are left out, as the lab's own tests test the plugin, not the kernel.
VM_ENDING = ("oops", "bug", "panic", "hang")
KERNEL_FAULTS = sorted(
    {w.pattern.split("[", 1)[1].rstrip("]") for w in load([SHIPPED_DIR]).all() if w.waived_kernel_fault in VM_ENDING}
)
BROAD_SLICE = " and ".join(["not test_ibv_modify_qp", *(f"not {variant}" for variant in KERNEL_FAULTS)])


def suite_into(pytester: pytest.Pytester) -> None:
    shutil.copy(REPO / "suites" / "test_verbs.py", pytester.path / "test_verbs.py")


def outcomes(path: Path) -> dict[str, str]:
    """Node id -> outcome, from an inner run's --rdma-json file."""
    return {r["nodeid"]: r["outcome"] for r in json.loads(path.read_text())["results"]}


def run_slice(pytester: pytest.Pytester, device: str, name: str, *args: str) -> dict[str, str]:
    out = pytester.path / f"{name}.json"
    result = pytester.runpytest_subprocess("--rdma-dev", device, f"--rdma-json={out}", *args)
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), result.stdout.str()[-3000:]
    return outcomes(out)


def test_two_workers_give_the_same_outcomes_as_a_serial_run(pytester: pytest.Pytester, device: str) -> None:
    suite_into(pytester)
    serial = run_slice(pytester, device, "serial", "-p", "no:xdist", "-k", PARALLEL_SLICE)
    parallel = run_slice(pytester, device, "parallel", "-n", "2", "-k", PARALLEL_SLICE)
    assert len(serial) >= 60, f"the slice shrank to {len(serial)} checks"
    kinds = set(serial.values())
    assert len(kinds) >= 2, f"only {kinds}: the comparison would say little"
    differ = {
        nodeid: (serial.get(nodeid), parallel.get(nodeid))
        for nodeid in set(serial) | set(parallel)
        if serial.get(nodeid) != parallel.get(nodeid)
    }
    assert not differ, f"(serial, -n 2) outcomes differ: {differ}"
    print(f"{len(serial)} checks, same outcomes serial and -n 2: {dict(Counter(serial.values()))}")


def test_lab_default_arguments_make_a_crash_cost_one_result(pytester: pytest.Pytester, device: str) -> None:
    # The arguments the lab adds when the user's own do not choose about xdist.
    lab_args = isolation_args([])
    pytester.makepyfile(test_crash=CRASH_TEST)
    out = pytester.path / "results.json"
    result = pytester.runpytest_subprocess("--rdma-dev", device, f"--rdma-json={out}", *lab_args)
    result.assert_outcomes(passed=3, failed=1)
    assert {nodeid.split("::")[-1]: outcome for nodeid, outcome in outcomes(out).items()} == {
        f"test_before[{device}]": "conforms",
        f"test_segfaults[{device}]": "crash",
        f"test_after[{device}]": "conforms",
        f"test_last[{device}]": "conforms",
    }


def test_the_lab_runs_its_checks_in_an_xdist_worker() -> None:
    # This very session: the lab's runner added crash isolation to the command line, unless
    # the arguments the user gave the lab already chose about xdist.
    if "PYTEST_RDMA_LAB_MARKS" not in os.environ:
        pytest.skip("only the lab command (pytest-rdma lab) sets the lab's defaults")
    plan = json.loads((Path(os.environ["PYTEST_RDMA_LAB_MARKS"]) / "lab-plan.json").read_text())
    if chooses_xdist(plan["pytest_args"]):
        pytest.skip(f"the lab's pytest arguments choose about xdist: {plan['pytest_args']}")
    assert "PYTEST_XDIST_WORKER" in os.environ, "the lab ran pytest without crash isolation (-n 1)"


def test_a_broad_run_leaves_the_kernel_counts_where_it_found_them(pytester: pytest.Pytester, device: str) -> None:
    suite_into(pytester)
    before = netlink.resource_counts()[device]
    ran = run_slice(pytester, device, "broad", "-k", BROAD_SLICE, *isolation_args([]))
    after = netlink.resource_counts()[device]
    assert len(ran) >= 200, f"the slice shrank to {len(ran)} checks"
    assert after == before, f"{device}: before the run {before}, after it {after}"
    print(f"{len(ran)} checks: {dict(Counter(ran.values()))}; {device} counts before and after: {after}")
