"""A pytest plugin for the benchmark: when each phase of a run happened, and how checks ended.

Loaded with `-p benchmarks.timing_plugin`; writes one JSON document to the path in
$PYTEST_RDMA_BENCH_TIMING when pytest unconfigures. Times are `time.monotonic()`, which on
Linux is one clock for every process of the machine, so the in-VM runner can set them against
its own (process start, exit). It adds two clock reads per check: nothing measurable.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Generator
from typing import Any

import pytest

ENV = "PYTEST_RDMA_BENCH_TIMING"

_marks: dict[str, float] = {"plugin_imported": time.monotonic()}
_started: list[str] = []
_outcomes: dict[str, str] = {}


def _mark(name: str) -> None:
    _marks.setdefault(name, time.monotonic())


def _controller(config: pytest.Config) -> bool:
    return not hasattr(config, "workerinput")


def pytest_configure(config: pytest.Config) -> None:
    _mark("configure")


def pytest_sessionstart(session: pytest.Session) -> None:
    _mark("sessionstart")


def pytest_collection_finish(session: pytest.Session) -> None:
    _mark("collection_finish")


def pytest_runtest_logstart(nodeid: str, location: tuple) -> None:
    _mark("first_test_start")
    _started.append(nodeid)


def pytest_runtest_logfinish(nodeid: str, location: tuple) -> None:
    _marks["last_test_end"] = time.monotonic()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # The most telling phase wins: a failure anywhere, else xfail/skip, else a pass.
    if hasattr(report, "wasxfail"):
        outcome = "xfailed" if report.skipped else "xpassed"
    elif report.failed:
        outcome = "failed" if report.when == "call" else "error"
    else:
        outcome = report.outcome
    rank = ("error", "failed", "xpassed", "xfailed", "skipped", "passed")
    current = _outcomes.get(report.nodeid)
    if current is None or rank.index(outcome) < rank.index(current):
        _outcomes[report.nodeid] = outcome


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> Generator[None, Any, Any]:
    # Around every other sessionfinish: the reporters write their files here.
    _mark("sessionfinish_start")
    try:
        return (yield)
    finally:
        _mark("sessionfinish_end")


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    path = os.environ.get(ENV)
    if not path or not _controller(config):
        return
    _mark("unconfigure")
    tally: dict[str, int] = {}
    for outcome in _outcomes.values():
        tally[outcome] = tally.get(outcome, 0) + 1
    document = {"marks": _marks, "tests": len(_started), "outcomes": tally, "nodeids": _started}
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(document, handle)
