"""The state-table kind: a resource's state machine, checked from the tables its mover's entry gives.

ibv_modify_qp's entry (pytest_rdma/verbs.py) gives, per QP type, the attributes each step
requires and allows, the legal moves, out-of-range values and the valid value of each
attribute. A claim picks a `rule`; the rule turns the tables into cases, and every case runs
the same way: walk a fresh object to the case's start state, make one call, and expect it
accepted (the object then reads back in the new state, with the values given) or rejected
(the object reads back exactly as before: a failed call modifies nothing).

Read-backs go through the entry's query verb. Where that verb does not report the state just
set (probed once per device, see `readback_problem`), what rests on a read-back is not
exercised on that device: its verdict could not see what it checks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Union

from pytest_rdma.calls.readback import struct
from pytest_rdma.calls.record import Call, Handle, StructArg
from pytest_rdma.calls.values import read_path
from pytest_rdma.cases import Case, Spec, make_case
from pytest_rdma.catalogue.model import Cap, Claim, Need, Tables, Value, Verb
from pytest_rdma.catalogue.params import read_params
from pytest_rdma.kinds.behaviours import Behaviours
from pytest_rdma.kinds.calls import expect_refusal
from pytest_rdma.kinds.check import Check, Observed, plain
from pytest_rdma.kinds.registry import kind
from pytest_rdma.kinds.state_machine import StateMachine
from pytest_rdma.observations import Capacities, Changed, Differ, State
from pytest_rdma.outcomes import NotExercised, Unsupported

ACCEPT, REJECT, STAY = "accept", "reject", "stay"
MEMO = "state-table: query read-back"


def short(flag: str) -> str:
    return flag.removeprefix("IBV_QP_")


# -- expansion -------------------------------------------------------------------------------
def _table(verb: Verb) -> Tables:
    return verb.tables


def _required(verb: Verb) -> Mapping[str, Mapping[str, Sequence[str]]]:
    return verb.tables["walk"]["required"]


def forbidden_flags(verb: Verb, qp_type: str, step: str) -> tuple[str, ...]:
    """Mask flags neither required nor optional on `step` for `qp_type`, in mask order."""
    t = _table(verb)
    allowed = set(_required(verb)[qp_type][step]) | set(t["optional"][qp_type][step]) | {t["walk"]["state_flag"]}
    return tuple(f for f in t["mask_flags"] if f not in allowed and f not in t["capability_flags"])


def illegal_moves(verb: Verb) -> list[tuple[str, str]]:
    t = _table(verb)
    path = t["walk"]["path"]
    return [(frm, to) for frm in t["start_states"] for to in path[1:] if to not in t["legal_moves"][frm]]


def _steps(verb: Verb) -> Sequence[str]:
    path = verb.tables["walk"]["path"]
    return [f"{a}>{b}" for a, b in zip(path, path[1:])]


def _case(verb: Verb, claim: Claim, variant: str, qp_type: str, **spec: object) -> Case:
    return make_case(verb, claim, variant, {"qp_type": f"IBV_QPT_{qp_type}"}, **spec)


@dataclass(frozen=True)
class StateTableParams:
    rule: str  # how the tables become cases: a name of RULES
    target: str = ""  # to-state: the state moved to
    step: str = ""  # unknown-bits: the move ("A>B")
    bits: tuple[int, ...] = ()  # unknown-bits: bit numbers outside the mask's flags
    gate: Cap | None = None  # resize-cap, alt-path, grh-required: the capability the cases need
    grown: Mapping[str, int] = dataclass_field(default_factory=dict)  # resize-cap: the QP's new capacities
    reflect: tuple[str, ...] = ()  # alt-path: the fields the query must report back
    # enum-outside (derived, catalogue/derived.py): (mask flag, field, case name, value outside its enum)
    outside: tuple[tuple[str, str, str, int], ...] = ()


# A rule: the cases of a claim for one QP type ("RC"), from the mover's tables.
Rule = Callable[[Verb, Claim, StateTableParams, str], Iterator[Case]]
RULES: Behaviours[Rule] = Behaviours("rule")


def _rule_cases(verb: Verb, claim: Claim) -> Iterator[Case]:
    p = read_params(StateTableParams, claim.params)
    rule = RULES[p.rule]
    for qp_type in _table(verb)["qp_types"]:
        yield from rule(verb, claim, p, qp_type)


@RULES.register("minimal")
def _minimal(verb: Verb, claim: Claim, p: StateTableParams, qp_type: str) -> Iterator[Case]:
    required = _required(verb)
    for step in _steps(verb):
        before, after = step.split(">")
        yield _case(
            verb,
            claim,
            f"{qp_type}-{step}",
            qp_type,
            start=before,
            step=step,
            flags=tuple(required[qp_type][step]),
            expect=ACCEPT,
            reflect=True,
        )


@RULES.register("without-required")
def _without_required(verb: Verb, claim: Claim, p: StateTableParams, qp_type: str) -> Iterator[Case]:
    required = _required(verb)
    for step in _steps(verb):
        flags = tuple(required[qp_type][step])
        for left_out in flags:
            rest = tuple(f for f in flags if f != left_out)
            if rest:  # leaving out the only attribute asks for nothing (see zero-mask)
                yield _case(
                    verb,
                    claim,
                    f"{qp_type}-{step}-without-{short(left_out)}",
                    qp_type,
                    start=step.split(">")[0],
                    step=step,
                    flags=rest,
                    expect=REJECT,
                    why=f"{short(left_out)} is required on {qp_type} {step}",
                )


@RULES.register("optional")
def _optional(verb: Verb, claim: Claim, p: StateTableParams, qp_type: str) -> Iterator[Case]:
    t = _table(verb)
    required = _required(verb)
    for step in _steps(verb):
        for flag in t["optional"][qp_type][step]:
            if flag not in t["capability_flags"]:
                yield _case(
                    verb,
                    claim,
                    f"{qp_type}-{step}-with-{short(flag)}",
                    qp_type,
                    start=step.split(">")[0],
                    step=step,
                    flags=tuple(required[qp_type][step]) + (flag,),
                    expect=ACCEPT,
                    needs=t["flag_needs"].get(flag, ()),
                )


@RULES.register("forbidden")
def _forbidden(verb: Verb, claim: Claim, p: StateTableParams, qp_type: str) -> Iterator[Case]:
    required = _required(verb)
    for step in _steps(verb):
        for flag in forbidden_flags(verb, qp_type, step):
            yield _case(
                verb,
                claim,
                f"{qp_type}-{step}-with-{short(flag)}",
                qp_type,
                start=step.split(">")[0],
                step=step,
                flags=tuple(required[qp_type][step]) + (flag,),
                expect=REJECT,
                why=f"{short(flag)} is not allowed on {qp_type} {step}",
            )


@RULES.register("illegal")
def _illegal(verb: Verb, claim: Claim, p: StateTableParams, qp_type: str) -> Iterator[Case]:
    t = _table(verb)
    required = _required(verb)
    path = t["walk"]["path"]
    for frm, to in illegal_moves(verb):
        into = f"{path[path.index(to) - 1]}>{to}"
        yield _case(
            verb,
            claim,
            f"{qp_type}-{frm}>{to}",
            qp_type,
            start=frm,
            step=f"{frm}>{to}",
            flags=tuple(required[qp_type][into]),
            expect=REJECT,
            why=f"{frm}>{to} is not a transition of the state machine",
        )


@RULES.register("to-state")
def _to_state(verb: Verb, claim: Claim, p: StateTableParams, qp_type: str) -> Iterator[Case]:
    t = _table(verb)
    target = p.target
    for frm in t["start_states"]:
        if target in t["legal_moves"][frm]:
            yield _case(
                verb,
                claim,
                f"{qp_type}-{frm}>{target}",
                qp_type,
                start=frm,
                step=f"{frm}>{target}",
                flags=("IBV_QP_STATE",),
                expect=ACCEPT,
            )


@RULES.register("zero-mask")
def _zero_mask(verb: Verb, claim: Claim, p: StateTableParams, qp_type: str) -> Iterator[Case]:
    t = _table(verb)
    for state in t["start_states"]:
        if state in t["legal_moves"][state]:
            yield _case(
                verb,
                claim,
                f"{qp_type}-in-{state}",
                qp_type,
                start=state,
                step=f"{state}>{state}",
                flags=(),
                expect=STAY,
            )


@RULES.register("unknown-bits")
def _unknown_bits(verb: Verb, claim: Claim, p: StateTableParams, qp_type: str) -> Iterator[Case]:
    required = _required(verb)
    step = p.step  # "A>B"
    for bit in p.bits:  # bit numbers outside the mask's flags
        yield _case(
            verb,
            claim,
            f"{qp_type}-{step}-bit{bit}",
            qp_type,
            start=step.split(">")[0],
            step=step,
            flags=tuple(required[qp_type][step]),
            extra_bits=1 << bit,
            expect=REJECT,
            why=f"bit {bit} is not an ibv_qp_attr_mask flag",
        )


def taking(verb: Verb, qp_type: str, step: str, flag: str) -> tuple[str, ...] | None:
    """The mask of a step that takes `flag` (its required flags, and `flag` where it is optional), or None."""
    flags = tuple(_required(verb)[qp_type][step])
    if flag in flags:
        return flags
    return (*flags, flag) if flag in _table(verb)["optional"][qp_type][step] else None


@RULES.register("out-of-range")
def _out_of_range(verb: Verb, claim: Claim, p: StateTableParams, qp_type: str) -> Iterator[Case]:
    t = _table(verb)
    for step in _steps(verb):
        for flag, field, bad, *named in t["out_of_range"]:
            flags = taking(verb, qp_type, step, flag)
            if flags is None:
                continue
            shown = named[0] if named else field
            yield _case(
                verb,
                claim,
                f"{qp_type}-{step}-{shown}={bad}",
                qp_type,
                start=step.split(">")[0],
                step=step,
                flags=flags,
                bad=(field, bad),
                expect=REJECT,
                why=f"{field}={bad} is out of range",
            )


@RULES.register("enum-outside")
def _enum_outside(verb: Verb, claim: Claim, p: StateTableParams, qp_type: str) -> Iterator[Case]:
    """Each field outside its enum on the first step of the walk that takes its mask bit."""
    for flag, field, name, value in p.outside:
        for step in _steps(verb):
            flags = taking(verb, qp_type, step, flag)
            if flags is None:
                continue
            yield _case(
                verb,
                claim,
                f"{qp_type}-{step}-{field}-{name}",
                qp_type,
                start=step.split(">")[0],
                step=step,
                flags=flags,
                bad=(field, value),
                expect=REJECT,
                needs=_table(verb)["flag_needs"].get(flag, ()),
                why=f"{field}={value:#x} is outside its enum",
            )
            break


@RULES.register("resize-cap")
def _resize_cap(verb: Verb, claim: Claim, p: StateTableParams, qp_type: str) -> Iterator[Case]:
    yield _case(
        verb,
        claim,
        f"{qp_type}-RTS-grow",
        qp_type,
        start="RTS",
        step="RTS>RTS",
        flags=("IBV_QP_CAP",),
        expect=ACCEPT,
        gate=p.gate,
        fields={"cap": p.grown},
        grown=p.grown,
    )


@RULES.register("alt-path")
def _alt_path(verb: Verb, claim: Claim, p: StateTableParams, qp_type: str) -> Iterator[Case]:
    t = _table(verb)
    required = _required(verb)
    for step in _steps(verb):
        if "IBV_QP_ALT_PATH" in t["optional"][qp_type][step]:
            yield _case(
                verb,
                claim,
                f"{qp_type}-{step}-with-ALT_PATH",
                qp_type,
                start=step.split(">")[0],
                step=step,
                flags=tuple(required[qp_type][step]) + ("IBV_QP_ALT_PATH",),
                expect=ACCEPT,
                gate=p.gate,
                reflect_only=p.reflect,
            )


@RULES.register("grh-required")
def _grh_required(verb: Verb, claim: Claim, p: StateTableParams, qp_type: str) -> Iterator[Case]:
    required = _required(verb)
    if "IBV_QP_AV" in required[qp_type]["INIT>RTR"]:
        yield _case(
            verb,
            claim,
            f"{qp_type}-INIT>RTR-AV-without-GRH",
            qp_type,
            start="INIT",
            step="INIT>RTR",
            flags=tuple(required[qp_type]["INIT>RTR"]),
            expect=REJECT,
            only_if=p.gate,
            fields={"ah_attr.is_global": 0},
            why="the port requires a GRH and the address vector has none",
        )


# -- running ---------------------------------------------------------------------------------
def readback_problem(check: Check) -> str:
    """ "" when the query verb reports the state just set on this device, else what it reported.

    Probed once per device: a fresh RC QP moved RESET>INIT with its required attributes and
    read back. A device where that move fails tells nothing here ("" : trusted, unproven).
    """
    memo = check.dut.memo
    if MEMO not in memo:
        memo[MEMO] = ""
        qp = check.resource(Need("qp", spec={"qp_type": "IBV_QPT_RC"}, label="read-back probe"))
        machine = StateMachine(check.verb)
        call = check.modify(qp, machine, "RESET", "INIT", machine.walk["required"]["RC"]["RESET>INIT"], phase="setup")
        if call.ok:
            state = state_of(check, snapshot(check, qp)[0])
            if state != "INIT":
                memo[MEMO] = (
                    f"ibv_query_qp reports {state} after a successful RESET>INIT on this device, so a "
                    "read-back cannot show what a call changed"
                )
    return str(memo[MEMO])


def snapshot(check: Check, qp: Handle) -> tuple[dict[str, Observed], Call]:
    """The object's state and attributes, as the entry's query verb reports them."""
    spec = check.verb.tables["snapshot"]
    call = check.calls.invoke(spec["verb"], {**spec["args"], spec["object_param"]: qp}, phase="readback")
    if not call.ok:
        raise check.failure(call, f"{spec['verb']} of a live QP succeeds", ref=f"{spec['verb']}(3) RETURN VALUE")
    flat: dict[str, Observed] = {}
    attr = struct(call.outs[spec["out"]], spec["out"])  # the attributes the query wrote (struct ibv_qp_attr)
    for field in spec["fields"]:
        top = field.split(".")[0]
        if top in spec.get("global_only", {}) and not struct(attr[top], top)["is_global"] and ".grh." in field:
            continue
        flat[field] = plain(read_path(attr, field))
    return flat, call


def state_of(check: Check, snap: Mapping[str, Observed]) -> str:
    machine = StateMachine(check.verb)
    return machine.state_name(snap[machine.state_field])


def changed(before: Mapping[str, Observed], after: Mapping[str, Observed]) -> dict[str, str]:
    return {
        key: f"{before.get(key)!r} -> {after.get(key)!r}"
        for key in sorted(set(before) | set(after))
        if before.get(key) != after.get(key)
    }


def _bad_value(check: Check, bad: Union[int, str], field: str) -> int:
    value = bad
    if isinstance(bad, str):
        name, _, plus = bad.partition("+")
        value = check.number(check.verb.tables["limits"][name]) + int(plus or 0)  # a limit
    limit = check.verb.tables["field_max"].get(field, 0xFFFFFFFF)
    if int(value) > limit:
        raise NotExercised(
            f"{field} cannot hold {bad} = {value}: the device's limit leaves no out-of-range value "
            "that the field's width can carry"
        )
    return int(value)


@kind("state-table", _rule_cases, params=StateTableParams, behaviours=(RULES,))
def state_table(check: Check) -> None:
    """One move of the state machine from the entry's tables: accepted, or rejected and nothing changed."""
    check.require_transport()
    check.require(check.spec.get("needs", ()))
    spec = check.spec
    only_if: Cap | None = spec.get("only_if")
    if only_if is not None and check.dut.missing(only_if):
        raise Unsupported(check.dut.missing(only_if), only_if)
    fields = dict(spec.get("fields", {}))
    if spec.get("bad"):
        field, bad = spec["bad"]
        fields[field] = _bad_value(check, bad, field)
    qp_type = spec["vars"]["qp_type"]
    qp = check.resource(Need("qp", state=spec["start"], spec={"qp_type": qp_type}))
    before_state, after_state = spec["step"].split(">")
    gate: Cap | None = spec.get("gate")
    expect = spec["expect"]  # this kind's: ACCEPT, REJECT or STAY (the expansion's, not expectations)
    if not isinstance(expect, str):
        raise TypeError(f"{check.case.stable_id}: a state-table case's expect is accept, reject or stay")
    why = spec.get("why", "")
    if gate is not None and check.dut.missing(gate):
        expect, why = REJECT, f"the device reports {check.dut.missing(gate)}"
    attr_fields = {**StateMachine(check.verb).attr_values(spec["flags"], before_state, after_state), **fields}
    if expect == ACCEPT:
        _accept(check, qp, spec, before_state, after_state, attr_fields)
    else:
        _reject_or_stay(check, qp, spec, before_state, after_state, attr_fields, expect, why)


def _modify(check: Check, qp: Handle, spec: Spec, before: str, after: str, fields: Mapping[str, Value]) -> Call:
    machine = StateMachine(check.verb)
    return check.modify(
        qp, machine, before, after, spec["flags"], fields=fields, extra_bits=int(spec.get("extra_bits", 0))
    )


def _accept(check: Check, qp: Handle, spec: Spec, before: str, after: str, fields: Mapping[str, Value]) -> None:
    call = _modify(check, qp, spec, before, after, fields)
    if not call.ok:
        raise check.failure(call, f"{check.case.verb} {spec['step']} with these attributes succeeds")
    unseen = readback_problem(check)
    if unseen:
        raise NotExercised(f"the call succeeded, but {unseen}")
    snap, readback = snapshot(check, qp)
    state = state_of(check, snap)
    if state != after:
        raise check.deviation(
            f"the QP is in {after} after the call succeeded",
            f"{readback.verb} reports {state}",
            State(state),
            readback,
        )
    if spec.get("reflect") or spec.get("reflect_only"):
        _reflected(check, snap, call, spec.get("reflect_only") or (), readback)
    if spec.get("grown"):
        small = {k: _size(snap.get(f"cap.{k}")) for k in ("max_send_wr", "max_recv_wr")}
        if any(v is None or v < spec["grown"][k] for k, v in small.items()):
            raise check.deviation(
                "a device advertising IBV_DEVICE_RESIZE_MAX_WR grows the queues",
                f"cap after resize: {small}",
                Capacities(small),
                readback,
            )


def _size(value: Observed) -> int | None:
    """A queue's size as the query reported it (a number), or None where it reported none."""
    return value if isinstance(value, int) else None


def _reflected(check: Check, snap: Mapping[str, Observed], call: Call, only: Sequence[str], readback: Call) -> None:
    """Values just set (as the call was given them) are what the query reports."""
    attr_param = check.catalogue[check.case.verb].tables["walk"]["attr_param"]
    # The attributes the call was given: a struct argument.
    given = dict(
        next((value.fields for name, value in call.args if name == attr_param and isinstance(value, StructArg)), ())
    )
    wrong = {}
    for name, value in given.items():
        if name.split(".")[0] in ("qp_state", "cur_qp_state", "cap") or name not in snap:
            continue
        if only and name not in only:
            continue
        if snap[name] != plain(value):
            wrong[name] = f"set {plain(value)!r}, query reports {snap[name]!r}"
    if wrong:
        raise check.deviation(
            "the attributes given are those the QP then has",
            f"{len(wrong)} attribute(s) differ after a successful call",
            Differ(tuple(sorted(wrong))),
            readback,
            attributes=wrong,
        )


def _reject_or_stay(
    check: Check,
    qp: Handle,
    spec: Spec,
    before: str,
    after: str,
    fields: Mapping[str, Value],
    expect: str,
    why: str,
) -> None:
    first, _ = snapshot(check, qp)
    call = _modify(check, qp, spec, before, after, fields)
    if expect == REJECT:
        expect_refusal(check, call, why)
    elif not call.ok:
        raise check.failure(call, "attr_mask 0 is accepted where the QP may stay in its state")
    last, readback = snapshot(check, qp)
    diff = changed(first, last)
    unseen = readback_problem(check)
    if unseen and not diff:
        raise NotExercised(f"the call {'failed' if expect == REJECT else 'succeeded'}, but {unseen}")
    if diff:
        done = f"failed with errno {call.errno_name}" if expect == REJECT else "succeeded"
        raise check.deviation(
            "the call modifies nothing (the QP's state and every attribute)",
            f"it {done}, yet {len(diff)} attribute(s) changed",
            Changed(tuple(sorted(diff))),
            readback,
            changed=diff,
        )
