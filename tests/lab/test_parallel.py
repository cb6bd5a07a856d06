"""Parallel and restarted runs in the lab: xdist changes no outcome, a crash costs one result,
and a run leaves the kernel's resource counts where it found them.

Each test runs an inner pytest session (a subprocess, as the lab does) on the device the
outer run was given (`pytest-rdma lab` runs once per device; rxe0 when none is given).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections import Counter
from pathlib import Path

import pytest
from test_robustness import CRASH_TEST  # the same crashing checks as the crash test there

from pytest_rdma.expectations import SHIPPED_DIR, load, vm_ending_variants
from pytest_rdma.lab.guest import RunOutput, chooses_xdist, run_restarting, xdist_args
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
KERNEL_FAULTS = vm_ending_variants(load([SHIPPED_DIR]))
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


def test_the_labs_way_of_running_makes_a_crash_cost_one_result(pytester: pytest.Pytester, device: str) -> None:
    # As the lab's runner runs a device's checks: its arguments about xdist (none chosen by the user: no
    # xdist), and its restart of pytest when a check kills it (guest.run_restarting, lab/crash.py).
    pytester.makepyfile(test_crash=CRASH_TEST)
    run_dir = pytester.mkdir("results")
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--rdma-dev", device, *xdist_args([])]
    argv += [f"--rdma-json={run_dir}/results.json"]
    log = pytester.path / "lab-output.txt"
    code = run_restarting(RunOutput(log), argv, str(pytester.path), dict(os.environ), run_dir, device)
    output = log.read_text()
    assert code == pytest.ExitCode.TESTS_FAILED, output[-3000:]
    assert "Fatal Python error: Segmentation fault" in output  # a real SIGSEGV, faulthandler's report of it
    assert {nodeid.split("::")[-1]: outcome for nodeid, outcome in outcomes(run_dir / "results.json").items()} == {
        f"test_before[{device}]": "conforms",
        f"test_segfaults[{device}]": "crash",
        f"test_after[{device}]": "conforms",
        f"test_last[{device}]": "conforms",
    }, output[-3000:]


def test_the_lab_runs_its_checks_in_pytests_own_process(request: pytest.FixtureRequest) -> None:
    # This very session: without xdist, unless the arguments the user gave the lab chose about xdist (a crash
    # costs one check all the same: the runner starts pytest again for the rest).
    if "PYTEST_RDMA_LAB_MARKS" not in os.environ:
        pytest.skip("only the lab command (pytest-rdma lab) sets the lab's defaults")
    plan = json.loads((Path(os.environ["PYTEST_RDMA_LAB_MARKS"]) / "lab-plan.json").read_text())
    if chooses_xdist(plan["pytest_args"]):
        pytest.skip(f"the lab's pytest arguments choose about xdist: {plan['pytest_args']}")
    assert "PYTEST_XDIST_WORKER" not in os.environ, "the lab ran its checks in an xdist worker"
    assert not request.config.pluginmanager.has_plugin("xdist"), "the lab's pytest loaded xdist, unused"


def test_a_broad_run_leaves_the_kernel_counts_where_it_found_them(pytester: pytest.Pytester, device: str) -> None:
    suite_into(pytester)
    before = netlink.resource_counts()[device]
    ran = run_slice(pytester, device, "broad", "-k", BROAD_SLICE, *xdist_args([]))
    after = netlink.resource_counts()[device]
    assert len(ran) >= 200, f"the slice shrank to {len(ran)} checks"
    assert after == before, f"{device}: before the run {before}, after it {after}"
    print(f"{len(ran)} checks: {dict(Counter(ran.values()))}; {device} counts before and after: {after}")
