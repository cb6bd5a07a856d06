"""Which devices a run tests: the names given, checked against the host, and the messages that say what to do."""

from __future__ import annotations

import ctypes

import pytest

from pytest_rdma.command_line import lab_command
from pytest_rdma.provider.identity import devices_with_drivers, sysfs_devices

LIBRARY = "libibverbs.so.1"


def loadable(soname: str) -> bool:
    try:
        ctypes.CDLL(soname)
        return True
    except OSError:
        return False


def device_list() -> str:
    found = devices_with_drivers()
    return ", ".join(f"{name} ({driver})" for name, driver in found) or "none"


def no_device_error() -> pytest.UsageError:
    return pytest.UsageError(
        f"no RDMA device named: give one with --rdma-dev NAME (or rdma_devices in an ini file, or RDMA_DEV in the "
        f"environment). Devices on this host: {device_list()}."
        + (
            ""
            if sysfs_devices()
            else f" No RDMA device here? '{lab_command()}' tests Soft-RoCE and soft-iWARP in a VM."
        )
    )


def validate_devices(names: tuple[str, ...], flag: str = "--rdma-dev") -> None:
    """A usage error, naming what to do, for devices that cannot be tested here."""
    existing = sysfs_devices()
    unknown = [name for name in names if name not in existing]
    if unknown:
        where = (
            f"devices on this host: {device_list()}"
            if existing
            else (
                "this host has no RDMA devices (/sys/class/infiniband is empty or missing); load a provider driver, "
                f"or run '{lab_command()}' to test Soft-RoCE (rxe) and soft-iWARP (siw) in a VM"
            )
        )
        raise pytest.UsageError(f"unknown RDMA device {', '.join(unknown)}: {where}. Pass one with {flag} NAME.")
    if not loadable(LIBRARY):
        raise pytest.UsageError(
            f"{LIBRARY} (libibverbs) cannot be loaded: install rdma-core's library and providers "
            "(Debian/Ubuntu: apt-get install libibverbs1 ibverbs-providers; Fedora: dnf install libibverbs)"
        )
