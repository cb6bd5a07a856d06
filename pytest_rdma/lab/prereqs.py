"""What the lab needs on a Debian host, and installing what is missing (idempotently).

Everything is checked first and only the missing pieces are installed, so a second run
costs a few dpkg queries. Nothing here runs a shell: commands are argument lists.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

BASE_PACKAGES = (
    "qemu-system-x86", "linux-image-amd64", "rdma-core", "ibverbs-providers", "ibverbs-utils",
    "libibverbs-dev", "python3-pyverbs", "iproute2", "kmod",
)
# Only for siw, which Debian's kernel does not ship as a module: built from linux-source.
SIW_BUILD_PACKAGES = ("linux-source", "make", "gcc", "xz-utils")
# The lab's kernel-warning module (lab/kwarn.py) needs only the compiler and the headers.
MODULE_BUILD_PACKAGES = ("make", "gcc")
MIN_FREE_BYTES = 2 << 30  # the siw build and a VM's overlays need a little room


class LabError(RuntimeError):
    """A lab prerequisite is missing or broken; the message says what to do."""


@dataclass(frozen=True)
class Kernel:
    release: str
    image: Path

    @property
    def has_rxe(self) -> bool:
        return bool(glob.glob(f"/lib/modules/{self.release}/kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko*"))

    @property
    def headers(self) -> Path:
        return Path(f"/usr/src/linux-headers-{self.release}")


def _version_key(release: str) -> list[int]:
    return [int(part) for part in re.findall(r"\d+", release)]


def find_kernel() -> Kernel | None:
    """The newest installed distro kernel that ships rdma_rxe."""
    kernels = []
    for image in glob.glob("/boot/vmlinuz-*"):
        release = image.removeprefix("/boot/vmlinuz-")
        kernel = Kernel(release, Path(image))
        if kernel.has_rxe:
            kernels.append(kernel)
    return max(kernels, key=lambda k: _version_key(k.release), default=None)


def missing_packages(packages: tuple[str, ...]) -> list[str]:
    missing = []
    for package in packages:
        result = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package],
                                capture_output=True, text=True, check=False)
        if "install ok installed" not in result.stdout:
            missing.append(package)
    return missing


def apt_install(packages: list[str], log: callable = print) -> None:
    if not packages:
        return
    if os.geteuid() != 0:
        raise LabError(f"the lab needs these Debian packages: {' '.join(packages)}\n"
                       f"install them as root: apt-get install {' '.join(packages)}")
    log(f"lab: installing {' '.join(packages)} (apt-get)")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages],
                   check=True, env=env, stdout=subprocess.DEVNULL)


def ensure_virtme(log: callable = print) -> Path:
    """virtme-ng's `vng`, installed with pip into this interpreter's environment if missing."""
    bindir = Path(sys.executable).parent
    vng = bindir / "vng"
    if not vng.exists():
        log("lab: installing virtme-ng (pip)")
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "virtme-ng"], check=True)
    if not vng.exists():
        raise LabError(f"virtme-ng installed, but {vng} is missing; install it with: pip install virtme-ng")
    return vng


def check_disk(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(path).free
    if free < MIN_FREE_BYTES:
        raise LabError(f"only {free >> 20} MiB free under {path}; the lab needs about "
                       f"{MIN_FREE_BYTES >> 20} MiB. Free some space or point --cache elsewhere.")


def ensure(want_siw: bool, cache: Path, log: callable = print) -> Kernel:
    """Install what is missing for the lab and return the kernel to boot."""
    if not Path("/etc/debian_version").exists():
        raise LabError("the lab installs its prerequisites with apt and supports Debian (12) hosts; "
                       "on other hosts install qemu, a kernel with rdma_rxe, rdma-core and pyverbs yourself "
                       "and run pytest --rdma-dev NAME against real devices")
    check_disk(cache)
    apt_install(missing_packages(BASE_PACKAGES), log)
    kernel = find_kernel()
    if kernel is None:
        raise LabError("no installed kernel ships rdma_rxe.ko (looked in /boot and /lib/modules); "
                       "install one: apt-get install linux-image-amd64")
    headers = f"linux-headers-{kernel.release}"
    if want_siw:
        apt_install(missing_packages((*SIW_BUILD_PACKAGES, headers)), log)
    elif os.geteuid() == 0:
        # Only the lab's own kernel-warning test needs these without siw; a user who may not
        # install them loses that one test, which then says what to install (lab/kwarn.py).
        apt_install(missing_packages((*MODULE_BUILD_PACKAGES, headers)), log)
    if not shutil.which("qemu-system-x86_64"):
        raise LabError("qemu-system-x86_64 is not on PATH; install it: apt-get install qemu-system-x86")
    return kernel
