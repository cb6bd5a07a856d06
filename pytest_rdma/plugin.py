"""pytest-rdma's pytest plugin: options, device selection, the report header.

Precedence for the device list: --rdma-dev on the command line, else the `rdma_devices`
ini setting, else the RDMA_DEV environment variable (comma separated).
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from pytest_rdma import guard, report
from pytest_rdma.provider import pyverbs_env
from pytest_rdma.provider.identity import sysfs_devices

HELP_DEV = "RDMA device to test (repeatable: every device-using check runs once per device), e.g. rxe0"
HELP_PORT = "port number of the device to use (default 1)"
HELP_GID = "GID table index to use for address vectors (default 0)"

DEVICES_KEY = pytest.StashKey[list]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rdma", "RDMA verbs conformance (pytest-rdma)")
    group.addoption("--rdma-dev", action="append", dest="rdma_dev", metavar="NAME", default=None, help=HELP_DEV)
    group.addoption("--rdma-port", dest="rdma_port", type=int, metavar="N", default=None, help=HELP_PORT)
    group.addoption("--rdma-gid-index", dest="rdma_gid_index", type=int, metavar="N", default=None, help=HELP_GID)
    parser.addini("rdma_devices", HELP_DEV, type="linelist", default=[])
    parser.addini("rdma_port", HELP_PORT, default="1")
    parser.addini("rdma_gid_index", HELP_GID, default="0")
    report.add_options(parser)
    guard.add_options(parser)


def chosen_devices(config: pytest.Config) -> list[str]:
    names = config.getoption("rdma_dev") or config.getini("rdma_devices")
    if not names and os.environ.get("RDMA_DEV"):
        names = [n.strip() for n in os.environ["RDMA_DEV"].split(",") if n.strip()]
    # "--rdma-dev rxe0,siw0" is accepted too; order is kept, duplicates dropped.
    flat = [n.strip() for name in names for n in name.split(",") if n.strip()]
    return list(dict.fromkeys(flat))


def port_of(config: pytest.Config) -> int:
    value = config.getoption("rdma_port")
    return int(value if value is not None else config.getini("rdma_port"))


def gid_index_of(config: pytest.Config) -> int:
    value = config.getoption("rdma_gid_index")
    return int(value if value is not None else config.getini("rdma_gid_index"))


def validate_devices(names: list[str]) -> None:
    """A usage error, naming what to do, for devices that cannot be tested here."""
    if not names:
        return
    existing = sysfs_devices()
    if not existing:
        raise pytest.UsageError(
            f"--rdma-dev {','.join(names)}: this host has no RDMA devices (/sys/class/infiniband is empty "
            "or missing).\nLoad a provider driver, or run './pytest-rdma lab' to test Soft-RoCE (rxe) "
            "and soft-iWARP (siw) in a VM.")
    unknown = [name for name in names if name not in existing]
    if unknown:
        raise pytest.UsageError(
            f"unknown RDMA device {', '.join(unknown)}; devices on this host: {', '.join(existing)}.\n"
            "Pass one of them with --rdma-dev NAME.")
    why = pyverbs_env.problem()
    if why:
        raise pytest.UsageError(why)


def validate_ports(names: list[str], port: int, gid_index: int) -> None:
    """A usage error, before any check runs, for a port that is absent or down or a GID index that is empty.

    Without it every check of the device would error in setup with the same message.
    """
    from pytest_rdma.provider.device import DeviceNotUsable, check_usable

    for name in names:
        try:
            check_usable(name, port, gid_index)
        except DeviceNotUsable as exc:
            raise pytest.UsageError(str(exc)) from None


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "rdma_verb(name): the verb a generated check exercises")
    names = chosen_devices(config)
    # Workers inherit the controller's validated options; validating once is enough.
    if not hasattr(config, "workerinput"):
        validate_devices(names)
        validate_ports(names, port_of(config), gid_index_of(config))
    config.stash[DEVICES_KEY] = names
    from pytest_rdma import fixtures

    config.pluginmanager.register(fixtures, "rdma-fixtures")
    report.register(config)
    guard.register(config)


def pytest_report_header(config: pytest.Config) -> list[str]:
    names = config.stash.get(DEVICES_KEY, [])
    if not names:
        found = ", ".join(sysfs_devices()) or "none"
        return [f"rdma: no device chosen (--rdma-dev NAME); devices on this host: {found}"]
    from pytest_rdma.provider.describe import describe

    lines = [f"rdma: port {port_of(config)}, gid index {gid_index_of(config)}"]
    for name in names:
        lines.append("rdma: " + describe(name).header_line())
    return lines


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "rdma_dut" not in metafunc.fixturenames:
        return
    names = metafunc.config.stash.get(DEVICES_KEY, [])
    if names:
        metafunc.parametrize("rdma_dut", names, indirect=True, scope="session", ids=names)


def device_param(request: Any) -> str:
    name = getattr(request, "param", None)
    if name is None:
        found = ", ".join(sysfs_devices()) or "none"
        pytest.skip(f"no RDMA device chosen: pass --rdma-dev NAME (devices on this host: {found})")
    return name


_first_test_marked = False


def pytest_runtest_logstart(nodeid: str, location: tuple) -> None:
    # The lab measures cold start to the first test from the host: it watches for this file.
    # Checked once per process, not per test: in the lab each check is a 9p round trip.
    global _first_test_marked
    marks = os.environ.get("PYTEST_RDMA_LAB_MARKS")
    if marks and not _first_test_marked:
        _first_test_marked = True
        first = os.path.join(marks, "first-test")
        if not os.path.exists(first):
            with open(first, "w") as handle:
                handle.write(nodeid + "\n")
