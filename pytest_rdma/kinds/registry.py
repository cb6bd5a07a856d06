"""The registry of claim kinds and the decorator a kind module registers its run function with."""

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
        KINDS[name] = Kind(name, expand, run, (run.__doc__ or "").strip().splitlines()[0], params, behaviours)
        return run

    return register
