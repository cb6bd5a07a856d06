"""The plugin on a host with no RDMA devices (our machines and most CI runners)."""

from __future__ import annotations

import pytest

from pytest_rdma.provider.identity import rdma_core_version, sysfs_devices

pytestmark = pytest.mark.skipif(bool(sysfs_devices()), reason="this host has RDMA devices; these tests need none")


def test_no_devices_is_a_usage_error_naming_the_lab(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = pytester.runpytest_subprocess("--rdma-dev", "rxe0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --rdma-dev rxe0: this host has no RDMA devices*", "*pytest-rdma lab*"])
    assert "Traceback" not in result.stderr.str()


def test_without_a_device_device_checks_skip_and_say_how(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_uses_device(rdma_dut):\n    pass\n\ndef test_plain():\n    pass\n")
    result = pytester.runpytest("-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["rdma: no device chosen (--rdma-dev NAME); devices on this host: none",
                                 "SKIPPED*no RDMA device chosen: pass --rdma-dev NAME*"])


def test_devices_from_ini_and_environment(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makeini("[pytest]\nrdma_devices = rxe7\n")
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = pytester.runpytest_subprocess()
    result.stderr.fnmatch_lines(["ERROR: --rdma-dev rxe7: this host has no RDMA devices*"])
    (pytester.path / "tox.ini").unlink()
    monkeypatch.setenv("RDMA_DEV", "siw3")
    result = pytester.runpytest_subprocess()
    result.stderr.fnmatch_lines(["ERROR: --rdma-dev siw3: this host has no RDMA devices*"])


def test_rdma_core_version_is_read_from_libibverbs() -> None:
    version = rdma_core_version()
    assert version == "unknown" or version.replace(".", "").isdigit()


def test_lab_rejects_devices_it_cannot_create(capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_rdma import lab

    code = lab.run(lab.LabRequest(devices=["mlx5_0"], install=False))
    assert code == lab.EXIT_USAGE
    assert "can create rxeN (Soft-RoCE) and siwN (soft-iWARP) devices, not 'mlx5_0'" in capsys.readouterr().err

