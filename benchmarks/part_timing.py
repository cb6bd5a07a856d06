"""A pytest plugin for the benchmark: how much of each check the plugin's own parts take.

Loaded with `-p benchmarks.part_timing` (after the plugin has registered its parts, in
pytest_configure); writes {part: seconds} to the path in $PYTEST_RDMA_BENCH_PARTS when pytest
unconfigures. Each hook implementation of a part's registered plugins is wrapped so that its own
time is added to the part's total: a hook that calls others (results.py hands each record to the
reporters) counts without them, and a wrapper (wrapper=True, hookwrapper=True) counts only its code
before and after its yield, not the hooks it wraps. Wrapping costs two clock reads per hook call;
the benchmark runs it as a step of its own, so the timed runs carry none of it. Only the time
inside checks counts (each item's runtest protocol, its reports included), as the checks' window does.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import time
from collections.abc import Callable, Generator
from typing import Any

import pytest

ENV = "PYTEST_RDMA_BENCH_PARTS"

# The parts (issue 29 item 1), each the plugins pytest_rdma registers for it under these names.
PARTS: dict[str, tuple[str, ...]] = {
    "recorder": (
        "rdma-recorder",
        "rdma-results",
        "rdma-deviation-report",
        "rdma-whole-checks",
        "rdma-summary",
        "rdma-guard-findings",
        "rdma-output-failures",
    ),
    "leak guard": ("rdma-guard-leaks",),
    "kernel-log guard": ("rdma-guard-kernel-log",),
    "json": ("rdma-json",),
    "allure": ("rdma-allure",),
    "junit": ("rdma-junit",),
    "case preparation": ("rdma", "rdma-fixtures", "rdma-user-fixtures", "rdma-kinds"),
}


class Clock:
    """Own time per part: the time of a part's hook less the time of the parts' hooks it called."""

    def __init__(self, now: Callable[[], float] = time.perf_counter) -> None:
        self.now = now
        self.totals: dict[str, float] = {}
        self.active = False  # inside a check (its runtest protocol): what the checks' window counts
        self._children: list[float] = []  # per open segment: time spent in timed segments inside it

    def timed(self, part: str, function: Callable[..., Any], *args: Any) -> Any:
        if not self.active:
            return function(*args)
        self._children.append(0.0)
        started = self.now()
        try:
            return function(*args)
        finally:
            elapsed = self.now() - started
            inner = self._children.pop()
            self.totals[part] = self.totals.get(part, 0.0) + elapsed - inner
            if self._children:
                self._children[-1] += elapsed

    def generator(self, part: str, wrapped: Generator[Any, Any, Any]) -> Generator[Any, Any, Any]:
        """`wrapped` (a hook wrapper's generator) forwarded step by step, each step timed."""
        value = self.timed(part, next, wrapped)
        while True:
            try:
                sent = yield value
            except GeneratorExit:
                wrapped.close()
                raise
            except BaseException as exc:  # noqa: BLE001 - pluggy throws the inner hooks' exception in
                step: Callable[..., Any] = functools.partial(wrapped.throw, exc)
            else:
                step = functools.partial(wrapped.send, sent)
            try:
                value = self.timed(part, step)
            except StopIteration as stop:
                return stop.value


CLOCK = Clock()


def wrap(part: str, function: Callable[..., Any]) -> Callable[..., Any]:
    if inspect.isgeneratorfunction(function):

        @functools.wraps(function)
        def timed_wrapper(*args: Any, **kwargs: Any) -> Generator[Any, Any, Any]:
            return (yield from CLOCK.generator(part, function(*args, **kwargs)))

        return timed_wrapper

    @functools.wraps(function)
    def timed(*args: Any, **kwargs: Any) -> Any:
        return CLOCK.timed(part, functools.partial(function, **kwargs), *args)

    return timed


def instrument(pluginmanager: pytest.PytestPluginManager) -> dict[str, int]:
    """Every hook implementation of the parts' plugins timed; how many per part."""
    owners: dict[int, str] = {}
    for part, names in PARTS.items():
        for name in names:
            plugin = pluginmanager.get_plugin(name)
            if plugin is not None:
                owners[id(plugin)] = part
    wrapped: dict[str, int] = {}
    for caller in pluginmanager.hook.__dict__.values():
        for impl in getattr(caller, "get_hookimpls", list)():
            owner = owners.get(id(impl.plugin))
            if owner is not None:
                impl.function = wrap(owner, impl.function)
                wrapped[owner] = wrapped.get(owner, 0) + 1
    return wrapped


_wrapped: dict[str, int] = {}


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get(ENV):
        _wrapped.update(instrument(config.pluginmanager))


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    # Outside every other: a check's setup, call, teardown and their reports (the records written).
    CLOCK.active = bool(_wrapped)
    try:
        return (yield)
    finally:
        CLOCK.active = False


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    path = os.environ.get(ENV)
    if path and not hasattr(config, "workerinput"):
        with open(path, "w", encoding="utf-8") as handle:
            json.dump({"seconds": CLOCK.totals, "hooks": _wrapped}, handle)
