"""Check kinds: how a claim of a known kind becomes runnable checks.

A check kind has two halves:
- `expand(verb, claim)` -> the concrete cases, pure and deterministic (runs at collection,
  on any host);
- `run(case, dut, res)` -> exercises the device; returns on conformance, raises
  `Deviation` or `Unsupported` (pytest_rdma.outcomes) otherwise.

Kinds register themselves by name with `@check_kind`; a catalogue claim names its kind,
so a new verb description whose claims use known kinds yields checks with no new code.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Callable

from pytest_rdma.catalogue.model import Claim, Verb


@dataclass(frozen=True)
class Case:
    """One generated check: a claim of a verb applied to one set of parameters."""

    verb: str
    claim: str
    kind: str
    variant: str                         # readable, e.g. "RC-INIT>RTR-without-AV"
    params: Mapping[str, Any] = field(default_factory=dict)
    # Why the case cannot run anywhere (e.g. no provider of its API family exists).
    blocked: str = ""

    @property
    def id(self) -> str:
        return f"{self.claim}-{self.variant}" if self.variant else self.claim


Expand = Callable[[Verb, Claim], Iterable[Case]]
Run = Callable[[Case, Any, Any], None]  # (case, dut, resources)


@dataclass(frozen=True)
class CheckKind:
    name: str
    expand: Expand
    run: Run
    doc: str = ""


KINDS: dict[str, CheckKind] = {}


def check_kind(name: str) -> Callable[[type], type]:
    """Register a class with static `expand` and `run` as the check kind `name`."""

    def register(cls: type) -> type:
        if name in KINDS:
            raise ValueError(f"check kind {name!r} registered twice")
        KINDS[name] = CheckKind(name, cls.expand, cls.run, (cls.__doc__ or "").strip())
        return cls

    return register


def known_kinds() -> frozenset[str]:
    # Importing the package imports every kind module, which registers them.
    import pytest_rdma.checks  # noqa: F401

    return frozenset(KINDS) | {"untestable"}
