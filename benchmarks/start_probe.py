"""A pytest plugin for finding where a lab run's start goes (issue 29, cold start): `-p benchmarks.start_probe`.

Each process (the xdist controller and each worker) appends its marks, as guest uptime seconds, to
`start-probe.txt` in $PYTEST_RDMA_LAB_MARKS (the lab's results directory): when the process started
(from /proc/self/stat), when this plugin was imported, and when each phase of pytest's start began.
"""

from __future__ import annotations

import os
from collections.abc import Generator

import pytest

_TICKS = os.sysconf("SC_CLK_TCK")


def _uptime() -> float:
    with open("/proc/uptime") as handle:
        return float(handle.read().split()[0])


def _process_start() -> float:
    with open("/proc/self/stat") as handle:
        text = handle.read()
    return int(text[text.rindex(")") + 2 :].split()[19]) / _TICKS


_marks: list[tuple[str, float]] = [("process start", _process_start()), ("probe imported", _uptime())]
_seen: set[str] = set()
_spent: dict[str, float] = {}


def _timed(owner: object, name: str, label: str) -> None:
    """Replace owner.name by a wrapper adding its seconds to _spent[label]."""
    original = getattr(owner, name)

    def wrapper(*args: object, **kwargs: object) -> object:
        began = _uptime()
        try:
            return original(*args, **kwargs)
        finally:
            _spent[label] = _spent.get(label, 0.0) + _uptime() - began

    setattr(owner, name, wrapper)


def _instrument() -> None:
    from pytest_rdma import guard, plugin, report
    from pytest_rdma.explore import hooks as explore_hooks
    from pytest_rdma.provider import describe

    _marks.append(("plugin imported", _uptime()))
    _timed(plugin, "catalogue_of", "catalogue_of")
    _timed(plugin, "validate_ports", "validate_ports (opens each device)")
    _timed(plugin.outputs, "check", "outputs.check")
    _timed(report, "register", "report.register")
    _timed(guard, "register", "guard.register")
    _timed(explore_hooks, "register", "explore.register")
    _timed(describe, "describe", "describe (header, opens each device)")
    _timed(plugin, "add_kinds", "add_kinds")


def _mark(name: str) -> None:
    if name not in _seen:
        _seen.add(name)
        _marks.append((name, _uptime()))


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    _mark("configure begins")


def pytest_plugin_registered(plugin: object) -> None:
    if getattr(plugin, "__name__", "") == "pytest_rdma.plugin" and "instrumented" not in _seen:
        _seen.add("instrumented")
        _instrument()


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    _mark("sessionstart ends")


def pytest_report_header(config: pytest.Config) -> None:
    _mark("report header")


@pytest.hookimpl(optionalhook=True)  # xdist's: the lab runs without it (-p no:xdist)
def pytest_xdist_setupnodes(config: pytest.Config) -> None:
    _mark("xdist setupnodes")


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_collection(session: pytest.Session) -> Generator[None, object, object]:
    _mark("collection begins")
    try:
        return (yield)
    finally:
        _mark("collection ends")


def pytest_runtest_logstart(nodeid: str) -> None:
    _mark("first check starts")


def pytest_unconfigure(config: pytest.Config) -> None:
    where = os.environ.get("PYTEST_RDMA_LAB_MARKS")
    if not where:
        return
    role = getattr(config, "workerinput", {}).get("workerid", "controller")
    lines = [f"{os.getpid()} {role} {name} {at:.2f}" for name, at in _marks]
    lines += [f"{os.getpid()} {role} spent in {label}: {seconds:.2f} s" for label, seconds in _spent.items()]
    with open(os.path.join(where, "start-probe.txt"), "a") as out:
        out.write("\n".join(lines) + "\n")
