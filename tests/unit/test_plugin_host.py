"""The plugin on a host with no RDMA devices (our machines and most CI runners).

What a user can get wrong is a usage error (exit 4) in one line that says what to do: no
traceback, no INTERNALERROR. Collecting needs no device. Most runs are in-process (fast); the
ones that show the whole command as a user runs it are subprocesses.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from pytest_rdma import selection
from pytest_rdma.generate import expand
from pytest_rdma.provider import device
from pytest_rdma.provider.identity import DeviceIdentity, rdma_core_version, sysfs_devices
from pytest_rdma.verbs import CATALOGUE

pytestmark = pytest.mark.skipif(bool(sysfs_devices()), reason="this host has RDMA devices; these tests need none")

NO_DEVICES = "this host has no RDMA devices (/sys/class/infiniband is empty or missing)"


def one_line_usage_error(result: pytest.RunResult, *patterns: str) -> None:
    """Exit 4 with exactly one line on stderr, matching each pattern."""
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + result.stderr.str()
    lines = [line for line in result.stderr.lines if line.strip()]
    assert len(lines) == 1, lines
    for pattern in patterns:
        result.stderr.fnmatch_lines([pattern])
    assert "Traceback" not in result.stderr.str() + result.stdout.str()
    assert "INTERNALERROR" not in result.stderr.str() + result.stdout.str()


def test_no_device_named_for_the_packaged_suite(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--pyargs", "pytest_rdma.suites")
    one_line_usage_error(
        result,
        "ERROR: no RDMA device named: give one with --rdma-dev NAME (or rdma_devices in an "
        "ini file, or RDMA_DEV in the environment). Devices on this host: none.*pytest-rdma lab*",
    )


def test_an_unknown_device_is_a_usage_error_naming_the_lab(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = pytester.runpytest("--rdma-dev", "rxe0")
    one_line_usage_error(result, f"ERROR: unknown RDMA device rxe0: {NO_DEVICES}*pytest-rdma lab*--rdma-dev NAME.")


def test_devices_from_ini_and_environment(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makeini("[pytest]\nrdma_devices = rxe7\n")
    pytester.makepyfile("def test_nothing():\n    pass\n")
    one_line_usage_error(pytester.runpytest(), "ERROR: unknown RDMA device rxe7: *")
    (pytester.path / "tox.ini").unlink()
    monkeypatch.setenv("RDMA_DEV", "siw3,siw4")
    one_line_usage_error(pytester.runpytest(), "ERROR: unknown RDMA device siw3, siw4: *")


@pytest.mark.parametrize(
    ("args", "ini", "env", "says"),
    [
        (
            ["--rdma-port", "abc"],
            "",
            {},
            "rdma_port = 'abc' (command line --rdma-port): not a port number (give an "
            "integer from 1 to 255; ports are numbered from 1)",
        ),
        (["--rdma-port", "0"], "", {}, "rdma_port = '0' (command line --rdma-port): not a port number*"),
        ([], "rdma_port = abc", {}, "rdma_port = 'abc' (ini file tox.ini): not a port number*"),
        ([], "", {"RDMA_PORT": "abc"}, "rdma_port = 'abc' (environment RDMA_PORT): not a port number*"),
        (
            ["--rdma-gid-index", "-1"],
            "",
            {},
            "rdma_gid_index = '-1' (command line --rdma-gid-index): not a GID table index (give an integer from 0 up)",
        ),
        (
            [],
            "",
            {"RDMA_GID_INDEX": "-1"},
            "rdma_gid_index = '-1' (environment RDMA_GID_INDEX): not a GID table index*",
        ),
        (
            ["--rdma-expectations", "missing.toml"],
            "",
            {},
            "rdma_expectations = 'missing.toml' (command line --rdma-expectations): no such file or directory*",
        ),
        ([], "", {"RDMA_EXPECTATIONS": "gone"}, "rdma_expectations = 'gone' (environment RDMA_EXPECTATIONS): no such*"),
        (
            ["--rdma-leaks", "loud"],
            "",
            {},
            "rdma_leaks = 'loud' (command line --rdma-leaks): not a guard mode (give one of fail, report, off)",
        ),
        ([], "", {"RDMA_STRICT": "maybe"}, "rdma_strict = 'maybe' (environment RDMA_STRICT): not a boolean*"),
    ],
)
def test_a_bad_setting_is_one_line(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    ini: str,
    env: dict[str, str],
    says: str,
) -> None:
    pytester.makepyfile("def test_nothing():\n    pass\n")
    if ini:
        pytester.makeini(f"[pytest]\n{ini}\n")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    one_line_usage_error(pytester.runpytest(*args), f"ERROR: {says}")


def test_the_command_line_wins_over_environment_and_ini(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeini("[pytest]\nrdma_port = abc\n")
    monkeypatch.setenv("RDMA_PORT", "def")
    pytester.makepyfile("def test_nothing():\n    pass\n")
    pytester.runpytest("--rdma-port", "2").assert_outcomes(passed=1)
    one_line_usage_error(pytester.runpytest(), "ERROR: rdma_port = 'def' (environment RDMA_PORT)*")


def test_collecting_the_packaged_suite_needs_no_device(pytester: pytest.Pytester) -> None:
    # An empty directory, a device this host does not have: the packaged suite is collected.
    result = pytester.runpytest_subprocess("--rdma-dev=rxe0", "--collect-only", "-q")
    assert result.ret == pytest.ExitCode.OK, result.stderr.str()
    ids = [line for line in result.stdout.lines if "::" in line]
    want = sum(len(expand(verb)) for verb in CATALOGUE)
    result.stdout.fnmatch_lines([f"{want} tests collected*"])
    assert len(ids) == want
    assert any(line.endswith("test_ibv_modify_qp[rxe0-required-attrs-RC-INIT>RTR-without-AV]") for line in ids)
    assert any(line.endswith("test_det_modify_qp[illegal-transition-EPERM]") for line in ids), "no device: once"
    header = pytester.runpytest("--rdma-dev=rxe0,siw0", "--collect-only")
    blocked = sum(len(expand(verb)) for verb in CATALOGUE if verb.family != "ibv")  # deviceless: once
    two = 2 * (want - blocked) + blocked
    header.stdout.fnmatch_lines(["rdma: collecting for rxe0, siw0 (no device is opened)", f"collected {two} items*"])


def test_a_users_device_test_without_a_device_says_how(pytester: pytest.Pytester) -> None:
    # Before any test runs: a usage error naming the test and --rdma-dev, not the fixture's traceback (exit 1).
    pytester.makepyfile("def test_uses_device(rdma_dut):\n    pass\n\ndef test_plain():\n    pass\n")
    result = pytester.runpytest("-p", "no:xdist")
    one_line_usage_error(
        result,
        "ERROR: test_a_users_device_test_without_a_device_says_how.py::test_uses_device uses the fixture rdma_dut, "
        "but no RDMA device named: give one with --rdma-dev NAME*",
    )
    assert "passed" not in result.stdout.str()  # nothing ran
    # Under xdist the workers collect: each such test is an error in one line, the same words.
    spread = pytester.runpytest("-n", "1")
    spread.assert_outcomes(passed=1, errors=1)
    spread.stdout.fnmatch_lines(["*this test uses the fixture rdma_dut, but no RDMA device named: give one with*"])
    assert "Traceback" not in spread.stdout.str() and "raise " not in spread.stdout.str()
    # Collecting needs no device.
    assert pytester.runpytest("-p", "no:xdist", "--collect-only").ret == pytest.ExitCode.OK


# -- the port and GID start-up check, with the device faked where it is opened -------------------------
PORT_MESSAGE = "rxe0 has no port 7 (ibv_query_port: errno EINVAL): it has 1 port(s); choose one with --rdma-port N"


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, int, int]]]:
    """Pretend rxe0 exists; record every device the start-up check opens, and refuse port 7."""
    calls: list[tuple[str, int, int]] = []

    class FakeDevice:
        def __init__(self, name: str, catalogue: Any, port: int = 1, gid_index: int = 0, **_: Any) -> None:
            calls.append((name, port, gid_index))
            if port == 7:
                raise device.DeviceNotUsable(PORT_MESSAGE)
            self.identity = DeviceIdentity(name, "rxe", "CA", "roce", "fw", "0x0", "0x0", "kernel", "rdma-core")

        def close(self) -> None:
            pass

    monkeypatch.setattr(selection, "sysfs_devices", lambda: ["rxe0"])
    monkeypatch.setattr(selection, "loadable", lambda soname: True)
    monkeypatch.setattr(device, "DeviceUnderTest", FakeDevice)
    yield calls


def test_a_bad_port_is_a_usage_error_before_any_check(
    pytester: pytest.Pytester, opened: list[tuple[str, int, int]]
) -> None:
    plain = str(pytester.makepyfile("def test_plain():\n    pass\n"))
    result = pytester.runpytest("--rdma-dev", "rxe0", "--rdma-port", "7", "--rdma-gid-index", "3", plain)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {PORT_MESSAGE}"])
    assert "test_plain" not in result.stdout.str() and "passed" not in result.stdout.str()
    assert opened == [("rxe0", 7, 3)]


def test_under_xdist_the_controller_checks_the_port_while_its_workers_start(
    pytester: pytest.Pytester, opened: list[tuple[str, int, int]]
) -> None:
    # The controller checks the ports in its collection hook, after it has started the workers (whose start
    # then overlaps the device's opening): still a usage error in one line, before any check has run.
    plain = str(pytester.makepyfile("def test_plain():\n    pass\n"))
    result = pytester.runpytest("-n", "1", "--rdma-dev", "rxe0", "--rdma-port", "7", plain)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {PORT_MESSAGE}"])
    assert "passed" not in result.stdout.str() and "Traceback" not in result.stderr.str()
    # Once with the asked port, by the controller (the header's description opens it with the default port
    # where provider/describe.py was first imported under another test's fake).
    assert [call for call in opened if call[1] == 7] == [("rxe0", 7, 0)]


def test_collecting_and_a_deviceless_run_open_nothing(
    pytester: pytest.Pytester, opened: list[tuple[str, int, int]]
) -> None:
    plain = str(pytester.makepyfile("def test_plain():\n    pass\n"))
    pytester.runpytest("--rdma-dev", "rxe0", "-p", "no:xdist", "--co", "--no-header", plain).assert_outcomes()
    assert opened == [], "collecting opens no device"
    pytester.runpytest("--rdma-port", "7").assert_outcomes(passed=1)
    assert opened == [], "no --rdma-dev: no device is opened"
    pytester.runpytest("--rdma-dev", "rxe0", "-p", "no:xdist", "--no-header", plain).assert_outcomes(passed=1)
    assert opened == [("rxe0", 1, 0)], "the defaults: port 1, GID index 0"


def test_rdma_core_version_is_read_from_libibverbs() -> None:
    version = rdma_core_version()
    assert version == "unknown" or version.replace(".", "").isdigit()


def test_lab_rejects_devices_it_cannot_create(capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_rdma import lab

    code = lab.run(lab.LabRequest(devices=["mlx5_0"], install=False))
    assert code == lab.EXIT_USAGE
    assert "can create rxeN (Soft-RoCE) and siwN (soft-iWARP) devices, not 'mlx5_0'" in capsys.readouterr().err
