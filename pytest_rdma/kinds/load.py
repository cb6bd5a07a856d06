"""Every claim kind, registered: import this module to have the whole vocabulary in KINDS."""

from __future__ import annotations

from pytest_rdma.kinds import calls, counterpart, datapath, events, queries, srq, state_table, windows, wr
from pytest_rdma.kinds.registry import KINDS, UNTESTABLE, Kind

MODULES = (calls, counterpart, datapath, events, queries, srq, state_table, windows, wr)


def known_kinds() -> frozenset[str]:
    """The names a claim may use: every registered kind, and "untestable"."""
    return frozenset(KINDS) | {UNTESTABLE}


__all__ = ["KINDS", "Kind", "known_kinds"]
