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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

# Every program the lab runs (on the host, or in its VM, which boots the host's root) and every
# program virtme-ng looks up for the lab's `vng --run KERNEL --exec CMD`, with the Debian package
# that ships it. A program missing on a fresh machine fails far from its cause (no busybox: "the
# VM printed nothing"), so tests/unit/test_lab_packages.py scans the lab's code and virtme-ng for
# programs that are not here, checks that each package is installed by the lab (or by every
# Debian), and asks dpkg -S where the package is installed; tests/fresh/ runs the lab on a
# machine that has nothing else.
EXECUTABLES: dict[str, str] = {
    # The bootstrap (./pytest-rdma) and the lab's installs.
    "env": "coreutils",
    "bash": "bash",
    "dirname": "coreutils",
    "id": "coreutils",
    "touch": "coreutils",
    "grep": "grep",
    "dpkg-query": "dpkg",
    "apt-get": "apt",
    "apt-cache": "apt",  # the kernel matrix's self-test asks which 6.12 build the archive has
    "/usr/bin/python3": "python3-minimal",
    # The VM: QEMU and virtme-ng's lookups. virtme-ng runs virtme-run and virtiofsd through /bin/sh.
    "sh": "dash",
    "qemu-system-x86_64": "qemu-system-x86",
    # QEMU's C daemon, which the lab's translator (lab/virtiofsd.py), first on virtme-ng's PATH as
    # "virtiofsd", runs for a virtio-fs root.
    "/usr/lib/qemu/virtiofsd": "qemu-system-common",
    # virtme-ng packs a statically linked busybox into the initramfs the distro kernel needs
    # (its virtio and overlay drivers are modules); Debian's "busybox" package is dynamic.
    "busybox": "busybox-static",
    # virtme-ng reads the kernel's version with `file` (and `strings` when file gives none), and
    # checks that busybox is static with `file -L`: without file it stops with a traceback.
    "file": "file",
    "strings": "binutils",
    # virtme-ng resolves module dependencies with modprobe (depmod when modules.dep is missing);
    # the lab's guest loads rdma_rxe and siw.
    "modprobe": "kmod",
    "depmod": "kmod",
    "insmod": "kmod",
    # The lab's guest: dummy netdevs, rdma links, the kernel log.
    "ip": "iproute2",
    "rdma": "iproute2",
    "dmesg": "util-linux",
    "setpriv": "util-linux",  # the lab's run as nobody (lab/guest.py unprivileged_run)
    # Building siw.ko (and the lab's kernel-warning module) out of tree; C reproducers; tar also packs
    # each run's scratch in the VM (guest.keep_scratch).
    "tar": "tar",
    "xz": "xz-utils",
    # Unpacking a zstd-compressed kernel (Debian's 6.12) to boot it without its decompressor (lab/boot_image.py).
    "zstd": "zstd",
    "make": "make",
    "gcc": "gcc",
    # The Allure HTML report (report/allure_html.py): Allure 3 from npm, run by node.
    "node": "nodejs",
    "npm": "npm",
    # pytest-rdma selftest: the HTML report's test opens it in a headless browser; the fresh-machine
    # test (tests/fresh/) makes its machine with debootstrap.
    "chromium": "chromium",
    "debootstrap": "debootstrap",
}
# Priority "required": on every Debian system, a debootstrap minbase included, so never installed.
REQUIRED_PACKAGES = frozenset({"coreutils", "bash", "dash", "grep", "dpkg", "apt", "tar", "util-linux"})
# What the lab installs; the bootstrap (./pytest-rdma) installs Python's packages before, from its own
# packages=(...) list, which the test reads there.
BASE_PACKAGES = (
    "qemu-system-x86",
    "qemu-system-common",
    "busybox-static",
    "file",
    "linux-image-amd64",
    "rdma-core",
    "ibverbs-providers",
    "ibverbs-utils",
    "libibverbs-dev",
    "python3-pyverbs",
    # The data path's connection manager (iWARP connects only through it) and its tools.
    "librdmacm1",
    "librdmacm-dev",
    "rdmacm-utils",
    "iproute2",
    "kmod",
    # C reproducers compile against libibverbs-dev; without recommends, gcc comes without libc6-dev.
    "gcc",
    "libc6-dev",
    "binutils",
    "zstd",
)
# Only for siw, which Debian's kernel does not ship as a module: built from linux-source.
SIW_BUILD_PACKAGES = ("linux-source", "make", "gcc", "xz-utils")
# The lab's kernel-warning module (lab/kwarn.py) needs only the compiler and the headers.
MODULE_BUILD_PACKAGES = ("make", "gcc")
# The Allure HTML report: installed when the program is missing (a newer Node.js from elsewhere is kept).
REPORT_EXECUTABLES = ("node", "npm")
# Allure 3.18's `generate` runs on Debian 12's Node.js 18.20 (measured in a fresh bookworm root);
# its dependencies declare 20.19, but only for its watch mode, which the lab does not use.
MIN_NODE_MAJOR = 18
APT_LOCK_WAIT_S = 900
MIN_FREE_BYTES = 2 << 30  # the siw build and a VM's overlays need a little room


# Where the lab's progress lines go (print, or a caller's collector).
Log = Callable[[str], None]


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


# Debian's metapackage of its default kernel: it depends on that kernel's image (linux-image-6.1.0-56-amd64).
DEFAULT_KERNEL_PACKAGE = "linux-image-amd64"


def distro_default_release(depends: str | None = None) -> str | None:
    """The release of the kernel Debian's metapackage installs, from its Depends (given, or dpkg's)."""
    if depends is None:
        found = subprocess.run(
            ["dpkg-query", "-W", "-f=${Depends}", DEFAULT_KERNEL_PACKAGE], capture_output=True, text=True, check=False
        )
        depends = found.stdout if found.returncode == 0 else ""
    return release_in(depends)


def release_in(depends: str) -> str | None:
    """The kernel release a metapackage's dependencies name: "linux-image-6.1.0-56-amd64 (= 6.1.192-2)" (pure)."""
    match = re.search(r"\blinux-image-(\d[^\s,(|]*)", depends)
    return match.group(1) if match else None


def archive_release(metapackage: str) -> str | None:
    """The release the archive's `metapackage` (linux-image-6.12-amd64) would install now, installed or not."""
    found = subprocess.run(["apt-cache", "depends", metapackage], capture_output=True, text=True, check=False)
    depends = [line for line in found.stdout.splitlines() if line.strip().startswith("Depends:")]  # not its name
    return release_in("\n".join(depends)) if found.returncode == 0 else None


def find_kernel(release: str | None = None) -> Kernel | None:
    """The installed kernel `release` if it ships rdma_rxe; without a release, the distro's default kernel
    (a kernel matrix installs others beside it, which must not change what a plain lab run boots), else the
    newest installed that ships rdma_rxe."""
    if release is None:
        default = distro_default_release()
        chosen = find_kernel(default) if default else None
        if chosen is not None:
            return chosen
    kernels = []
    for image in glob.glob(f"/boot/vmlinuz-{release or '*'}"):
        kernel = Kernel(image.removeprefix("/boot/vmlinuz-"), Path(image))
        if kernel.has_rxe:
            kernels.append(kernel)
    return max(kernels, key=lambda k: _version_key(k.release), default=None)


def kernel_series(release: str) -> str:
    """The upstream series of a kernel release, which names its source package: "6.12.117+deb12-amd64" -> "6.12"."""
    return ".".join(re.findall(r"\d+", release)[:2])


def release_packages(release: str, want_siw: bool) -> tuple[str, ...]:
    """What booting `release` in the lab needs from Debian: its image and headers (the lab's kernel
    module), and for siw, which Debian does not ship as a module, the source of its series (pure)."""
    packages = (f"linux-image-{release}", f"linux-headers-{release}")
    return (*packages, f"linux-source-{kernel_series(release)}") if want_siw else packages


def missing_packages(packages: tuple[str, ...]) -> list[str]:
    """Those of `packages` dpkg does not have installed, asked in one dpkg-query.

    One call, not one per package: each reads dpkg's whole status database, and the lab asks
    about some 25 packages before every boot (0.1 s each on an idle machine, 3 to 4 s in all
    at load 20, where one call took 0.01 to 0.2 s). A package dpkg never heard of is reported on
    stderr (exit 1) and is missing as one not installed is."""
    if not packages:
        return []
    listed = subprocess.run(
        ["dpkg-query", "-W", "-f=${Package}\t${Status}\n", *packages], capture_output=True, text=True, check=False
    ).stdout
    return [package for package in packages if package.split(":")[0] not in installed_names(listed)]


def installed_names(listing: str) -> set[str]:
    """The packages of dpkg-query's "Package<TAB>Status" lines whose status is installed (pure)."""
    return {
        name
        for name, _, status in (line.partition("\t") for line in listing.splitlines())
        if "install ok installed" in status  # as the status word was read one package at a time
    }


def apt_install(packages: list[str], log: Log = print, purpose: str = "") -> None:
    """Install `packages` with apt-get (as root), or say which to install; `purpose` says what for."""
    if not packages:
        return
    if os.geteuid() != 0:
        raise LabError(
            f"the lab needs these Debian packages{purpose}: {' '.join(packages)}\n"
            f"install them as root: apt-get install {' '.join(packages)}"
        )
    log(f"lab: installing {' '.join(packages)} (apt-get)")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    # Another apt (unattended upgrades, a second lab) may hold dpkg's lock: wait for it, never fail on it.
    installed = subprocess.run(
        [
            "apt-get",
            "-o",
            f"DPkg::Lock::Timeout={APT_LOCK_WAIT_S}",
            "install",
            "-y",
            "-qq",
            "--no-install-recommends",
            *packages,
        ],
        check=False,
        env=env,
        stdout=subprocess.DEVNULL,
    )
    if installed.returncode != 0:
        raise LabError(
            f"apt-get install {' '.join(packages)} failed (exit {installed.returncode}); "
            f"check that the archive has them: apt-cache policy {' '.join(packages)}"
        )


def lab_packages() -> set[str]:
    """Every package the lab may install (the kernel's headers aside, whose name is the kernel's)."""
    return {
        *BASE_PACKAGES,
        *SIW_BUILD_PACKAGES,
        *MODULE_BUILD_PACKAGES,
        *(EXECUTABLES[name] for name in REPORT_EXECUTABLES),
    }


def packages_for_missing(executables: tuple[str, ...]) -> list[str]:
    """The packages of those `executables` that are not on PATH (one that is there is kept, whatever ships it)."""
    return list(dict.fromkeys(EXECUTABLES[name] for name in executables if shutil.which(name) is None))


def _node_version() -> str | None:
    node = shutil.which("node")
    if node is None:
        return None
    done = subprocess.run([node, "--version"], capture_output=True, text=True, check=False)
    return done.stdout.strip() or None


def ensure_report_tools(log: Log = print) -> None:
    """Node.js and npm for the Allure HTML report: Debian's if missing, and a Node.js new enough."""
    apt_install(
        packages_for_missing(REPORT_EXECUTABLES), log, purpose=" for the Allure HTML report (--no-html skips it)"
    )
    version = _node_version()
    found = re.match(r"v?(\d+)\.", version or "")
    if found is None or int(found.group(1)) < MIN_NODE_MAJOR:
        raise LabError(
            f"the Allure HTML report needs Node.js {MIN_NODE_MAJOR} or newer; "
            f"{shutil.which('node') or 'node'} is {version or 'missing or not runnable'}. "
            f"Install a newer Node.js, or pass --no-html to skip the report."
        )


def ensure_virtme(log: Log = print) -> Path:
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
        raise LabError(
            f"only {free >> 20} MiB free under {path}; the lab needs about "
            f"{MIN_FREE_BYTES >> 20} MiB. Free some space or point --cache elsewhere."
        )


def ensure(want_siw: bool, cache: Path, log: Log = print, html: bool = False, release: str | None = None) -> Kernel:
    """Install what is missing for the lab (and, with `html`, for its HTML report); the kernel to boot:
    `release` (installed with its headers, and its source for siw, when missing), or the newest installed."""
    if not Path("/etc/debian_version").exists():
        raise LabError(
            "the lab installs its prerequisites with apt and supports Debian (12) hosts; "
            "on other hosts install qemu, a kernel with rdma_rxe, rdma-core and pyverbs yourself "
            "and run pytest --rdma-dev NAME against real devices"
        )
    check_disk(cache)
    apt_install(missing_packages(BASE_PACKAGES), log)
    if release is not None:
        apt_install(missing_packages(release_packages(release, want_siw)), log, purpose=f" to boot {release}")
        kernel = find_kernel(release)
        if kernel is None:
            raise LabError(no_rxe(release))
    else:
        kernel = find_kernel()
    if kernel is None:
        raise LabError(
            "no installed kernel ships rdma_rxe.ko (looked in /boot and /lib/modules); "
            "install one: apt-get install linux-image-amd64"
        )
    headers = f"linux-headers-{kernel.release}"
    if want_siw:
        # A release of its own came with the source of its series (release_packages), not the default's.
        tools = SIW_BUILD_PACKAGES if release is None else tuple(p for p in SIW_BUILD_PACKAGES if p != "linux-source")
        apt_install(missing_packages((*tools, headers)), log)
    elif os.geteuid() == 0:
        # Only the lab's own kernel-warning test needs these without siw; a user who may not
        # install them loses that one test, which then says what to install (lab/kwarn.py).
        apt_install(missing_packages((*MODULE_BUILD_PACKAGES, headers)), log)
    if not shutil.which("qemu-system-x86_64"):
        raise LabError("qemu-system-x86_64 is not on PATH; install it: apt-get install qemu-system-x86")
    if html:
        ensure_report_tools(log)
    return kernel


def no_rxe(release: str) -> str:
    """Why the lab cannot boot `release` (installed, or not)."""
    if not Path(f"/boot/vmlinuz-{release}").exists():
        return (
            f"kernel {release} is not installed (no /boot/vmlinuz-{release}); "
            f"install it: apt-get install linux-image-{release}"
        )
    return (
        f"kernel {release} does not ship rdma_rxe.ko (in /lib/modules/{release}/kernel/drivers/infiniband/sw/rxe), "
        "so the lab cannot make its devices on it"
    )
