"""The virtiofsd translator: virtme-ng's Rust-daemon arguments, spoken to QEMU's C daemon."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_rdma.lab import virtiofsd

# What virtme-ng 1.42 passes (virtme/commands/run.py, VirtioFS.start), for the shared root.
VNG_ARGV = [
    "--syslog",
    "--no-announce-submounts",
    "--socket-path",
    "/tmp/virtmeab12",
    "--shared-dir",
    "/",
    "--sandbox",
    "none",
    "--cache",
    "always",
]


def test_arguments_are_translated_with_the_same_share_and_cache() -> None:
    socket_path, command = virtiofsd.translate(VNG_ARGV)
    assert socket_path == "/tmp/virtmeab12"
    assert command == [
        str(virtiofsd.C_DAEMON),
        "--socket-path=/tmp/virtmeab12",
        "-o",
        "source=/,cache=always,sandbox=chroot,no_posix_lock,no_xattr",
    ]


def test_a_writable_share_keeps_its_cache_mode() -> None:
    argv = [a if a != "always" else "auto" for a in VNG_ARGV]
    assert virtiofsd.translate(argv)[1][-1].startswith("source=/,cache=auto,")


def test_not_a_start_is_refused_clearly(capsys: pytest.CaptureFixture[str]) -> None:
    assert virtiofsd.translate(["--syslog"]) is None
    assert virtiofsd.main(["--syslog"]) == 2
    assert "cannot read" in capsys.readouterr().err


@pytest.mark.parametrize("probe", ["--version", "--help"])
def test_probes_succeed_without_offering_readonly(probe: str, capsys: pytest.CaptureFixture[str]) -> None:
    # virtme-ng adds --readonly only if the help mentions it; the C daemon would reject it.
    assert virtiofsd.main([probe]) == 0
    assert "--readonly" not in capsys.readouterr().out


def test_installed_translator_runs_this_interpreter(tmp_path: Path) -> None:
    bin_dir = virtiofsd.install(tmp_path / "bin")
    script = bin_dir / "virtiofsd"
    assert os.access(script, os.X_OK)
    assert f"exec {sys.executable} -c " in script.read_text()
    assert virtiofsd.install(tmp_path / "bin") == bin_dir  # idempotent
    # The probes are answered by the shell; anything else reaches main() in this interpreter.
    for probe in ("--version", "--help"):
        done = subprocess.run([str(script), probe], capture_output=True, text=True, check=False)
        assert done.returncode == 0 and "--readonly" not in done.stdout
    unreadable = subprocess.run([str(script), "--bogus"], capture_output=True, text=True, check=False)
    assert unreadable.returncode == 2 and "translator: cannot read ['--bogus']" in unreadable.stderr


def test_the_translators_probes_start_no_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Each Python start costs the boot about 0.2 s under emulation; virtme-ng probes before each start.
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-python-here"))
    script = virtiofsd.install(tmp_path / "bin") / "virtiofsd"
    for probe in ("--version", "-V", "--help", "-h"):
        assert subprocess.run([str(script), probe], capture_output=True, check=False).returncode == 0, probe
    assert subprocess.run([str(script), "--socket-path", "x"], capture_output=True, check=False).returncode == 127
