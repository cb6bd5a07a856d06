"""The catalogue's self-validation: a malformed entry is an error at import, naming verb and field.

`pytest_rdma.verbs` calls `validate(CATALOGUE)` when it is loaded, so a typo in a flag
name, a claim whose check kind does not exist or an error nobody accounts for stops the
suite before it generates checks from a wrong description. Every problem found is
reported at once, one line each, in the form "<verb>: <field>: <what is wrong>".
"""

from __future__ import annotations

import difflib
import errno as errno_module
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from pytest_rdma.catalogue.model import DIRECTIONS, RETURN_CONVENTIONS, Claim, Contract, Verb

UNTESTABLE = "untestable"
FAMILIES = ("ibv", "det")

# The resources a contract may name, with the states the pages give them. A kind whose
# states are empty has no state machine (a PD is just allocated or not).
QP_STATES = frozenset({"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"})
RESOURCE_STATES: Mapping[str, frozenset[str]] = {
    "device_list": frozenset(),
    "device": frozenset(),
    "context": frozenset(),
    "port": frozenset({"DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"}),
    "gid": frozenset(),
    "pd": frozenset(),
    "cq": frozenset(),
    "comp_channel": frozenset(),
    "srq": frozenset(),
    "mr": frozenset(),
    "mw": frozenset(),
    "ah": frozenset(),
    "qp": QP_STATES,
    "flow": frozenset(),
    "xrcd": frozenset(),
    "wq": frozenset({"RESET", "RDY", "ERR"}),
    "rwq_ind_table": frozenset(),
    "td": frozenset(),
    "dm": frozenset(),
    "counters": frozenset(),
    # DET (another API family): its QP moves through the same IB states by name.
    "det_qp": QP_STATES,
}

# Wildcards a transition may use: from "any" state, or to the state the caller "requested".
ANY_STATE = "any"
REQUESTED_STATE = "requested"

# A page that names no specific errno (only "the value of errno on failure") is described
# with one Error whose errno is this placeholder.
ANY_ERRNO = "errno"

IBV_NAME = re.compile(r"\bIBV_[A-Z0-9_]+\b")
ERRNO_NAMES = frozenset(errno_module.errorcode.values())


class CatalogueError(ValueError):
    """The catalogue describes something impossible; `problems` lists each one."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        noun = "problem" if len(problems) == 1 else "problems"
        super().__init__(f"the verb catalogue has {len(problems)} {noun}:\n  " + "\n  ".join(problems))


def ibv_names(data: Any) -> Iterator[str]:
    """Every IBV_* name written anywhere in a nest of mappings, sequences and strings (keys too)."""
    if isinstance(data, str):
        yield from IBV_NAME.findall(data)
    elif isinstance(data, Mapping):
        for key, value in data.items():
            yield from ibv_names(key)
            yield from ibv_names(value)
    elif isinstance(data, (list, tuple, set, frozenset)):
        for item in data:
            yield from ibv_names(item)


def flag_names(flag_sets: Mapping[str, Mapping[str, int]]) -> frozenset[str]:
    return frozenset(name for members in flag_sets.values() for name in members)


def _default_flag_sets() -> Mapping[str, Mapping[str, int]]:
    from pytest_rdma.catalogue.flags import FLAG_SETS

    return FLAG_SETS


def _default_kinds() -> frozenset[str]:
    # Imported here, not at module level: importing the check kinds may import the
    # catalogue, which imports this module.
    from pytest_rdma.checks.registry import known_kinds

    return known_kinds()


def _check_claim(verb: Verb, claim: Claim, kinds: frozenset[str], known_ibv: frozenset[str]) -> Iterator[str]:
    where = f"{verb.name}: claim {claim.id!r}"
    if claim.kind not in kinds:
        close = difflib.get_close_matches(claim.kind, kinds, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        yield f"{where}: unknown check kind {claim.kind!r} ({hint}known: {', '.join(sorted(kinds))})"
    if claim.kind == UNTESTABLE and not claim.untestable.strip():
        yield f"{where}: kind 'untestable' needs a reason in 'untestable'"
    if claim.kind != UNTESTABLE and claim.untestable.strip():
        yield f"{where}: has check kind {claim.kind!r} and an 'untestable' reason; choose one"
    if not claim.says.strip():
        yield f"{where}: 'says' is empty (paraphrase the promise)"
    if not claim.section.strip():
        yield f"{where}: 'section' is empty (cite the man page section)"
    for name in sorted(set(ibv_names(claim.params)) - known_ibv):
        yield f"{where}: params: unknown flag name {name} (not in any catalogue.flags set)"


def _check_contract(verb: Verb, contract: Contract) -> Iterator[str]:
    params = {param.name for param in verb.params}
    groups = (("requires", contract.requires), ("produces", contract.produces),
              ("destroys", contract.destroys))
    for field, resources in groups:
        for resource in resources:
            where = f"{verb.name}: contract.{field}"
            states = RESOURCE_STATES.get(resource.kind)
            if states is None:
                yield (f"{where}: unknown resource kind {resource.kind!r} "
                       f"(known: {', '.join(sorted(RESOURCE_STATES))})")
                continue
            if resource.state is not None and resource.state not in states:
                yield (f"{where}: {resource.kind} has no state {resource.state!r} "
                       f"(known: {', '.join(sorted(states)) or 'none'})")
            # A role may name a field inside a parameter: "qp_init_attr.send_cq".
            if resource.role and re.split(r"\.|->", resource.role)[0] not in params:
                yield f"{where}: {resource.kind} role {resource.role!r} is not a parameter of {verb.name}"
    for move in contract.moves:
        where = f"{verb.name}: contract.moves"
        states = RESOURCE_STATES.get(move.resource)
        if states is None:
            yield f"{where}: unknown resource kind {move.resource!r}"
            continue
        ends = (("before", move.before, ANY_STATE), ("after", move.after, REQUESTED_STATE))
        for end, state, wildcard in ends:
            if state != wildcard and state not in states:
                yield (f"{where}: {move.resource} {end} state {state!r} is unknown "
                       f"(known: {', '.join(sorted(states)) or 'none'})")


def problems_of(verb: Verb, *, kinds: frozenset[str], flag_sets: Mapping[str, Mapping[str, int]],
                verb_names: Mapping[str, Verb] | None = None) -> list[str]:
    """Everything wrong with one verb; `verb_names` (the whole catalogue) checks counterparts."""
    known_ibv = flag_names(flag_sets)
    out: list[str] = []
    if verb.returns not in RETURN_CONVENTIONS:
        out.append(f"{verb.name}: returns: {verb.returns!r} is not a return convention "
                   f"(known: {', '.join(RETURN_CONVENTIONS)})")
    if not verb.man.strip():
        out.append(f"{verb.name}: man: empty (name the page, e.g. '{verb.name}(3)')")
    if verb.family not in FAMILIES:
        out.append(f"{verb.name}: family: unknown API family {verb.family!r} (known: {', '.join(FAMILIES)})")
    if verb.family != "ibv" and not verb.counterpart:
        out.append(f"{verb.name}: counterpart: a {verb.family!r} verb must name its ibv counterpart")
    if verb.counterpart and verb_names is not None:
        other = verb_names.get(verb.counterpart)
        if other is None:
            out.append(f"{verb.name}: counterpart: {verb.counterpart!r} is not in the catalogue")
        elif other.family != "ibv":
            out.append(f"{verb.name}: counterpart: {verb.counterpart!r} is not an ibv verb")

    seen_params: set[str] = set()
    for param in verb.params:
        where = f"{verb.name}: param {param.name!r}"
        if param.name in seen_params:
            out.append(f"{where}: defined twice")
        seen_params.add(param.name)
        if param.direction not in DIRECTIONS:
            out.append(f"{where}: direction {param.direction!r} is not one of {', '.join(DIRECTIONS)}")
        if param.flags is not None and param.flags not in flag_sets:
            out.append(f"{where}: unknown flag set {param.flags!r} (known: {', '.join(sorted(flag_sets))})")

    claim_ids: set[str] = set()
    for claim in verb.claims:
        if claim.id in claim_ids:
            out.append(f"{verb.name}: claim {claim.id!r}: duplicate claim id")
        claim_ids.add(claim.id)
        out.extend(_check_claim(verb, claim, kinds, known_ibv))

    for error in verb.errors:
        where = f"{verb.name}: error {error.errno}"
        if error.errno not in ERRNO_NAMES and error.errno != ANY_ERRNO:
            out.append(f"{where}: errno: {error.errno!r} is not an errno name (nor {ANY_ERRNO!r})")
        for claim_id in error.covered_by:
            if claim_id not in claim_ids:
                out.append(f"{where}: covered_by: no claim {claim_id!r} in {verb.name}")
        if not error.covered_by and not error.untestable.strip():
            out.append(f"{where}: neither covered_by a claim nor marked untestable (say why)")

    for name in sorted(set(ibv_names(verb.tables)) - known_ibv):
        out.append(f"{verb.name}: tables: unknown flag name {name} (not in any catalogue.flags set)")
    out.extend(_check_contract(verb, verb.contract))
    return out


def validate(catalogue: Iterable[Verb], *, kinds: Iterable[str] | None = None,
             flag_sets: Mapping[str, Mapping[str, int]] | None = None) -> None:
    """Raise CatalogueError listing every problem of the catalogue, or return None.

    `kinds` and `flag_sets` default to the registered check kinds and catalogue.flags;
    tests pass their own to validate small hand-made records.
    """
    verbs = tuple(catalogue)
    known = frozenset(kinds) | {UNTESTABLE} if kinds is not None else _default_kinds()
    sets = flag_sets if flag_sets is not None else _default_flag_sets()
    by_name: dict[str, Verb] = {}
    out: list[str] = []
    for verb in verbs:
        if verb.name in by_name:
            out.append(f"{verb.name}: name: described twice")
        by_name[verb.name] = verb
    for verb in verbs:
        out.extend(problems_of(verb, kinds=known, flag_sets=sets, verb_names=by_name))
    if out:
        raise CatalogueError(out)
