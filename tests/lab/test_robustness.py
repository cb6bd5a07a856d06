"""Robustness in the lab: leaks, kernel faults, crashes and hangs each cost one check, named.

Each test runs an inner pytest session against the lab device the outer run was given
(`pytest-rdma lab` runs once per device; rxe0 when none is given) and checks that the fault
is attributed to the check that caused it and to no other.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pytest_rdma.guard.findings import KERNEL_LOG_FIELD, LEAK_FIELD
from pytest_rdma.provider import netlink
from pytest_rdma.provider.identity import sysfs_devices


@pytest.fixture(scope="module")
def device(pytestconfig: pytest.Config) -> str:
    chosen = pytestconfig.getoption("rdma_dev") or ["rxe0"]
    name = chosen[0]
    if name not in sysfs_devices():
        pytest.fail(f"these tests run in the lab (pytest-rdma lab -- tests/lab/test_robustness.py); "
                    f"no {name} here")
    return name


def teardown_reports(result: pytest.RunResult) -> dict[str, Any]:
    """Test name -> its teardown report, from an in-process inner run."""
    reports = result.reprec.getreports("pytest_runtest_logreport")  # type: ignore[attr-defined]
    return {r.nodeid.split("::")[-1].split("[")[0]: r for r in reports if r.when == "teardown"}


def json_records(path: Path) -> dict[str, dict[str, Any]]:
    """Test name -> its result record, from the inner run's --rdma-json file."""
    document = json.loads(path.read_text())
    return {r["test"]: r for r in document["results"]}


LEAK_TEST = """
from pyverbs.pd import PD

KEPT = []  # a reference kept past the check: the PD is never freed while the session lives

def test_clean_first(rdma_pd):
    assert rdma_pd.handle is not None

def test_keeps_a_pd(rdma_dut):
    KEPT.append(PD(rdma_dut.ctx))

def test_clean_after(rdma_resources):
    assert rdma_resources.pd().handle is not None
"""


def test_leaked_pd_is_caught_and_blamed_on_its_check(pytester: pytest.Pytester, device: str) -> None:
    pytester.makepyfile(test_leak=LEAK_TEST)
    before = netlink.resource_counts()[device]
    result = pytester.runpytest("--rdma-dev", device, "--rdma-leaks=fail", "-p", "no:xdist")
    # The check itself passes; its teardown errors: one result lost to the leak, no more.
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines([f"*ResourceLeak: {device}: +1 pd still counted by the kernel after*"])
    teardowns = teardown_reports(result)
    assert teardowns["test_keeps_a_pd"].__dict__[LEAK_FIELD] == {device: {"pd": 1}}
    # The first check opened the session's context: that is not its leak.
    assert LEAK_FIELD not in teardowns["test_clean_first"].__dict__
    assert LEAK_FIELD not in teardowns["test_clean_after"].__dict__
    assert netlink.resource_counts()[device] == before


OVERLAP_TEST = """
import time
from pathlib import Path

from pyverbs.pd import PD

MARKS = Path({marks!r})
KEPT = []


def wait_for(name):
    deadline = time.monotonic() + 120
    while not (MARKS / name).exists():
        assert time.monotonic() < deadline, f"{{name}} never came: the two checks did not run side by side"
        time.sleep(0.05)


def test_busy_meanwhile(rdma_pd):
    # Holds a PD while the other worker's check leaks one, and ends only after that leak:
    # device-wide counts would blame this check for the other's objects.
    (MARKS / "busy").touch()
    wait_for("leaked")


def test_keeps_a_pd(rdma_dut):
    wait_for("busy")
    KEPT.append(PD(rdma_dut.ctx))
    (MARKS / "leaked").touch()
"""


def test_leak_under_two_workers_is_blamed_on_its_check_only(pytester: pytest.Pytester, device: str) -> None:
    # Two xdist workers on one device, their checks forced to overlap (xdist deals two tests to two
    # workers round robin): only the check that leaked is blamed, not the one running beside it.
    pytester.makepyfile(test_leak=OVERLAP_TEST.format(marks=str(pytester.path)))
    out = pytester.path / "results.json"
    result = pytester.runpytest_subprocess("--rdma-dev", device, "--rdma-leaks=fail", "-n", "2",
                                           f"--rdma-json={out}")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines([f"*ERROR at teardown of test_keeps_a_pd?{device}?*",
                                 f"E*ResourceLeak: {device}: +1 pd still counted by the kernel after*"])
    assert {name: r["outcome"] for name, r in json_records(out).items()} == {
        "test_busy_meanwhile": "conforms", "test_keeps_a_pd": "error"}


def test_report_mode_lists_the_leak_without_failing(pytester: pytest.Pytester, device: str) -> None:
    pytester.makepyfile(test_leak=LEAK_TEST)
    result = pytester.runpytest("--rdma-dev", device, "--rdma-leaks=report", "-p", "no:xdist")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["*rdma guards: leaks and kernel faults*",
                                 f"test_leak.py::test_keeps_a_pd?{device}?: leak: {device}: +1 pd"])


KERNEL_TEST = """
import os

def test_quiet_before(rdma_dut):
    pass

def test_logs_a_kernel_warning(rdma_dut):
    # Root may write to /dev/kmsg; the line becomes a kernel log record like any other.
    with open("/dev/kmsg", "w") as kmsg:
        kmsg.write("WARNING: CPU: 0 PID: %d at pytest-rdma guard test {nonce}\\n" % os.getpid())

def test_quiet_after(rdma_dut):
    pass
"""


@pytest.mark.rdma_kernel_log_expected  # the inner run's warning is this test's window too
def test_kernel_warning_is_attributed_to_the_check_that_logged_it(pytester: pytest.Pytester,
                                                                  device: str) -> None:
    nonce = secrets.token_hex(4)
    pytester.makepyfile(test_kernel=KERNEL_TEST.replace("{nonce}", nonce))
    result = pytester.runpytest("--rdma-dev", device, "--rdma-kernel-log=fail", "-p", "no:xdist")
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines(["*KernelFault: kernel fault (warning) logged during this check: "
                                 f"WARNING: CPU: 0 PID: * at pytest-rdma guard test {nonce}*"])
    teardowns = teardown_reports(result)
    found = teardowns["test_logs_a_kernel_warning"].__dict__[KERNEL_LOG_FIELD]
    assert found["kinds"] == ["warning"] and nonce in found["lines"][0] and found["from_user_space"]
    assert KERNEL_LOG_FIELD not in teardowns["test_quiet_before"].__dict__
    assert KERNEL_LOG_FIELD not in teardowns["test_quiet_after"].__dict__


CRASH_TEST = """
import os
import signal

def test_before(rdma_dut):
    pass

def test_segfaults(rdma_dut):
    os.kill(os.getpid(), signal.SIGSEGV)  # what a provider bug in the verbs library looks like

def test_after(rdma_dut):
    pass

def test_last(rdma_dut):
    pass
"""


def test_crash_costs_one_result_and_the_run_goes_on(pytester: pytest.Pytester, device: str) -> None:
    pytester.makepyfile(test_crash=CRASH_TEST)
    out = pytester.path / "results.json"
    result = pytester.runpytest_subprocess("--rdma-dev", device, "-n", "1", f"--rdma-json={out}")
    result.assert_outcomes(passed=3, failed=1)
    records = json_records(out)
    assert {name: r["outcome"] for name, r in records.items()} == {
        "test_before": "conforms", "test_segfaults": "crash",
        "test_after": "conforms", "test_last": "conforms"}
    assert "test_segfaults" in records["test_segfaults"]["reproducer"]


HANG_TEST = """
import time

def test_before(rdma_dut):
    pass

def test_hangs(rdma_dut):
    time.sleep(600)  # a verb that never returns

def test_after(rdma_dut):
    pass
"""


def test_hang_costs_one_timeout_result_and_the_run_goes_on(pytester: pytest.Pytester, device: str) -> None:
    pytester.makepyfile(test_hang=HANG_TEST)
    out = pytester.path / "results.json"
    # Generous for the first check's device setup under TCG; far below the sleep.
    result = pytester.runpytest_subprocess("--rdma-dev", device, "--timeout=20", "-p", "no:xdist",
                                           f"--rdma-json={out}")
    result.assert_outcomes(passed=2, failed=1)
    records = json_records(out)
    assert {name: r["outcome"] for name, r in records.items()} == {
        "test_before": "conforms", "test_hangs": "timeout", "test_after": "conforms"}


def test_lab_turns_the_kernel_log_check_on_by_default(pytestconfig: pytest.Config) -> None:
    # The lab's in-guest runner makes kernel faults fail checks unless the command line says otherwise.
    if "PYTEST_RDMA_LAB_MARKS" not in os.environ:
        pytest.skip("only the lab command (pytest-rdma lab) sets the lab's defaults")
    if pytestconfig.getoption("rdma_kernel_log") is not None:
        pytest.skip("--rdma-kernel-log was given on the command line")
    assert pytestconfig.pluginmanager.get_plugin("rdma-guard-kernel-log").mode == "fail"


DEVICE_TEST = """
def test_uses_the_device(rdma_dut):
    pass
"""


@pytest.mark.parametrize("option, message", [
    ("--rdma-port=7", "DeviceNotUsable: {dev} has no port 7 (*): it has 1 port(s); choose one with --rdma-port N"),
    ("--rdma-gid-index=200", "DeviceNotUsable: {dev} port 1 has no usable GID at index 200 (*): "
                             "choose a populated index with --rdma-gid-index N*"),
], ids=["no-such-port", "no-such-gid"])
def test_unusable_port_or_gid_names_the_option(pytester: pytest.Pytester, device: str, option: str,
                                               message: str) -> None:
    pytester.makepyfile(DEVICE_TEST)
    result = pytester.runpytest("--rdma-dev", device, option, "-p", "no:xdist")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*" + message.replace("{dev}", device)])


def test_port_down_names_the_option(pytester: pytest.Pytester, device: str) -> None:
    links = json.loads(subprocess.run(["rdma", "-j", "link", "show", f"{device}/1"], capture_output=True,
                                      text=True, check=True).stdout)
    netdev = links[0]["netdev"]
    pytester.makepyfile(DEVICE_TEST)
    subprocess.run(["ip", "link", "set", netdev, "down"], check=True)
    try:
        result = pytester.runpytest("--rdma-dev", device, "-p", "no:xdist")
    finally:
        subprocess.run(["ip", "link", "set", netdev, "up"], check=True)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"*DeviceNotUsable: {device} port 1 is not active (state DOWN): "
                                 "bring its link up*--rdma-port N"])
