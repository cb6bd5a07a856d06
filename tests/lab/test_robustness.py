"""Robustness in the lab: leaks, kernel faults, crashes and hangs each cost one check, named.

Each test runs an inner pytest session against the lab device the outer run was given
(`pytest-rdma lab` runs once per device; rxe0 when none is given) and checks that the fault
is attributed to the check that caused it and to no other.
"""

from __future__ import annotations

import fnmatch
import json
import os
import secrets
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from pytest_rdma.guard.findings import KERNEL_LOG_FIELD, LEAK_FIELD
from pytest_rdma.lab import kwarn
from pytest_rdma.provider import netlink


def teardown_reports(result: pytest.RunResult) -> dict[str, Any]:
    """Test name -> its teardown report, from an in-process inner run."""
    reports = result.reprec.getreports("pytest_runtest_logreport")  # type: ignore[attr-defined]
    return {r.nodeid.split("::")[-1].split("[")[0]: r for r in reports if r.when == "teardown"}


def json_records(path: Path) -> dict[str, dict[str, Any]]:
    """Test name -> its result record, from the inner run's --rdma-json file."""
    document = json.loads(path.read_text())
    return {r["test"]: r for r in document["results"]}


# A user's own tests, making objects through the device's call layer (rdma_dut.calls).
LEAK_TEST = """
KEPT = []  # a PD kept past the check: it is never freed while the session lives

def alloc_pd(dut):
    made = dut.calls.invoke("ibv_alloc_pd", {"context": dut.context})
    assert made.ok
    return made.result

def test_clean_first(rdma_dut):
    assert rdma_dut.calls.invoke("ibv_dealloc_pd", {"pd": alloc_pd(rdma_dut)}).result == 0

def test_keeps_a_pd(rdma_dut):
    KEPT.append(alloc_pd(rdma_dut))

def test_clean_after(rdma_dut):
    assert rdma_dut.calls.invoke("ibv_dealloc_pd", {"pd": alloc_pd(rdma_dut)}).result == 0
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

MARKS = Path({marks!r})
KEPT = []


def wait_for(name):
    deadline = time.monotonic() + 120
    while not (MARKS / name).exists():
        assert time.monotonic() < deadline, f"{{name}} never came: the two checks did not run side by side"
        time.sleep(0.05)


def test_busy_meanwhile(rdma_dut):
    # Holds a PD while the other worker's check leaks one, and ends only after that leak:
    # device-wide counts would blame this check for the other's objects.
    pd = rdma_dut.calls.invoke("ibv_alloc_pd", {{"context": rdma_dut.context}}).result
    (MARKS / "busy").touch()
    wait_for("leaked")
    assert rdma_dut.calls.invoke("ibv_dealloc_pd", {{"pd": pd}}).result == 0


def test_keeps_a_pd(rdma_dut):
    wait_for("busy")
    KEPT.append(rdma_dut.calls.invoke("ibv_alloc_pd", {{"context": rdma_dut.context}}).result)
    (MARKS / "leaked").touch()
"""


def test_leak_under_two_workers_is_blamed_on_its_check_only(pytester: pytest.Pytester, device: str) -> None:
    # Two xdist workers on one device, their checks forced to overlap (xdist deals two tests to two
    # workers round robin): only the check that leaked is blamed, not the one running beside it.
    pytester.makepyfile(test_leak=OVERLAP_TEST.format(marks=str(pytester.path)))
    out = pytester.path / "results.json"
    result = pytester.runpytest_subprocess("--rdma-dev", device, "--rdma-leaks=fail", "-n", "2", f"--rdma-json={out}")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(
        [
            f"*ERROR at teardown of test_keeps_a_pd?{device}?*",
            f"E*ResourceLeak: {device}: +1 pd still counted by the kernel after*",
        ]
    )
    assert {name: r["outcome"] for name, r in json_records(out).items()} == {
        "test_busy_meanwhile": "conforms",
        "test_keeps_a_pd": "error",
    }


def test_report_mode_lists_the_leak_without_failing(pytester: pytest.Pytester, device: str) -> None:
    pytester.makepyfile(test_leak=LEAK_TEST)
    result = pytester.runpytest("--rdma-dev", device, "--rdma-leaks=report", "-p", "no:xdist")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        ["*rdma guards: leaks and kernel faults*", f"test_leak.py::test_keeps_a_pd?{device}?: leak: {device}: +1 pd"]
    )


KERNEL_TEST = """
import subprocess

def test_quiet_before(rdma_dut):
    pass

def test_makes_the_kernel_warn(rdma_dut):
    # The module's init function raises WARN() in kernel code, then refuses to stay loaded.
    loaded = subprocess.run(["insmod", {ko!r}, "nonce={nonce}"], capture_output=True, text=True)
    assert {refused!r} in loaded.stderr, loaded.stderr

def test_quiet_after(rdma_dut):
    pass
"""


def kwarn_module() -> str:
    """The lab's kernel-warning module (pytest_rdma/lab/kwarn.py), which the lab builds on the host."""
    path = os.environ.get(kwarn.ENV_KO)
    if not path:
        pytest.fail(
            os.environ.get(kwarn.ENV_ERROR)
            or f"{kwarn.ENV_KO} is not set: run this test with the lab command "
            "(pytest-rdma lab -- tests/lab/test_robustness.py), which builds the module"
        )
    return path


@pytest.mark.rdma_kernel_log_expected  # the inner run's warning is this test's window too
def test_kernel_warning_is_attributed_to_the_check_that_caused_it(pytester: pytest.Pytester, device: str) -> None:
    # A real WARN() raised by kernel code, with the kernel's own report (cut here, WARNING line,
    # registers, call trace, end trace), not a line written to /dev/kmsg: that would prove the
    # scan window but not that the guard reads the kernel's report. The nonce tells this run's
    # warning from any other.
    nonce = secrets.token_hex(4)
    pytester.makepyfile(test_kernel=KERNEL_TEST.format(ko=kwarn_module(), nonce=nonce, refused=kwarn.REFUSED))
    out = pytester.path / "results.json"
    result = pytester.runpytest(
        "--rdma-dev",
        device,
        "--rdma-kernel-log=fail",
        "-p",
        "no:xdist",
        f"--rdma-json={out}",
        f"--junitxml={pytester.path / 'junit.xml'}",
    )
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines(
        [
            f"*KernelFault: kernel fault (warning) logged during this check: WARNING: CPU: * "
            f"PID: * at *{kwarn.NAME}.c:* {kwarn.NAME}_init+0x*; {kwarn.MESSAGE} {nonce}*"
        ]
    )
    teardowns = teardown_reports(result)
    found = teardowns["test_makes_the_kernel_warn"].__dict__[KERNEL_LOG_FIELD]
    assert found["kinds"] == ["warning"] and not found["from_user_space"]
    headline, message = found["lines"]
    assert headline.startswith("WARNING: CPU: ") and f"{kwarn.NAME}_init+0x" in headline
    assert message == f"{kwarn.MESSAGE} {nonce}"
    assert KERNEL_LOG_FIELD not in teardowns["test_quiet_before"].__dict__
    assert KERNEL_LOG_FIELD not in teardowns["test_quiet_after"].__dict__
    assert not Path(f"/sys/module/{kwarn.NAME}").exists()  # the module refused to stay loaded
    # The same finding in the check's JSON record and JUnit testcase, and on no other check.
    records = json_records(out)
    assert records["test_makes_the_kernel_warn"]["kernel_log"] == found
    assert records["test_makes_the_kernel_warn"]["outcome"] == "error"
    assert records["test_quiet_before"]["kernel_log"] is None and records["test_quiet_after"]["kernel_log"] is None
    props = junit_properties(pytester.path / "junit.xml")
    assert nonce in props["test_makes_the_kernel_warn"]["rdma.kernel_log"]
    assert props["test_makes_the_kernel_warn"]["rdma.driver"] in ("rxe", "siw")
    assert "rdma.kernel_log" not in props["test_quiet_before"] and "rdma.kernel_log" not in props["test_quiet_after"]


FAULT_WAIVER = """driver = "{driver}"
[[waiver]]
id = "test_makes_the_kernel_warn"
reason = "the lab's kwarn module WARNs in its init function, on purpose"
link = "pytest_rdma/lab/kwarn.py"
observed = {{ kernel_fault = "{kind}" }}
"""


@pytest.mark.rdma_kernel_log_expected  # the inner runs' warnings are this test's window too
def test_a_waiver_of_a_kernel_warning_holds_for_that_warning_only(pytester: pytest.Pytester, device: str) -> None:
    # The same real WARN() as above, waived by the driver's expectations (observed = { kernel_fault = "warning" }):
    # the check is waived, not an error, and the run passes; a waiver of another fault (an Oops) does not hold.
    pytester.makepyfile(
        test_kernel=KERNEL_TEST.format(ko=kwarn_module(), nonce=secrets.token_hex(4), refused=kwarn.REFUSED)
    )
    outcomes = {}
    for kind in ("warning", "oops"):
        expectations = pytester.path / kind
        expectations.mkdir()
        for driver in ("rxe", "siw"):  # the device's driver's file is the one read
            (expectations / f"{driver}.toml").write_text(FAULT_WAIVER.format(driver=driver, kind=kind))
        out = pytester.path / f"{kind}.json"
        result = pytester.runpytest(
            "--rdma-dev", device, "--rdma-kernel-log=fail", "-p", "no:xdist", f"--rdma-json={out}",
            f"--rdma-expectations={expectations}",
        )  # fmt: skip
        record = json_records(out)["test_makes_the_kernel_warn"]
        outcomes[kind] = (result.ret, record["outcome"], (record["waiver"] or {}).get("status"))
        if kind == "warning":
            assert record["observation"] == {"kernel_fault": "warning"}
            assert record["kernel_log"]["kinds"] == ["warning"]
    assert outcomes == {
        "warning": (pytest.ExitCode.OK, "waived", "applied"),
        "oops": (pytest.ExitCode.TESTS_FAILED, "error", "mismatch"),
    }


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
        "test_before": "conforms",
        "test_segfaults": "crash",
        "test_after": "conforms",
        "test_last": "conforms",
    }
    assert "test_segfaults" in records["test_segfaults"]["rerun"], "a command that runs the crashed check again"


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
    result = pytester.runpytest_subprocess("--rdma-dev", device, "--timeout=20", "-p", "no:xdist", f"--rdma-json={out}")
    result.assert_outcomes(passed=2, failed=1)
    records = json_records(out)
    assert {name: r["outcome"] for name, r in records.items()} == {
        "test_before": "conforms",
        "test_hangs": "timeout",
        "test_after": "conforms",
    }


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


@pytest.mark.parametrize(
    "option, message",
    [
        ("--rdma-port=7", "{dev} has no port 7 (*): it has 1 port(s); choose one with --rdma-port N"),
        (
            "--rdma-gid-index=200",
            "{dev} port 1 has no usable GID at index 200 (*): choose a populated index with --rdma-gid-index N*",
        ),
    ],
    ids=["no-such-port", "no-such-gid"],
)
def test_unusable_port_or_gid_is_a_usage_error(
    pytester: pytest.Pytester, device: str, option: str, message: str
) -> None:
    pytester.makepyfile(DEVICE_TEST)
    # Under xdist: the controller says it once, before any worker starts or any check runs.
    result = pytester.runpytest_subprocess("--rdma-dev", device, option, "-n", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    expected = message.replace("{dev}", device)
    result.stderr.fnmatch_lines(["ERROR: " + expected])
    said = [line for line in result.stdout.lines + result.stderr.lines if fnmatch.fnmatch(line, "*" + expected)]
    assert len(said) == 1, said
    assert "test_uses_the_device" not in result.stdout.str()


def test_port_down_is_a_usage_error(pytester: pytest.Pytester, device: str) -> None:
    links = json.loads(
        subprocess.run(["rdma", "-j", "link", "show", f"{device}/1"], capture_output=True, text=True, check=True).stdout
    )
    netdev = links[0]["netdev"]
    pytester.makepyfile(DEVICE_TEST)
    subprocess.run(["ip", "link", "set", netdev, "down"], check=True)
    try:
        result = pytester.runpytest("--rdma-dev", device, "-p", "no:xdist")
    finally:
        subprocess.run(["ip", "link", "set", netdev, "up"], check=True)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {device} port 1 is not active (state DOWN): bring its link up*--rdma-port N"])
    assert "test_uses_the_device" not in result.stdout.str()


def test_leak_is_in_the_json_record_and_junit(pytester: pytest.Pytester, device: str) -> None:
    # Report mode: the record and the JUnit testcase are where the leak is seen, the check still passes.
    pytester.makepyfile(test_leak=LEAK_TEST)
    out = pytester.path / "results.json"
    result = pytester.runpytest(
        "--rdma-dev",
        device,
        "--rdma-leaks=report",
        "-p",
        "no:xdist",
        f"--rdma-json={out}",
        f"--junitxml={pytester.path / 'junit.xml'}",
    )
    result.assert_outcomes(passed=3)
    records = json_records(out)
    assert records["test_keeps_a_pd"]["leak"] == {device: {"pd": 1}}
    assert records["test_keeps_a_pd"]["outcome"] == "conforms"
    assert records["test_clean_first"]["leak"] is None and records["test_clean_after"]["leak"] is None
    props = junit_properties(pytester.path / "junit.xml")
    assert props["test_keeps_a_pd"]["rdma.leak"] == f"{device}: +1 pd"
    assert "rdma.leak" not in props["test_clean_first"] and "rdma.leak" not in props["test_clean_after"]


def junit_properties(path: Path) -> dict[str, dict[str, str]]:
    """Test name -> its JUnit testcase properties."""
    cases = ET.parse(path).getroot().iter("testcase")
    return {
        case.get("name", "").split("[")[0]: {p.get("name", ""): p.get("value", "") for p in case.iter("property")}
        for case in cases
    }
