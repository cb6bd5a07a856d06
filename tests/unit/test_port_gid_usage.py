"""A port or GID index that cannot be used is one usage error at start-up, raised by the controller.

Host test of the plumbing (the device facts are faked at the function that reads them; the
messages themselves come from a real device in tests/lab/test_robustness.py).
"""

from __future__ import annotations

import pytest

from pytest_rdma import plugin
from pytest_rdma.provider import device, pyverbs_env

MESSAGE = "rxe0 has no port 7 (query_port failed): it has 1 port(s); choose one with --rdma-port N"


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, int]]:
    """Pretend rxe0 exists; record every device the start-up check opens, and refuse port 7."""
    opened: list[tuple[str, int, int]] = []

    def check_usable(name: str, port: int, gid_index: int) -> None:
        opened.append((name, port, gid_index))
        if port == 7:
            raise device.DeviceNotUsable(MESSAGE)

    monkeypatch.setattr(plugin, "sysfs_devices", lambda: ["rxe0"])
    monkeypatch.setattr(pyverbs_env, "problem", lambda: "")
    monkeypatch.setattr(device, "check_usable", check_usable)
    return opened


def test_bad_port_is_a_usage_error_before_any_check(pytester: pytest.Pytester,
                                                    checked: list[tuple[str, int, int]]) -> None:
    pytester.makepyfile("def test_plain():\n    pass\n")
    result = pytester.runpytest("--rdma-dev", "rxe0", "--rdma-port", "7", "--rdma-gid-index", "3")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {MESSAGE}"])
    assert "test_plain" not in result.stdout.str() and "passed" not in result.stdout.str()
    assert checked == [("rxe0", 7, 3)]


def test_usable_port_runs_and_a_deviceless_run_opens_nothing(pytester: pytest.Pytester,
                                                             checked: list[tuple[str, int, int]]) -> None:
    pytester.makepyfile("def test_plain():\n    pass\n")
    pytester.runpytest("--rdma-dev", "rxe0", "-p", "no:xdist", "--co", "--no-header").assert_outcomes()
    assert checked == [("rxe0", 1, 0)], "the defaults: port 1, GID index 0"
    checked.clear()
    pytester.runpytest("--rdma-port", "7").assert_outcomes(passed=1)
    assert checked == [], "no --rdma-dev: no device is opened"
