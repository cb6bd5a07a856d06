"""The registry of claim kinds: the decorator a built-in kind module registers its run function with, and
the kinds other plugins add through the `pytest_rdma_kinds` hook (hooks.py), installed at configure."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from pytest_rdma.cases import Case, axis_cases
from pytest_rdma.catalogue.model import Claim, Verb
from pytest_rdma.kinds.behaviours import Named

UNTESTABLE = "untestable"

Expand = Callable[[Verb, Claim], Iterable[Case]]


@dataclass(frozen=True)
class Kind:
    name: str
    expand: Expand
    run: Callable[..., None]  # (check: Check) -> None
    doc: str
    params: type | None = None  # the schema of its claims' params (catalogue/params.py); None: not declared yet
    behaviours: tuple[Named, ...] = ()  # its sub-behaviours, by the params key naming one


KINDS: dict[str, Kind] = {}


def kind(
    name: str,
    expand: Expand = axis_cases,
    params: type | None = None,
    behaviours: tuple[Named, ...] = (),
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Register `run` as the kind `name`, its cases made by `expand`, its claims' data declared by `params`,
    the sub-behaviours its claims pick by name in `behaviours` (kinds/behaviours.py)."""

    def register(run: Callable[..., None]) -> Callable[..., None]:
        if name in KINDS:
            raise ValueError(f"claim kind {name!r} registered twice")
        KINDS[name] = define(name, run, expand, params, behaviours)
        return run

    return register


def define(
    name: str,
    run: Callable[..., None],
    expand: Expand = axis_cases,
    params: type | None = None,
    behaviours: tuple[Named, ...] = (),
) -> Kind:
    """A kind, for a plugin's `pytest_rdma_kinds` to return: its run's docstring's first line says what it checks."""
    doc = (run.__doc__ or "").strip().splitlines()[0] if run.__doc__ else name
    return Kind(name, expand, run, doc, params, behaviours)


def install(kinds: Iterable[Kind]) -> list[str]:
    """Add the kinds not registered yet; the names added. A kind already there (the same one) is left as it is."""
    added: list[str] = []
    for new in kinds:
        if not isinstance(new, Kind):
            raise ValueError(f"pytest_rdma_kinds returned {new!r}, not a Kind (pytest_rdma.kinds.registry.define)")
        known = KINDS.get(new.name)
        if known is not None and known != new:
            raise ValueError(f"claim kind {new.name!r} is added twice (pytest_rdma_kinds): once is the most")
        if known is None:
            KINDS[new.name] = new
            added.append(new.name)
    return added
