"""Every built-in claim kind, registered: import this module to have the whole vocabulary in KINDS.

As a plugin (plugin.py registers it) it offers the built-in kinds through `pytest_rdma_kinds`, the hook
every other plugin adds its kinds with (hooks.py).
"""

from __future__ import annotations

from pytest_rdma.kinds import (
    calls,
    capacity,
    counterpart,
    datapath,
    events,
    queries,
    relations,
    srq,
    state_table,
    windows,
    wr,
)
from pytest_rdma.kinds.registry import KINDS, UNTESTABLE, Kind

MODULES = (calls, capacity, counterpart, datapath, events, queries, relations, srq, state_table, windows, wr)
BUILTIN: tuple[Kind, ...] = tuple(KINDS.values())  # as the modules above registered them


def pytest_rdma_kinds() -> tuple[Kind, ...]:
    return BUILTIN


def known_kinds() -> frozenset[str]:
    """The names a claim may use: every registered kind, and "untestable"."""
    return frozenset(KINDS) | {UNTESTABLE}


def kind_schemas() -> dict[str, type]:
    """Each kind that declares its claims' params, with its schema (catalogue/params.py)."""
    return {name: k.params for name, k in KINDS.items() if k.params is not None}


__all__ = ["KINDS", "Kind", "kind_schemas", "known_kinds"]
