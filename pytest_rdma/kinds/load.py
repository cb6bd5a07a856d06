"""Every built-in claim kind, registered: import this module to have the whole vocabulary in KINDS.

As a plugin (plugin.py registers it) it offers the built-in kinds through `pytest_rdma_kinds`, the hook
every other plugin adds its kinds with (hooks.py).
"""

from __future__ import annotations

from pytest_rdma.catalogue.params import field_types
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


def kind_behaviours() -> dict[str, dict[str, frozenset[str]]]:
    """Each kind with sub-behaviours: the params key that picks one -> the names registered for it."""
    return {name: {b.param: b.names() for b in k.behaviours} for name, k in KINDS.items() if k.behaviours}


def validation_key() -> frozenset[str]:
    """What of the kinds the catalogue's validation depends on: their names, each schema's fields and each
    sub-behaviour's names (the key of a validation's marker, catalogue/validated.py, so a change is seen)."""
    schemas = {
        f"{name}({', '.join(f'{k}: {t}' for k, t in sorted(field_types(schema).items()))})"
        for name, schema in kind_schemas().items()
    }
    named = {
        f"{name}.{key}={'|'.join(sorted(names))}"
        for name, keys in kind_behaviours().items()
        for key, names in keys.items()
    }
    return known_kinds() | schemas | named


__all__ = ["KINDS", "Kind", "kind_behaviours", "kind_schemas", "known_kinds", "validation_key"]
