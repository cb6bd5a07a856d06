"""Cases: what one generated check is about, built once at collection from the catalogue.

A `Case` is frozen and carries everything a reporter needs (verb, claim in words, its
sources, transports, the layer that decides it, readable parameters, stable id), so no
reporter parses an id or a message to get them back. Its `spec` is what the claim's kind
runs: the claim's call, expectations and steps with this case's axis values put in.

Expansion is pure and deterministic: the same catalogue gives the same cases, in the same
order, on any host.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TypedDict, Union, cast

from pytest_rdma.catalogue.model import Axes, Cap, Claim, Dev, Expect, Source, Step, Value, Verb, substitute

# A relation a query claim states between two fields: (left, op, right), each side a field's name or a
# number, as the "relation" kind reads it.
Relation = tuple[Value, str, Value]


class Spec(TypedDict, total=False):
    """What a case's kind runs (Case.spec): the claim's data with the case's axis values put in.

    Read-only at run time (frozen): mappings are MappingProxyType, sequences tuples.
    """

    # The claim's own data, in every case (make_case).
    call: Mapping[str, Value]
    expect: Union[tuple[Expect, ...], str]  # the claim's expectations; the state table: ACCEPT, REJECT or STAY
    errnos: tuple[str, ...]
    needs: tuple[Cap, ...]
    when: tuple[Cap, ...]
    steps: tuple[Step, ...]
    params: Mapping[str, object]  # the kind's own data (Claim.params), read as its schema (Check.params)
    vars: Axes
    # What a kind's expansion adds: kinds/counterpart.py,
    counterpart: str
    counterpart_claim: str
    # kinds/queries.py,
    relations: tuple[Relation, ...]
    where: str
    given: Value
    expected: Value
    # kinds/state_table.py: the move (start state, "A>B", its mask's flags) and what it must do.
    start: str
    step: str
    flags: tuple[str, ...]
    why: str
    reflect: bool
    reflect_only: tuple[str, ...]
    extra_bits: int
    bad: tuple[str, Union[int, str]]  # (field, a value beyond its limit or the limit's name)
    gate: Cap
    only_if: Cap
    fields: Mapping[str, Value]
    grown: Mapping[str, int]


@dataclass(frozen=True)
class Case:
    """One generated check: a claim of a verb applied to one set of parameters."""

    verb: str
    claim: str
    kind: str
    variant: str  # readable, e.g. "RC-INIT>RTR-without-AV"
    says: str  # the claim in our words
    sources: tuple[Source, ...]  # the page section first, then any other source
    transports: tuple[str, ...]
    layer: str  # who decides the outcome: provider, kernel or libibverbs
    axes: tuple[tuple[str, str], ...] = ()  # readable parameters: (name, value)
    spec: Spec = field(default_factory=Spec)
    blocked: str = ""  # why the case cannot run anywhere (no provider of its API family)
    family: str = "ibv"

    @property
    def id(self) -> str:
        """The case id: "<claim>-<variant>"; with the verb, the stable id a waiver names."""
        return f"{self.claim}-{self.variant}" if self.variant else self.claim

    @property
    def stable_id(self) -> str:
        """Device-independent, so one expectations file serves every device of a driver."""
        return f"test_{self.verb}[{self.id}]"

    @property
    def ref(self) -> str:
        return self.sources[0].text if self.sources else ""

    @property
    def title(self) -> str:
        """The claim in words plus the case: what a report shows as the result's name."""
        shown = ", ".join(f"{name} {value}" for name, value in self.axes)
        return f"{self.says} [{shown}]" if shown else self.says


def frozen(data: object) -> object:
    """A deep copy that cannot be mutated: mappings become read-only, lists tuples."""
    if isinstance(data, Mapping):
        return MappingProxyType({key: frozen(value) for key, value in data.items()})
    if isinstance(data, (list, tuple)):
        return tuple(frozen(item) for item in data)
    return data


def combinations(over: Mapping[object, tuple[object, ...]]) -> Iterator[dict[str, Value]]:
    """Every combination of the axes, in the order written; a tuple key zips several axes."""
    names: list[tuple[str, ...]] = []
    columns: list[tuple[tuple[Value, ...], ...]] = []
    for key, options in over.items():
        keys = key if isinstance(key, tuple) else (key,)
        names.append(keys)
        # Under a tuple key, each option is a tuple of values, one per axis the key names.
        columns.append(
            tuple(cast("tuple[Value, ...]", option) if isinstance(key, tuple) else (option,) for option in options)
        )
    for row in itertools.product(*columns):
        values: dict[str, Value] = {}
        for keys, option in zip(names, row):
            values.update(zip(keys, option))
        yield values


def readable(value: object) -> str:
    """A parameter as a person reads it: names, not reprs.

    "IBV_QPT_UD" -> "UD"; {"port": Dev("attr.phys_port_cnt", plus=1)} -> "port=attr.phys_port_cnt+1";
    Cap("attr.max_srq") -> "attr.max_srq nonzero"; Cap("transport", "transport", ("ib", "roce")) ->
    "transport ib/roce".
    """
    if isinstance(value, str):
        return value.removeprefix("IBV_QPT_")
    if isinstance(value, (tuple, list)):
        return "+".join(readable(item) for item in value)
    if isinstance(value, Mapping):
        return ", ".join(f"{key}={readable(item)}" for key, item in value.items())
    if isinstance(value, Dev):
        times = f"*{value.times}" if value.times != 1 else ""
        plus = f"{value.plus:+d}" if value.plus else ""
        return f"{value.path}{times}{plus}"
    if isinstance(value, Cap):
        return f"transport {'/'.join(value.values)}" if value.test == "transport" else f"{value.attr} {value.test}"
    if dataclasses.is_dataclass(value) and hasattr(value, "path"):
        return str(value.path)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return " ".join(readable(getattr(value, f.name)) for f in dataclasses.fields(value))
    return str(value)


def make_case(verb: Verb, claim: Claim, variant: str, values: Axes, **spec: object) -> Case:
    """A case of `claim` with its axis `values` put into the claim's data and into `spec`."""
    base: dict[str, object] = {
        "call": claim.call,
        "expect": claim.expect,
        "errnos": claim.errnos,
        "needs": claim.needs,
        "when": claim.when,
        "steps": claim.steps,
        "params": claim.params,
        "vars": dict(values),
    }
    base.update(spec)
    return Case(
        verb=verb.name,
        claim=claim.id,
        kind=claim.kind,
        variant=variant,
        says=claim.says,
        sources=verb.sources(claim),
        transports=claim.transports,
        layer=claim.layer,
        axes=tuple((str(name), readable(value)) for name, value in values.items()),
        spec=cast(Spec, frozen(substitute(base, values))),  # base's keys, the claim's data and the kind's (Spec)
        family=verb.family,
    )


def axis_cases(verb: Verb, claim: Claim) -> Iterator[Case]:
    """The default expansion: one case per combination of the claim's axes, named by `variant`."""
    for values in combinations(claim.over) if claim.over else iter([{}]):
        variant = claim.variant.format(**{k: readable(v) for k, v in values.items()}) if claim.variant else ""
        yield make_case(verb, claim, variant, values)
