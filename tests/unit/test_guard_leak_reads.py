"""The leak guard's reads over a run of checks: one per check, and a leak still blamed on its check.

The guard runs in a pytest session of its own here (pytester), with the kernel's counts replaced
by a table the checks change: pure bookkeeping, no device (the lab's tests/lab/test_robustness.py
leaks a real PD on rxe0 and siw0).
"""

from __future__ import annotations

import pytest

CONFTEST = """
import os

import pytest
from pytest_rdma.guard.leaks import LeakGuard

COUNTS = {"rxe0": {"pd": 1}, "siw0": {"pd": 0}}  # rxe keeps a PD of its own
READS = []


def read(devices):
    READS.append(tuple(devices))
    return {device: dict(COUNTS[device]) for device in devices}


def pytest_configure(config):
    verify_every = int(os.environ.get("LEAK_READS_VERIFY_EVERY", "16"))
    config.pluginmanager.register(LeakGuard("fail", read=read, verify_every=verify_every), "leak-guard-under-test")


def pytest_runtest_logfinish(nodeid, location):
    # Something outside any check's window that keeps an object: what the tripwire is for.
    if nodeid == os.environ.get("LEAK_READS_BETWEEN"):
        COUNTS["rxe0"]["pd"] += 1


def pytest_sessionfinish(session):
    print("\\nreads:", len(READS), " ".join(device for devices in READS for device in devices))


@pytest.fixture
def rdma_dut(request):
    return request.param


@pytest.fixture
def pd(rdma_dut):
    COUNTS[rdma_dut]["pd"] += 1
    yield
    COUNTS[rdma_dut]["pd"] -= 1


@pytest.fixture(scope="module")
def module_pd():
    # A wider-scoped fixture that a check without a device sets up: its PD is not the next check's.
    COUNTS["rxe0"]["pd"] += 1
    yield
    COUNTS["rxe0"]["pd"] -= 1
"""

CHECKS = """
import pytest
from conftest import COUNTS

on = pytest.mark.parametrize("rdma_dut", {devices!r}, indirect=True)


@on
def test_a_clean(rdma_dut, pd):
    pass


@on
def test_b_leaks(rdma_dut):
    COUNTS[rdma_dut]["pd"] += 1


@on
def test_c_clean(rdma_dut, pd):
    pass


def test_d_no_device(module_pd):
    pass


@on
def test_e_clean(rdma_dut):
    pass
"""


def run(pytester: pytest.Pytester, devices: list[str]) -> tuple[pytest.RunResult, list[str]]:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_checks=CHECKS.format(devices=devices))
    result = pytester.runpytest("-p", "no:rdma", "-p", "no:xdist", "-s", "-q")
    reads = next(line for line in result.outlines if line.startswith("reads:")).split()
    return result, reads


def test_one_read_per_check_and_the_leak_on_its_check(pytester: pytest.Pytester) -> None:
    result, reads = run(pytester, ["rxe0"])
    # Only test_b's teardown errors: its own PD, not test_a's (freed) nor the module fixture's.
    result.assert_outcomes(passed=5, errors=1)
    assert [line.split(" - ")[0] for line in result.outlines if line.startswith("ERROR ")] == [
        "ERROR test_checks.py::test_b_leaks[rxe0]"
    ]
    result.stdout.fnmatch_lines(["E *ResourceLeak: rxe0: +1 pd still counted by the kernel after this check *"])
    # a: start + end; b, c: end only (the last end is their start); d, without a device, reads
    # nothing and drops the kept counts (its module fixture makes a PD): e reads its own start,
    # the module fixture's teardown in its window (before and after), and its end.
    assert reads[1:] == ["8", *["rxe0"] * 8], reads


def test_another_device_reads_its_own_start(pytester: pytest.Pytester) -> None:
    result, reads = run(pytester, ["rxe0", "siw0"])
    result.assert_outcomes(passed=9, errors=2)
    # The checks alternate devices: no end counts are reused for the other device (8 checks with a
    # device, start and end each, and the module fixture's teardown).
    assert reads[1] == str(2 * 8 + 2), reads


def test_the_tripwire_sees_objects_made_between_checks_and_stops_reusing(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every reuse is verified here. A PD kept after test_a, outside every window, would count as
    # test_b's if b's start were a's end: the tripwire reads b's start, so b is blamed for its own
    # PD only, and no end is reused after that.
    monkeypatch.setenv("LEAK_READS_VERIFY_EVERY", "1")
    monkeypatch.setenv("LEAK_READS_BETWEEN", "test_checks.py::test_a_clean[rxe0]")
    result, reads = run(pytester, ["rxe0"])
    result.assert_outcomes(passed=5, errors=1, warnings=1)
    assert [line.split(" - ")[0] for line in result.outlines if line.startswith("ERROR ")] == [
        "ERROR test_checks.py::test_b_leaks[rxe0]"
    ]
    result.stdout.fnmatch_lines(
        [
            "E *ResourceLeak: rxe0: +1 pd still counted by the kernel after this check *",
            "*rdma guard: rxe0: +1 pd changed between two checks, before this one: the leak guard now reads*",
        ]
    )
    # From b on, two reads per check: a 2, b 2 (its start read by the tripwire), c 2, e 2 + 2.
    assert reads[1] == "10", reads


def test_after_the_tripwire_fires_no_end_is_reused(pytester: pytest.Pytester) -> None:
    from pytest_rdma.guard.leaks import LeakGuard

    item = pytester.getitem("def test_func(): pass")
    reads = []
    guard = LeakGuard("fail", read=lambda devices: reads.append(devices) or {"rxe0": {"pd": 2}})
    guard.device = "rxe0"
    assert guard._verified(item, {"rxe0": {"pd": 2}}) == {"rxe0": {"pd": 2}} and guard.reuse
    with pytest.warns(pytest.PytestWarning, match=r"rxe0: \+1 pd changed between two checks"):
        assert guard._verified(item, {"rxe0": {"pd": 1}}) == {"rxe0": {"pd": 2}}
    assert not guard.reuse and len(reads) == 2
