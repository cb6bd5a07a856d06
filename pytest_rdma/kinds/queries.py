"""Kinds that judge what query verbs report.

- relation: relations between fields of one or more queries' results hold (a maximum is at
  least 1; a capability reported as 0 leaves its dependent fields at 0; two verbs agree);
- index-bounds: a table indexed from `base` answers at both ends and fails one beyond either;
- exact-table: a pure function gives, for each input of a table, the output the page gives.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from pytest_rdma.calls.readback import number
from pytest_rdma.calls.values import flag_value
from pytest_rdma.cases import Case, Relation, axis_cases, make_case
from pytest_rdma.catalogue.model import Claim, Value, Verb
from pytest_rdma.catalogue.params import read_params
from pytest_rdma.kinds.calls import expect_refusal, expect_success, prepare
from pytest_rdma.kinds.check import COMPARE, OP_TEXT, Check, Observed
from pytest_rdma.kinds.registry import kind
from pytest_rdma.observations import Produced, RelationBroken
from pytest_rdma.outcomes import Unsupported

# How a relation is named in a case id: "max_qp>=1", "a-zero-implies-zero-b".
OP_ID = {"0=>0": "-zero-implies-zero-"}
INDEX_ENDS = ("first", "last", "one-past-end", "before-first")


@dataclass(frozen=True)
class RelationParams:
    relations: tuple[Relation, ...]  # (left, op, right): a field's name (under `root`, or "step:path") or a number
    root: str = ""  # "step:path" where the fields are: the step's result, and the path under it
    fields: Mapping[str, str] = field(default_factory=dict)  # a field's name -> its path under the root


@dataclass(frozen=True)
class IndexParams:
    length: str  # the device fact that is the table's length ("port.gid_tbl_len")
    index: str  # the verb's parameter that indexes it
    base: int = 0  # the first index


@dataclass(frozen=True)
class TableParams:
    input: str  # the verb's parameter each row gives
    table: tuple[tuple[Value, Value], ...]  # (input, output) rows of the page's table
    output: str = "ret"  # the result path read


def relation_id(left: Value, op: str, right: Value) -> str:
    return f"{left}{OP_ID.get(op, op)}{right}".replace("&", "-and-")


def relation_cases(verb: Verb, claim: Claim) -> Iterator[Case]:
    """One case per relation (named by it), or per axis combination when the claim has axes."""
    if claim.over:
        yield from axis_cases(verb, claim)
        return
    for relation in read_params(RelationParams, claim.params).relations:
        left, op, right = relation
        yield make_case(verb, claim, relation_id(left, op, right), {}, relations=(relation,))


def _field(check: Check, p: RelationParams, name: Value) -> tuple[str, Observed, str]:
    """(shown name, value, "<step>.<path>" it was read at) of one side: a number (read nowhere: ""), or a
    field named relative to the claim's root ("<step>.<path>&FLAG" for the flag bits of one)."""
    if isinstance(name, int):
        return str(name), name, ""
    text = str(name)
    step, sep, path = text.partition(":")
    if not sep:
        step, path = p.root.split(":", 1) if ":" in p.root else (p.root, "")
        field_name, amp, flag = text.partition("&")
        path = f"{path}.{p.fields.get(field_name, field_name)}{amp}{flag}".strip(".")
        shown = text
    else:
        shown = path
    masked = ""
    if "&" in path:
        path, masked = path.split("&", 1)
    value = check.read(check.steps[step], path)
    if masked:
        value = number(value, path) & flag_value(masked)  # a field with flag bits
    return shown, value, f"{step}.{path}&{masked}" if masked else f"{step}.{path}"


@kind("relation", relation_cases, params=RelationParams)
def relation(check: Check) -> None:
    """Relations between fields of what query verbs report hold."""
    p = check.params(RelationParams)
    prepare(check)
    relations = check.spec.get("relations") or p.relations
    for left_name, op, right_name in relations:
        left_shown, left, left_at = _field(check, p, left_name)
        right_shown, right, right_at = _field(check, p, right_name)
        if not COMPARE[op](left, right):
            shown = "0 only if also 0:" if op == "0=>0" else OP_TEXT.get(op, op)
            raise check.deviation(
                f"{left_shown} {shown} {right_shown}",
                f"{left_shown} = {left!r}, {right_shown} = {right!r}",
                RelationBroken(left_shown, left, right_shown, right, op, left_at, right_at),
                check.calls.log[-1] if check.calls.log else None,
            )


def index_cases(verb: Verb, claim: Claim) -> Iterator[Case]:
    length = read_params(IndexParams, claim.params).length.split(".")[-1]
    for where in INDEX_ENDS:
        yield make_case(verb, claim, f"{length}-{where}", {}, where=where)


@kind("index-bounds", index_cases, params=IndexParams)
def index_bounds(check: Check) -> None:
    """A table indexed from `base` with `length` entries: both ends answer, one beyond either end fails."""
    p = check.params(IndexParams)
    prepare(check)
    length = check.number(p.length)  # a table's length attribute
    base = p.base
    where = check.spec["where"]
    index = {"first": base, "last": base + length - 1, "one-past-end": base + length, "before-first": base - 1}[where]
    inside = where in ("first", "last")
    if inside and length == 0:
        raise Unsupported(f"{p.length} = 0: the table has no entry")
    call = check.call({p.index: index})
    if inside:
        expect_success(check, call)
    else:
        expect_refusal(check, call, f"index {index} is outside {base}..{base + length - 1}")


def table_cases(verb: Verb, claim: Claim) -> Iterator[Case]:
    for given, expected in read_params(TableParams, claim.params).table:
        name = str(given).removeprefix("IBV_")
        yield make_case(verb, claim, name, {}, given=given, expected=expected)


@kind("exact-table", table_cases, params=TableParams)
def exact_table(check: Check) -> None:
    """A pure function's output for each input of the page's table."""
    p = check.params(TableParams)
    prepare(check)
    call = check.call({p.input: check.spec["given"]})
    produced = check.read(call, p.output)
    expected = check.value_of(call, check.spec["expected"])
    if isinstance(produced, bytes):
        produced = produced.decode(errors="replace")
    if produced != expected:
        raise check.deviation(
            f"{check.case.verb}({check.spec['given']}) returns {expected!r}",
            f"it returned {produced!r}",
            Produced(produced),
            call,
        )
