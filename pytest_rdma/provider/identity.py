"""Who provides a device: the facts every result is attributed to.

The driver is derived from the system (the kernel's nldev driver id, else the sysfs
driver of the parent device), never from the device's name: an `mlx5_0` may be renamed
and an `rxe0` could be called anything.
"""

from __future__ import annotations

import functools
import glob
import os
import platform
import re
import subprocess
import sysconfig
from dataclasses import asdict, dataclass
from pathlib import Path

from pytest_rdma.provider import netlink

SYSFS_INFINIBAND = Path("/sys/class/infiniband")

# Kernel driver of a parent PCI/auxiliary device -> the verbs provider it implies.
KERNEL_DRIVER_TO_PROVIDER = {
    "mlx5_core": "mlx5",
    "mlx4_core": "mlx4",
    "bnxt_en": "bnxt_re",
    "bnxt_re": "bnxt_re",
    "irdma": "irdma",
    "i40iw": "irdma",
    "efa": "efa",
    "hns3": "hns",
    "hns_roce_hw_v2": "hns",
    "erdma": "erdma",
    "mana": "mana",
    "mana_ib": "mana",
    "qede": "qedr",
    "qedr": "qedr",
    "cxgb4": "cxgb4",
    "vmw_pvrdma": "vmw_pvrdma",
    "hfi1": "hfi1",
    "qib": "qib",
    "ib_qib": "qib",
}

NODE_TYPES = {1: "CA", 2: "SWITCH", 3: "ROUTER", 4: "RNIC", 5: "USNIC", 6: "USNIC_UDP", 7: "UNSPECIFIED"}


@dataclass(frozen=True)
class DeviceIdentity:
    name: str
    driver: str
    node_type: str
    transport: str
    firmware: str
    vendor_id: str
    vendor_part_id: str
    kernel: str
    rdma_core: str
    kernel_package: str = ""  # the kernel image's Debian package version (dpkg), "unknown" where none says

    def as_dict(self) -> dict[str, str]:
        return asdict(self)

    def header_line(self) -> str:
        return (
            f"{self.name}: driver={self.driver} node={self.node_type} transport={self.transport} "
            f"fw={self.firmware} vendor={self.vendor_id}:{self.vendor_part_id} "
            f"kernel={self.kernel} ({self.kernel_package}) rdma-core={self.rdma_core}"
        )


@functools.cache
def record_fields(identity: DeviceIdentity) -> dict[str, str]:
    """identity.as_dict(), made once per identity: every check's record takes it (the recorder's, the lab's running
    file), and dataclasses.asdict copies field by field, the largest part of the recorder's time per check once.
    Read only: a record copies it (report/phase.item_info)."""
    return identity.as_dict()


def sysfs_devices() -> list[str]:
    """The RDMA devices the kernel has, read from sysfs (no pyverbs needed)."""
    if not SYSFS_INFINIBAND.is_dir():
        return []
    return sorted(entry.name for entry in SYSFS_INFINIBAND.iterdir())


def devices_with_drivers() -> list[tuple[str, str]]:
    """(name, driver) of every RDMA device the kernel has, without opening any."""
    try:
        facts = netlink.device_facts()
    except netlink.NetlinkUnavailable:
        facts = {}
    return [(name, facts.get(name, {}).get("driver") or _sysfs_driver(name)) for name in sysfs_devices()]


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def _sysfs_driver(name: str) -> str:
    link = SYSFS_INFINIBAND / name / "device" / "driver"
    if link.exists():
        kernel_driver = os.path.basename(os.path.realpath(link))
        return KERNEL_DRIVER_TO_PROVIDER.get(kernel_driver, kernel_driver)
    return "unknown"


@functools.cache
def rdma_core_version() -> str:
    """libibverbs' version suffix names the rdma-core release (libibverbs.so.1.14.44.0 -> 44.0).

    Once per process, and in this interpreter's multiarch directory first: each glob of /usr/lib/*
    lists every directory there, which took a few tenths of a second per device opened under TCG."""
    multiarch = sysconfig.get_config_var("MULTIARCH")
    first = (f"/usr/lib/{multiarch}/libibverbs.so.1.*",) if multiarch else ()
    for pattern in (
        *first,
        "/usr/lib/*/libibverbs.so.1.*",
        "/usr/lib*/libibverbs.so.1.*",
        "/usr/local/lib*/libibverbs.so.1.*",
    ):
        for path in sorted(glob.glob(pattern)):
            match = re.search(r"libibverbs\.so\.1\.\d+\.(\d+\.\d+)$", path)
            if match:
                return match.group(1)
    return "unknown"


@functools.cache
def kernel_package_version(release: str) -> str:
    """The version of the package that installed kernel `release` (Debian's linux-image-RELEASE), as dpkg
    knows it: two builds of one release differ there ("6.1.0-56-amd64" is 6.1.192-2). Once per process."""
    try:
        found = subprocess.run(
            ["dpkg-query", "-W", "-f=${Version}", f"linux-image-{release}"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return found.stdout.strip() if found.returncode == 0 and found.stdout.strip() else "unknown"


def identify(
    name: str, vendor_id: int, vendor_part_id: int, firmware: str = "", node_type: int | None = None
) -> DeviceIdentity:
    """Combine nldev, sysfs and the device's own attributes into one identity."""
    try:
        facts = netlink.device_facts().get(name, {})
    except netlink.NetlinkUnavailable:
        facts = {}
    driver = facts.get("driver") or _sysfs_driver(name)
    if driver == "unknown":
        driver = _sysfs_driver(name)
    node = _read(SYSFS_INFINIBAND / name / "node_type")  # e.g. "1: CA"
    node_name = node.split(":", 1)[-1].strip() if node else NODE_TYPES.get(node_type or 0, "unknown")
    transport = facts.get("protocol") or ("iw" if node_name == "RNIC" else "ib")
    return DeviceIdentity(
        name=name,
        driver=driver,
        node_type=node_name,
        transport=transport,
        firmware=facts.get("firmware") or firmware or _read(SYSFS_INFINIBAND / name / "fw_ver") or "none",
        vendor_id=f"0x{vendor_id:x}",
        vendor_part_id=str(vendor_part_id),
        kernel=platform.release(),
        rdma_core=rdma_core_version(),
        kernel_package=kernel_package_version(platform.release()),
    )
