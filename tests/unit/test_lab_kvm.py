"""The KVM probe's first stage (lab/kvm.py): the kernel's banner on an early console decides in seconds.

QEMU is replaced by a script on PATH that plays a guest: one that prints the banner, one that hangs
silent (what KVM does with Debian's kernel on this project's machines), one that exits at once.
Whether a real KVM boots is the lab's own business (it caches the answer); this is the decision.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from pytest_rdma.lab import kvm

GUEST = """#!/bin/sh
for arg in "$@"; do case "$arg" in file:*) console="${{arg#file:}}";; esac; done
{body}
"""


@pytest.fixture
def qemu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    def install(body: str) -> None:
        script = tmp_path / "qemu-system-x86_64"
        script.write_text(GUEST.format(body=body))
        script.chmod(0o755)
        monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")

    return install


def test_a_kernel_that_prints_its_banner_starts(qemu, tmp_path: Path) -> None:
    qemu('printf "SeaBIOS\\n" >> "$console"; sleep 0.3; printf "Linux version 6.1.0\\n" >> "$console"; sleep 30')
    started = time.monotonic()
    assert kvm.kernel_starts(tmp_path / "vmlinuz", seconds=5)
    assert time.monotonic() - started < 4  # decided when the banner came, QEMU killed after


def test_a_guest_that_hangs_silent_does_not_start_and_is_decided_in_the_limit(qemu, tmp_path: Path) -> None:
    qemu('printf "Probing EDD (edd=off to disable)... ok\\n" >> "$console"; sleep 30')
    started = time.monotonic()
    assert not kvm.kernel_starts(tmp_path / "vmlinuz", seconds=1)
    assert time.monotonic() - started < 5


def test_qemu_that_exits_without_a_banner_does_not_start(qemu, tmp_path: Path) -> None:
    qemu('echo "Could not access KVM kernel module" >&2; exit 1')
    started = time.monotonic()
    assert not kvm.kernel_starts(tmp_path / "vmlinuz", seconds=10)
    assert time.monotonic() - started < 5


def test_the_probe_asks_for_kvm_on_the_kernel_alone(tmp_path: Path) -> None:
    argv = kvm.qemu_options(tmp_path / "vmlinuz", tmp_path / "console")
    assert "-enable-kvm" in argv and "-no-reboot" in argv
    assert argv[argv.index("-kernel") + 1] == str(tmp_path / "vmlinuz")
    assert f"file:{tmp_path / 'console'}" in argv
    assert "earlyprintk=serial" in argv[argv.index("-append") + 1]
    assert "-bios" not in argv  # QEMU's own firmware unless qboot is asked for (and shipped)
    assert kvm.qemu_options(tmp_path / "vmlinuz", tmp_path / "console", qboot=True)[:2] == ["-bios", "qboot.rom"]


# A guest hung under KVM spins: its QEMU keeps using CPU (the busy loop plays that).
HANGS_SPINNING = 'sleep 0.3; printf "Probing EDD (edd=off to disable)... ok\\n" >> "$console"; while :; do :; done'


def test_a_guest_silent_after_its_setup_line_is_decided_well_before_the_limit(qemu, tmp_path: Path) -> None:
    qemu(HANGS_SPINNING)
    started = time.monotonic()
    assert not kvm.kernel_starts(tmp_path / "vmlinuz", seconds=20, after_setup=1, after_setup_cpu=0.2)
    assert time.monotonic() - started < 8  # the setup line's clocks, not the 20 s limit


def test_a_guest_given_no_cpu_since_its_setup_line_is_not_judged_by_the_wall_clock(qemu, tmp_path: Path) -> None:
    """A machine too busy to run QEMU (here: a guest that sleeps) leaves the decision to the overall limit."""
    qemu('printf "Probing EDD (edd=off to disable)... ok\\n" >> "$console"; sleep 30')
    started = time.monotonic()
    assert not kvm.kernel_starts(tmp_path / "vmlinuz", seconds=3, after_setup=0.5, after_setup_cpu=0.5)
    assert time.monotonic() - started >= 3


def test_a_process_cpu_time_is_read_and_an_unknown_one_is_endless() -> None:
    import os

    assert 0 <= kvm.cpu_seconds(os.getpid()) < float("inf")
    assert kvm.cpu_seconds(2**22 + 1) == float("inf")  # above the kernel's pid_max


def test_a_banner_soon_after_the_setup_line_starts(qemu, tmp_path: Path) -> None:
    qemu('printf "Probing EDD... ok\\n" >> "$console"; sleep 0.5; printf "Linux version 6\\n" >> "$console"; sleep 9')
    assert kvm.kernel_starts(tmp_path / "vmlinuz", seconds=20, after_setup=3)


def test_a_device_that_is_not_kvm_is_refused_by_its_ioctls(tmp_path: Path) -> None:
    assert "No such file" in kvm.kvm_refuses(str(tmp_path / "kvm"))
    assert kvm.kvm_refuses("/dev/null")  # opens, but answers no KVM ioctl (ENOTTY)


@pytest.mark.skipif(not Path("/dev/kvm").exists(), reason="this host has no /dev/kvm")
def test_this_hosts_kvm_makes_a_vm_when_it_can_be_opened() -> None:
    import os

    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        pytest.skip("/dev/kvm is not ours to open")
    assert kvm.kvm_refuses() == ""
