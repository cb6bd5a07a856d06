"""Guards around every check: resource leaks and kernel faults, attributed to the check.

Roles, one module each:
- leaks.py: per device, this process's kernel objects before and after a check;
- kmsg.py: the kernel log, its records and what counts as a fault (pure, plus a reader);
- kernel_log.py: marks the kernel log before a check and scans it after;
- findings.py: how a finding is attached (report field, report section, teardown error);
- summary.py: findings onto reports, and the end-of-run list of them.

`register` is the plugin's one entry point (called from plugin.py); the options
(--rdma-leaks, --rdma-kernel-log: fail, report or off) are in pytest_rdma/settings.py.
"""

from __future__ import annotations

import pytest

from pytest_rdma import settings
from pytest_rdma.guard.findings import MARK_EXPECTED

__all__ = ["register"]


def register(config: pytest.Config) -> None:
    """Register the guards that can work here; the report header says which do not, and why."""
    from pytest_rdma.guard import summary

    config.addinivalue_line(
        "markers",
        f"{MARK_EXPECTED}: this check provokes kernel log records on purpose; "
        "they are attached to it but do not fail it",
    )
    options = settings.get(config)
    notes: list[str] = []
    config.pluginmanager.register(summary, "rdma-guard-findings")
    if options.leaks != "off":
        notes.append(_register_leaks(config, options.leaks))
    if options.kernel_log != "off":
        notes.append(_register_kernel_log(config, options.kernel_log))
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(summary.GuardSummary([n for n in notes if n]), "rdma-guard-summary")


def _register_leaks(config: pytest.Config, mode: str) -> str:
    from pytest_rdma.guard.leaks import LeakGuard
    from pytest_rdma.provider import netlink

    # Per process (each object's owner PID), not the device's totals: xdist workers sharing a
    # device, or anyone else using it, are never blamed on this process's checks.
    try:
        netlink.process_counts()
    except OSError as exc:
        return f"rdma guard: leak check off: {exc}"
    config.pluginmanager.register(LeakGuard(mode), "rdma-guard-leaks")
    return f"rdma guard: leaks: {mode}"


def _drivers_of(devices: tuple[str, ...]) -> frozenset[str]:
    """The drivers of this run's devices (and its peer on this host), as the kernel names them."""
    from pytest_rdma.provider.identity import devices_with_drivers

    return frozenset(driver for name, driver in devices_with_drivers() if name in devices and driver != "unknown")


def _register_kernel_log(config: pytest.Config, mode: str) -> str:
    from pytest_rdma.guard import kmsg

    if not kmsg.readable():
        return f"rdma guard: kernel log check off: {kmsg.KMSG} is not readable (needs root or kernel.dmesg_restrict=0)"
    from pytest_rdma.guard.kernel_log import KernelLogGuard

    options = settings.get(config)
    local_peer = (options.peer,) if options.peer and not options.peer_host else ()
    guard = KernelLogGuard(mode, kmsg.KmsgReader(), lambda: _drivers_of(options.devices + local_peer))
    config.pluginmanager.register(guard, "rdma-guard-kernel-log")
    return f"rdma guard: kernel log: {mode}"
