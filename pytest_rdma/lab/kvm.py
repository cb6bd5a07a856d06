"""Whether KVM starts a kernel here, decided in seconds.

`/dev/kvm` can exist where KVM cannot boot the distro kernel: on this project's machines (nested
virtualisation) QEMU with KVM gets through the BIOS and the bzImage's setup code ("Probing EDD ...
ok") and then hangs without the kernel printing a line, so the lab's full probe (a whole virtme-ng
boot) waited out its 60 s limit on every fresh machine. A kernel that KVM runs prints its banner on
an early serial console within a second or two; one it cannot run prints nothing. So QEMU is started
bare (no virtme-ng, no root filesystem) on the kernel with an early console, and the banner decides:
seen, KVM starts the kernel (the full boot probe still follows, and takes seconds there); not seen
within BANNER_SECONDS, it does not. Nothing here runs a shell.

Two things make that decision take seconds, not the whole limit: /dev/kvm is first asked for its API
version and a VM (two ioctls, a millisecond: a module loaded where the CPU has no virtualisation, or
that another hypervisor holds, refuses there); and the boot's first console line, the setup code's
("Probing EDD ... ok", printed in real mode), starts a shorter clock: a kernel KVM runs decompresses
and prints its banner within a fraction of a second of it, so AFTER_SETUP_SECONDS without the banner,
once QEMU has also had AFTER_SETUP_CPU_SECONDS of CPU since (a machine busy with other work must not
starve a good guest into a "no": the answer is cached), is the hang. A guest hung there spins: its
QEMU keeps using CPU (measured here), so that clock runs on. The firmware is qboot where QEMU
ships it (Debian's qemu-system-data does): SeaBIOS, QEMU's default, took 4 to 10 s under nested KVM
on a loaded machine to reach the setup code (every port it probes is a nested exit), qboot a quarter
of a second, so the probe decides in seconds where it waited out its 10 s limit.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import tempfile
import time
from pathlib import Path

# "Linux version 6.1.0-56-amd64 ...": the first line a kernel prints (early_printk on ttyS0).
BANNER = b"Linux version "
BANNER_SECONDS = 10.0  # a KVM guest prints it in about a second; TCG is never probed here
POLL_SECONDS = 0.1
# From the setup code's first line to the banner: the decompressor's time, a tenth of a second under
# KVM on a loaded machine; at this limit the kernel has hung where KVM cannot run it.
AFTER_SETUP_SECONDS = 2.5
AFTER_SETUP_CPU_SECONDS = 1.5  # QEMU's own CPU time in that while: the decompressor needs well under a second
# <linux/kvm.h>: _IO(KVMIO, 0x00) and _IO(KVMIO, 0x01); the API version every KVM since 2.6.22 answers.
KVM_GET_API_VERSION = 0xAE00
KVM_CREATE_VM = 0xAE01
KVM_API_VERSION = 12
# A minimal firmware that loads -kernel without probing the machine; QEMU finds it by name in its data directory.
QBOOT = Path("/usr/share/qemu/qboot.rom")


def kvm_refuses(device: str = "/dev/kvm") -> str:
    """Why `device` cannot make a VM ("" when it can): its API version and a VM asked for, no guest run."""
    try:
        fd = os.open(device, os.O_RDWR | os.O_CLOEXEC)
    except OSError as exc:
        return f"{device}: {exc.strerror}"
    try:
        version = fcntl.ioctl(fd, KVM_GET_API_VERSION)
        if version != KVM_API_VERSION:
            return f"{device}: KVM API version {version}, not {KVM_API_VERSION}"
        os.close(fcntl.ioctl(fd, KVM_CREATE_VM, 0))
    except OSError as exc:
        return f"{device}: {exc.strerror}"
    finally:
        os.close(fd)
    return ""


def qemu_options(image: Path, console: Path, qboot: bool = False) -> list[str]:
    """QEMU's options for KVM on `image` alone, its serial console into `console`; `qboot`: that firmware (pure)."""
    return [
        *(["-bios", QBOOT.name] if qboot else []),
        "-enable-kvm",
        "-cpu",
        "host",
        "-m",
        "256M",
        "-smp",
        "1",
        "-nodefaults",
        "-no-reboot",
        "-display",
        "none",
        "-monitor",
        "none",
        "-serial",
        f"file:{console}",
        "-kernel",
        str(image),
        "-append",
        "console=ttyS0 earlyprintk=serial,ttyS0,115200 panic=-1",
    ]


def cpu_seconds(pid: int) -> float:
    """The user and system CPU seconds of process `pid` so far (infinite when /proc cannot say)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime
    except (OSError, IndexError, ValueError):
        return float("inf")


def kernel_starts(
    image: Path,
    seconds: float = BANNER_SECONDS,
    after_setup: float = AFTER_SETUP_SECONDS,
    after_setup_cpu: float = AFTER_SETUP_CPU_SECONDS,
) -> bool:
    """Whether the kernel `image` prints its banner under KVM within `seconds`, and, once the console's
    first line is seen, before both `after_setup` seconds and `after_setup_cpu` of QEMU's CPU seconds
    have passed since it (QEMU is killed after)."""
    with tempfile.TemporaryDirectory(prefix="pytest-rdma-kvm-") as scratch:
        console = Path(scratch) / "console"
        console.touch()
        qemu = subprocess.Popen(
            ["qemu-system-x86_64", *qemu_options(image, console, QBOOT.exists())],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + seconds
            setup: tuple[float, float] | None = None  # when the first line came: wall clock, QEMU's CPU
            while time.monotonic() < deadline:
                printed = console.read_bytes()
                if BANNER in printed:
                    return True
                if printed and setup is None:
                    setup = (time.monotonic(), cpu_seconds(qemu.pid))
                if (
                    setup is not None
                    and time.monotonic() - setup[0] >= after_setup
                    and cpu_seconds(qemu.pid) - setup[1] >= after_setup_cpu
                ):
                    return False
                if qemu.poll() is not None:  # QEMU refused KVM, or the guest reset (-no-reboot)
                    return BANNER in console.read_bytes()
                time.sleep(POLL_SECONDS)
            return False
        finally:
            qemu.kill()
            qemu.wait()
