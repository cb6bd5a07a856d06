"""Whether KVM starts a kernel here, decided in seconds.

`/dev/kvm` can exist where KVM cannot boot the distro kernel: on this project's machines (nested
virtualisation) QEMU with KVM gets through the BIOS and the bzImage's setup code ("Probing EDD ...
ok") and then hangs without the kernel printing a line, so the lab's full probe (a whole virtme-ng
boot) waited out its 60 s limit on every fresh machine. A kernel that KVM runs prints its banner on
an early serial console within a second or two; one it cannot run prints nothing. So QEMU is started
bare (no virtme-ng, no root filesystem) on the kernel with an early console, and the banner decides:
seen, KVM starts the kernel (the full boot probe still follows, and takes seconds there); not seen
within BANNER_SECONDS, it does not. Nothing here runs a shell.
"""

from __future__ import annotations

import subprocess
import tempfile
import time
from pathlib import Path

# "Linux version 6.1.0-56-amd64 ...": the first line a kernel prints (early_printk on ttyS0).
BANNER = b"Linux version "
BANNER_SECONDS = 10.0  # a KVM guest prints it in about a second; TCG is never probed here
POLL_SECONDS = 0.1


def qemu_options(image: Path, console: Path) -> list[str]:
    """QEMU's options for KVM on `image` alone, its serial console into `console` (pure)."""
    return [
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


def kernel_starts(image: Path, seconds: float = BANNER_SECONDS) -> bool:
    """Whether the kernel `image` prints its banner under KVM within `seconds` (QEMU is killed after)."""
    with tempfile.TemporaryDirectory(prefix="pytest-rdma-kvm-") as scratch:
        console = Path(scratch) / "console"
        console.touch()
        qemu = subprocess.Popen(
            ["qemu-system-x86_64", *qemu_options(image, console)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                if BANNER in console.read_bytes():
                    return True
                if qemu.poll() is not None:  # QEMU refused KVM, or the guest reset (-no-reboot)
                    return BANNER in console.read_bytes()
                time.sleep(POLL_SECONDS)
            return False
        finally:
            qemu.kill()
            qemu.wait()
