"""The vocabulary of the verb catalogue.

`pytest_rdma/verbs.py` describes each verb with these small frozen records. They are
pure data: nothing here imports pytest or pyverbs, so the catalogue can be loaded,
validated and rendered (coverage, docs) on a host with no RDMA stack at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# How a verb reports failure (see each page's RETURN VALUE section).
RETURNS_ERRNO = "errno"            # 0 on success, an errno value on failure
RETURNS_POINTER = "pointer"        # an object, or NULL with errno set
RETURNS_VOID = "void"              # cannot fail
RETURNS_COUNT = "count"            # >= 0 on success, -1 (or negative) with errno set
RETURN_CONVENTIONS = (RETURNS_ERRNO, RETURNS_POINTER, RETURNS_VOID, RETURNS_COUNT)

DIRECTIONS = ("in", "out", "inout")


@dataclass(frozen=True)
class Param:
    """One C parameter of a verb."""

    name: str
    ctype: str
    direction: str = "in"
    nullable: bool = False
    # For a mask or flags argument: the name of the flag set (in catalogue.flags) it draws from.
    flags: str | None = None
    doc: str = ""


@dataclass(frozen=True)
class Error:
    """An errno the page lists, the condition under which it is returned, and which
    claims exercise it (or why none can)."""

    errno: str
    when: str
    covered_by: tuple[str, ...] = ()     # claim ids of the same verb
    untestable: str = ""                 # why no check can provoke it, if none can


@dataclass(frozen=True)
class Claim:
    """A testable promise of the page, paraphrased in our own words.

    `kind` names a check kind (pytest_rdma.checks registry); `params` is the data that
    kind needs. A claim that no check can exercise has kind "untestable" and says why.
    """

    id: str
    kind: str
    says: str
    section: str
    params: Mapping[str, Any] = field(default_factory=dict)
    untestable: str = ""


@dataclass(frozen=True)
class Resource:
    """A resource a verb consumes or produces, optionally in a given state."""

    kind: str                 # "context", "pd", "cq", "qp", "srq", "mr", "flow", ...
    state: str | None = None  # e.g. "RESET" for a QP
    role: str = ""            # the parameter it is passed as, when it is one


@dataclass(frozen=True)
class Transition:
    resource: str
    before: str
    after: str


@dataclass(frozen=True)
class Contract:
    requires: tuple[Resource, ...] = ()
    produces: tuple[Resource, ...] = ()
    moves: tuple[Transition, ...] = ()
    destroys: tuple[Resource, ...] = ()


@dataclass(frozen=True)
class Verb:
    name: str
    man: str                  # "ibv_modify_qp(3)"
    prototype: str
    returns: str              # one of RETURN_CONVENTIONS
    summary: str
    params: tuple[Param, ...] = ()
    errors: tuple[Error, ...] = ()
    claims: tuple[Claim, ...] = ()
    contract: Contract = Contract()
    family: str = "ibv"       # "ibv" (libibverbs) or another API family such as "det"
    counterpart: str = ""     # for another family: the ibv verb with the same semantics
    # Tables the page gives, kept as data (e.g. required attributes per QP type).
    tables: Mapping[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.name} [{self.man}]"

    def claim(self, claim_id: str) -> Claim:
        for claim in self.claims:
            if claim.id == claim_id:
                return claim
        raise KeyError(f"{self.name} has no claim {claim_id!r}")
