"""The catalogue's validation: every problem of every entry, one line each, "<verb>: <field>: <what>".

Run by a unit test over pytest_rdma.verbs and by the plugin when a session starts (with any
extra descriptions), never at import. The kinds a claim may name are passed in, so this
module imports no kind and no code that runs checks.
"""

from __future__ import annotations

import dataclasses
import difflib
import errno as errno_module
import re
import string
from collections.abc import Collection, Iterable, Iterator, Mapping

from pytest_rdma.catalogue.model import (
    DIRECTIONS,
    LAYERS,
    RETURN_CONVENTIONS,
    SOURCE_KINDS,
    TRANSPORTS,
    Cap,
    Claim,
    Contract,
    Dev,
    Step,
    Var,
    Verb,
)
from pytest_rdma.catalogue.params import behaviour_problems, schema_problems
from pytest_rdma.ibv.constants import VALUES
from pytest_rdma.ibv.enums import ENUMS

UNTESTABLE = "untestable"
# Each kind with sub-behaviours: the params key that picks one -> the names registered (kinds/behaviours.py).
Behaviours = Mapping[str, Mapping[str, Collection[str]]]
FAMILIES = ("ibv", "det", "rdmacm")
DEV_ROOTS = ("attr", "attr_ex", "port", "gid", "port_num", "gid_index", "name", "transport", "context", "process")

QP_STATES = frozenset({"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"})
# The resources a contract may name, with the states the pages give them.
RESOURCE_STATES: Mapping[str, frozenset[str]] = {
    **{
        kind: frozenset()
        for kind in (
            "device_list",
            "device",
            "context",
            "gid",
            "pd",
            "cq",
            "cq_ex",
            "comp_channel",
            "srq",
            "mr",
            "mw",
            "ah",
            "flow",
            "flow_action",
            "xrcd",
            "rwq_ind_table",
            "td",
            "parent_domain",
            "dm",
            "counters",
            "async_event",
            "event_channel",
            "cm_id",
        )
    },
    "port": frozenset({"DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"}),
    "qp": QP_STATES,
    "wq": frozenset({"RESET", "RDY", "ERR"}),
    # DET (another API family): its QP moves through the same IB states by name.
    "det_qp": QP_STATES,
}
ANY_STATE = "any"
REQUESTED_STATE = "requested"
ANY_ERRNO = "errno"  # an Error entry for a page that names no specific errno

# A constant's name (not one still to be filled: IBV_QPS_{state}). RDMA_ names are rdma_cma.h's, and only
# librdmacm's verbs use them: elsewhere "RDMA_READ" may be a plain label, such as an axis value.
IBV_NAME = re.compile(r"\bIBV_[A-Z0-9_]+\b(?!\{)")
RDMACM_NAME = re.compile(r"\b(?:IBV|RDMA)_[A-Z0-9_]+\b(?!\{)")
PAGE_REF = re.compile(r"\b[a-z_0-9]+\(\d\)")
# Every errno name of the platform, aliases included: errorcode keeps one name per value (ENOTSUP for 95 on
# Linux), while the call layer reports EOPNOTSUPP and EAGAIN, the names the pages use.
ERRNO_NAMES = frozenset(name for name in dir(errno_module) if name.startswith("E") and name.isupper())


class CatalogueError(ValueError):
    """The catalogue describes something impossible; `problems` lists each one."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        noun = "problem" if len(problems) == 1 else "problems"
        super().__init__(f"the verb catalogue has {len(problems)} {noun}:\n  " + "\n  ".join(problems))


def walk(data: object) -> Iterator[object]:
    """Every value nested in mappings, sequences and dataclasses (keys included)."""
    yield data
    if isinstance(data, Mapping):
        for key, value in data.items():
            yield from walk(key)
            yield from walk(value)
    elif isinstance(data, (list, tuple, set, frozenset)):
        for item in data:
            yield from walk(item)
    elif dataclasses.is_dataclass(data) and not isinstance(data, type):
        for f in dataclasses.fields(data):
            yield from walk(getattr(data, f.name))


def ibv_names(data: object, family: str = "ibv") -> set[str]:
    """The constants' names `data` uses (verbs.h's; rdma_cma.h's too for the rdmacm family)."""
    pattern = RDMACM_NAME if family == "rdmacm" else IBV_NAME
    return {name for value in walk(data) if isinstance(value, str) for name in pattern.findall(value)}


def _placeholders(text: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(text) if field}


def _axes(claim: Claim) -> set[str]:
    names: set[str] = set()
    for key in claim.over:
        names.update(key if isinstance(key, tuple) else (key,))
    return names


def _check_axes(verb: Verb, claim: Claim, where: str) -> Iterator[str]:
    axes = _axes(claim)
    for key, options in claim.over.items():
        if not isinstance(options, tuple) or not options:
            yield f"{where}: over[{key!r}]: give a non-empty tuple of values"
            continue
        if isinstance(key, tuple):
            for option in options:
                if not isinstance(option, tuple) or len(option) != len(key):
                    yield f"{where}: over[{key!r}]: each value must be a tuple of {len(key)}"
                    break
    for name in sorted(_placeholders(claim.variant) - axes):
        yield f"{where}: variant {claim.variant!r} names {{{name}}}, which is not an axis of 'over'"
    known_vars = axes | set(verb.tables.get("vars", {}))
    # `needs` is the device's word (unsupported); `when` is the process's (not exercised): never mixed.
    for cap in claim.needs if isinstance(claim.needs, tuple) else ():  # a Var: the axes give them
        if isinstance(cap, Cap) and cap.attr.startswith("process."):
            yield f"{where}: {cap.attr} is a fact of the process, not the device: put it in 'when'"
    for cap in claim.when:
        if not cap.attr.startswith("process."):
            yield f"{where}: 'when' names facts of the process (process.*), not {cap.attr}: put it in 'needs'"
    data = (claim.call, claim.expect, claim.steps, claim.params, claim.needs)
    for value in walk(data):
        if isinstance(value, Var) and value.name not in known_vars:
            yield f"{where}: Var({value.name!r}) is not an axis of the claim nor a variable of {verb.name}"
        if isinstance(value, Dev) and value.path.split(".")[0].split("&")[0] not in DEV_ROOTS and "{" not in value.path:
            yield f"{where}: Dev({value.path!r}): a device fact starts with one of {', '.join(DEV_ROOTS)}"
        if isinstance(value, str):
            for name in sorted(_placeholders(value) - axes - {"from", "to"}) if "{" in value else ():
                yield f"{where}: {value!r} names {{{name}}}, which is not an axis of 'over'"


def _check_claim(
    verb: Verb,
    claim: Claim,
    kinds: frozenset[str],
    schemas: Mapping[str, type] | None = None,
    behaviours: Behaviours | None = None,
) -> Iterator[str]:
    where = f"{verb.name}: claim {claim.id!r}"
    schema = (schemas or {}).get(claim.kind)
    if schema is not None:
        for problem in schema_problems(schema, claim.params):
            yield f"{where}: {problem}"
    for problem in behaviour_problems(claim.params, (behaviours or {}).get(claim.kind, {}), claim.over):
        yield f"{where}: {problem}"
    if claim.kind not in kinds:
        close = difflib.get_close_matches(claim.kind, kinds, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        yield f"{where}: unknown claim kind {claim.kind!r} ({hint}known: {', '.join(sorted(kinds))})"
    if claim.kind == UNTESTABLE and not claim.untestable.strip():
        yield f"{where}: kind 'untestable' needs a reason in 'untestable'"
    if claim.kind != UNTESTABLE and claim.untestable.strip():
        yield f"{where}: has kind {claim.kind!r} and an 'untestable' reason; choose one"
    if not claim.says.strip():
        yield f"{where}: 'says' is empty (paraphrase the promise)"
    if not claim.section.strip():
        yield f"{where}: 'section' is empty (cite the page's section, e.g. NOTES)"
    elif PAGE_REF.search(claim.section):
        yield f"{where}: section {claim.section!r} names a page: the page is the verb's 'man'; cite only its section"
    for transport in claim.transports:
        if transport not in TRANSPORTS:
            yield f"{where}: transports: {transport!r} is not one of {', '.join(TRANSPORTS)}"
    if claim.layer not in LAYERS:
        yield f"{where}: layer {claim.layer!r} is not one of {', '.join(LAYERS)}"
    for source in claim.also:
        if source.kind not in SOURCE_KINDS:
            yield f"{where}: also: source kind {source.kind!r} is not one of {', '.join(SOURCE_KINDS)}"
    for name in sorted(
        ibv_names((claim.call, claim.expect, claim.steps, claim.params, claim.over, claim.needs), verb.family)
        - set(VALUES)
    ):
        yield f"{where}: unknown flag or enum member {name} (not in verbs.h)"
    yield from _check_axes(verb, claim, where)


def _check_contract(verb: Verb, contract: Contract, names: Mapping[str, Verb]) -> Iterator[str]:
    params = {param.name for param in verb.params}
    for field, resources in (
        ("requires", contract.requires),
        ("produces", contract.produces),
        ("destroys", contract.destroys),
    ):
        for resource in resources:
            where = f"{verb.name}: contract.{field}"
            states = RESOURCE_STATES.get(resource.kind)
            if states is None:
                yield f"{where}: unknown resource kind {resource.kind!r} (known: {', '.join(sorted(RESOURCE_STATES))})"
                continue
            if resource.state is not None and resource.state not in states:
                known = ", ".join(sorted(states)) or "none"
                yield f"{where}: {resource.kind} has no state {resource.state!r} (known: {known})"
            if resource.role and re.split(r"\.|->", resource.role)[0] not in params:
                yield f"{where}: {resource.kind} role {resource.role!r} is not a parameter of {verb.name}"
    for move in contract.moves:
        states = RESOURCE_STATES.get(move.resource)
        if states is None:
            yield f"{verb.name}: contract.moves: unknown resource kind {move.resource!r}"
            continue
        for end, state, wildcard in (("before", move.before, ANY_STATE), ("after", move.after, REQUESTED_STATE)):
            if state != wildcard and state not in states:
                yield f"{verb.name}: contract.moves: {move.resource} {end} state {state!r} is unknown"
    if contract.destroyed_by and contract.destroyed_by not in names:
        yield f"{verb.name}: contract.destroyed_by: {contract.destroyed_by!r} is not in the catalogue"


def problems_of(
    verb: Verb,
    *,
    kinds: frozenset[str],
    names: Mapping[str, Verb],
    schemas: Mapping[str, type] | None = None,
    behaviours: Behaviours | None = None,
) -> list[str]:
    """Everything wrong with one verb; `names` is the whole catalogue (for cross-references)."""
    out: list[str] = []
    if verb.returns not in RETURN_CONVENTIONS:
        conventions = ", ".join(RETURN_CONVENTIONS)
        out.append(f"{verb.name}: returns: {verb.returns!r} is not a return convention ({conventions})")
    if not verb.man.strip():
        out.append(f"{verb.name}: man: empty (name the page, e.g. '{verb.name}(3)')")
    if verb.family not in FAMILIES:
        out.append(f"{verb.name}: family: unknown API family {verb.family!r} (known: {', '.join(FAMILIES)})")
    if verb.family not in ("ibv", "rdmacm") and not verb.counterpart:
        out.append(f"{verb.name}: counterpart: a {verb.family!r} verb must name its ibv counterpart")
    if verb.counterpart and names.get(verb.counterpart, verb).family != "ibv":
        out.append(f"{verb.name}: counterpart: {verb.counterpart!r} is not an ibv verb of the catalogue")
    if verb.counterpart and verb.counterpart not in names:
        out.append(f"{verb.name}: counterpart: {verb.counterpart!r} is not in the catalogue")
    seen: set[str] = set()
    for param in verb.params:
        where = f"{verb.name}: param {param.name!r}"
        if param.name in seen:
            out.append(f"{where}: defined twice")
        seen.add(param.name)
        if param.direction not in DIRECTIONS:
            out.append(f"{where}: direction {param.direction!r} is not one of {', '.join(DIRECTIONS)}")
        if param.flags is not None and param.flags not in ENUMS:
            out.append(f"{where}: flags {param.flags!r} is not an enum of verbs.h")
    claim_ids: set[str] = set()
    for claim in verb.claims:
        if claim.id in claim_ids:
            out.append(f"{verb.name}: claim {claim.id!r}: duplicate claim id")
        claim_ids.add(claim.id)
        out.extend(_check_claim(verb, claim, kinds, schemas, behaviours))
        for step in (s for s in walk(claim) if isinstance(s, Step)):
            if step.verb not in names:
                out.append(f"{verb.name}: claim {claim.id!r}: step calls {step.verb!r}, which is not in the catalogue")
    for error in verb.errors:
        where = f"{verb.name}: error {error.errno}"
        if error.errno not in ERRNO_NAMES and error.errno != ANY_ERRNO:
            out.append(f"{where}: errno: {error.errno!r} is not an errno name (nor {ANY_ERRNO!r})")
        for claim_id in error.covered_by:
            if claim_id not in claim_ids:
                out.append(f"{where}: covered_by: no claim {claim_id!r} in {verb.name}")
        if not error.covered_by and not error.untestable.strip():
            out.append(f"{where}: neither covered_by a claim nor marked untestable (say why)")
    for name in sorted(ibv_names(verb.tables, verb.family) - set(VALUES)):
        out.append(f"{verb.name}: tables: unknown flag or enum member {name} (not in verbs.h)")
    out.extend(_check_contract(verb, verb.contract, names))
    return out


def validate(
    catalogue: Iterable[Verb],
    *,
    kinds: Iterable[str],
    schemas: Mapping[str, type] | None = None,
    behaviours: Behaviours | None = None,
) -> None:
    """Raise CatalogueError listing every problem of the catalogue, or return None.

    `schemas`: each kind's params schema (catalogue/params.py), checked against its claims' params;
    `behaviours`: for a kind with sub-behaviours, the params key that names one -> the names it knows."""
    verbs = tuple(catalogue)
    known = frozenset(kinds) | {UNTESTABLE}
    names: dict[str, Verb] = {}
    out: list[str] = []
    for verb in verbs:
        if verb.name in names:
            out.append(f"{verb.name}: name: described twice")
        names[verb.name] = verb
    for verb in verbs:
        out.extend(problems_of(verb, kinds=known, names=names, schemas=schemas, behaviours=behaviours))
    if out:
        raise CatalogueError(out)
