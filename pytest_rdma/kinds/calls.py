"""Kinds that judge the verb's own call: it succeeds and its results hold, or it is refused.

- succeeds: the call returns success and every expectation over what it returned holds;
- refused: the call fails with an errno the source allows, what it returned satisfies the
  expectations (a failure code) and, with `then`, the objects it touched stay usable;
- distinct: many calls, each result valid, no two alike (QP numbers, PD handles);
- gated: where the device advertises a capability the call succeeds, where it does not the
  call is refused;
- limit: a request at a device maximum is honoured, one above it is refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypedDict

from pytest_rdma.calls.record import Call
from pytest_rdma.catalogue.model import Cap, Expect, Step, Value
from pytest_rdma.kinds.check import Check, Observed
from pytest_rdma.kinds.registry import kind
from pytest_rdma.observations import Errno, Problem, Repeated, Returned
from pytest_rdma.outcomes import NotExercised, Unsupported

ANY_ERRNO = "errno"  # an Error entry that names no specific errno

# A failure that decides nothing: ([variable, value,] errno, reason); "*" for any errno.
Excuse = tuple[str, ...]


class Branch(TypedDict, total=False):
    """One branch of a "gated" claim: the call where the device advertises the gate, or where it does not."""

    call: Mapping[str, Value]
    expect: tuple[Expect, ...]
    then: tuple[Step, ...]


class LimitTarget(TypedDict, total=False):
    """What a "limit" claim tests: the device attribute that gives the maximum, and the verb asked for it."""

    limit: str  # the attribute of ibv_device_attr: "max_qp_wr"
    verb: str
    needs: tuple[Cap, ...]


@dataclass(frozen=True)
class SucceedsParams:
    then: tuple[Step, ...] = ()  # calls after the claim's own, and what they must do
    excused: tuple[Excuse, ...] = ()


@dataclass(frozen=True)
class RefusedParams:
    then: tuple[Step, ...] = ()  # calls that show what the refused call touched is still usable


@dataclass(frozen=True)
class DistinctParams:
    count: int  # how many live results
    value: str  # the result path whose values must be distinct
    cycle: tuple[str, ...] = ()  # the variable's values to cycle through (the device's, of them)
    cycle_var: str = "qp_type"
    cycle_needs: Mapping[str, tuple[Cap, ...]] = field(default_factory=dict)  # a value -> what it needs


@dataclass(frozen=True)
class GatedParams:
    gate: Cap
    only: Literal["", "advertised", "not-advertised"] = ""  # the claim is about one side of the gate only
    advertised: Branch = field(default_factory=Branch)
    otherwise: Branch = field(default_factory=Branch)
    verb: str = ""  # the verb called, when not the claim's own


@dataclass(frozen=True)
class LimitParams:
    target: LimitTarget
    at: Mapping[str, Value]  # the call at the maximum (the axis "where": at)
    above: Mapping[str, Value]  # and the one above it
    excused: tuple[Excuse, ...] = ()


def prepare(check: Check) -> None:
    """What every kind does first: the rule's transports, the capabilities it needs, its steps."""
    check.require_transport()
    check.require(check.spec.get("needs", ()))
    check.run_steps(check.spec.get("steps", ()))


ANY = "*"  # a claim's errnos=("*",): the refusal may carry any errno (the page names none for it)


def allowed_errnos(check: Check) -> tuple[str, ...]:
    """The errnos a refusal may carry: the claim's, else every one the page lists (none: any)."""
    named = tuple(check.spec.get("errnos", ()))
    if named == (ANY,):
        return ()
    if named:
        return named
    return tuple(e.errno for e in check.verb.errors if e.errno != ANY_ERRNO)


def excused(check: Check, call: Call, excuses: Sequence[Excuse]) -> str:
    """Why a failure of this call does not decide the claim (the source allows it, `excuses`), or ""."""
    variables = check.spec.get("vars", {})
    for rule in excuses:
        *when, errno, reason = rule
        if when and variables.get(when[0]) != when[1]:
            continue
        if errno in ("*", call.errno_name):
            return reason
    return ""


def then(check: Check, steps: Sequence[Step]) -> None:
    """Calls after the claim's own that the claim promises succeed (destroy returns 0, still usable),
    or fail (a handle no longer names anything), with one of the step's errnos if it lists any."""
    for step in steps:
        call = check.calls.invoke(step.verb, step.args, variables=check.spec.get("vars", {}), phase="step")
        if step.name:
            check.steps[step.name] = call
        if step.expect == "ok" and call.failed:
            raise check.failure(call, f"{step.verb} succeeds afterwards")
        if step.expect == "fails" and not call.failed:
            raise check.deviation(
                f"{step.verb} fails afterwards",
                f"{step.verb} succeeded {call.outcome_text()}",
                Returned(step=step.verb),
                call,
            )
        if step.expect == "fails" and step.errnos and call.errno_name not in step.errnos:
            raise check.deviation(
                f"{step.verb} fails afterwards with {' or '.join(step.errnos)}",
                f"errno {call.errno_name}",
                Errno(call.errno_name, step=step.verb),
                call,
            )


def not_supported(check: Check, call: Call) -> None:
    """Unsupported when the call failed with the answer its header or page defines as "not implemented"."""
    why = check.catalogue[call.verb].tables.get("not_supported", {}).get(call.errno_name)
    if why:
        raise Unsupported(f"{call.verb} answered {call.errno_name}: {why}")


def provider_answered(call: Call) -> bool:
    """Whether the provider's own code answered the call (a provider op, not libibverbs' default for it)."""
    return call.route.startswith("provider:") and bool(call.owner) and not call.owner.startswith("libibverbs")


def expect_success(check: Check, call: Call, excuses: Sequence[Excuse] = ()) -> None:
    # ok is None for a verb that cannot fail (void, or a plain value such as a string or a rate).
    if call.ok or call.ok is None:
        return
    not_supported(check, call)
    reason = excused(check, call, excuses)
    if reason:
        raise NotExercised(f"{call.verb} failed with {call.errno_name}, which does not decide this claim: {reason}")
    raise check.failure(call, f"{call.verb} succeeds")


def expect_refusal(check: Check, call: Call, why: str = "") -> None:
    """The call failed, with an allowed errno and within its return convention."""
    allowed = allowed_errnos(check)
    refusal = f"refused with {' or '.join(allowed)}" if allowed else "refused"
    if why:
        refusal += f" ({why})"
    if call.ok:
        raise check.deviation(refusal, f"{call.verb} succeeded {call.outcome_text()}", Returned(), call)
    if call.problem:
        raise check.deviation(refusal, f"{call.verb} {call.outcome_text()}", Problem(call.problem), call)
    if allowed and call.errno_name not in allowed:
        not_supported(check, call)
        raise check.deviation(refusal, f"errno {call.errno_name}", Errno(call.errno_name), call)


def expect_around(check: Check, call: Call, expects: Sequence[Expect], steps: Sequence[Step]) -> None:
    """Expectations on the call itself, then the `then` steps, then expectations on their results.

    In that order because a `then` step may free what the call returned (ibv_dereg_mr), and
    an expectation may read what a `then` step reported (ibv_query_qp after the create).
    """
    later = {step.name for step in steps if step.name}
    check.expect(call, [e for e in expects if e.left.split(".")[0] not in later])
    then(check, steps)
    check.expect(call, [e for e in expects if e.left.split(".")[0] in later])


@kind("succeeds", params=SucceedsParams)
def succeeds(check: Check) -> None:
    """The call succeeds and what it returns or writes back satisfies every expectation."""
    p = check.params(SucceedsParams)
    prepare(check)
    call = check.call()
    expect_success(check, call, p.excused)
    expect_around(check, call, check.expects(), p.then)


@kind("refused", params=RefusedParams)
def refused(check: Check) -> None:
    """The call with an invalid argument is refused with an errno the source allows.

    Expectations, if any, are over the refused call (the code a verb returned, an out parameter
    it must leave alone); `then` steps show that what it touched stays usable.
    """
    p = check.params(RefusedParams)
    prepare(check)
    call = check.call()
    if call.failed and call.errno_name not in check.spec.get("errnos", ()) and not provider_answered(call):
        # The answer that means "not implemented", given by libibverbs' own code (its default for a
        # missing op, or the library), says nothing about the invalid argument.
        not_supported(check, call)
    expect_refusal(check, call)
    check.expect(call, check.expects())
    then(check, p.then)


@kind("distinct", params=DistinctParams)
def distinct(check: Check) -> None:
    """Many calls: each result satisfies the expectations, no two are alike, and each is destroyed with 0."""
    p = check.params(DistinctParams)
    prepare(check)
    rotation = _rotation(check, p)
    if len(rotation) == 1:
        check.require_vars(check.case.verb, check.spec.get("vars", {}))
    values: list[Observed] = []
    calls: list[Call] = []
    for index in range(p.count):
        variables = {**check.spec.get("vars", {}), **rotation[index % len(rotation)]}
        call = check.calls.invoke(check.case.verb, check.spec.get("call", {}), variables=variables)
        expect_success(check, call)
        check.expect(call, check.expects())
        calls.append(call)
        values.append(check.read(call, p.value))
    # The values of one result path are of one type (numbers, or names), which sort.
    repeated = sorted({v for v in values if values.count(v) > 1})  # type: ignore[type-var]
    if repeated:
        second = values.index(repeated[0], values.index(repeated[0]) + 1)
        raise check.deviation(
            f"{len(values)} live results have distinct {p.value}",
            f"repeated: {repeated[:8]}",
            Repeated(tuple(repeated[:8])),
            calls[second],
            values=values,
        )
    failed = check.close()
    if failed:
        raise check.failure(failed[0], f"{failed[0].verb} of each one returns 0")


def _rotation(check: Check, p: DistinctParams) -> list[dict[str, Value]]:
    """The QP types (or other variable values) to cycle through, keeping only what the device advertises."""
    cycle = p.cycle
    if not cycle:
        return [{}]
    kept = [value for value in cycle if not any(check.dut.missing(cap) for cap in p.cycle_needs.get(value, ()))]
    if len(kept) < 2:
        shown = ", ".join(str(value).removeprefix("IBV_QPT_") for value in cycle)
        raise Unsupported(f"the device advertises fewer than two of {shown}, so there is no mix")
    return [{p.cycle_var: value} for value in kept]


@kind("gated", params=GatedParams)
def gated(check: Check) -> None:
    """Where the device advertises the capability the call succeeds; where it does not, it is refused."""
    p = check.params(GatedParams)
    check.require_transport()
    check.require(check.spec.get("needs", ()))
    gate = p.gate
    missing = check.dut.missing(gate)
    only = p.only
    if only == "advertised" and missing:
        raise Unsupported(missing, gate)
    if only == "not-advertised" and not missing:
        raise Unsupported(f"{gate.attr} is advertised: the claim is about devices without it")
    check.run_steps(check.spec.get("steps", ()))
    branch = p.otherwise if missing else p.advertised
    call = check.call(branch.get("call", {}), verb=p.verb)
    if missing:
        expect_refusal(check, call, f"the device reports {missing}")
        return
    expect_success(check, call)
    expect_around(check, call, branch.get("expect", ()), branch.get("then", ()))


@kind("limit", params=LimitParams)
def limit(check: Check) -> None:
    """A request at the device's maximum is honoured (NOTES lets it fail for memory); one above is refused."""
    p = check.params(LimitParams)
    check.require_transport()
    target = p.target
    check.require(tuple(target.get("needs", ())) + tuple(check.spec.get("needs", ())))
    where = check.spec["vars"]["where"]
    maximum = check.number(f"attr.{target['limit']}")  # a maximum of ibv_device_attr
    if where == "above" and maximum >= C_INT_MAX:
        raise NotExercised(f"{target['limit']} = {maximum}: no larger request fits the parameter's C type")
    call = check.call(p.at if where == "at" else p.above, verb=target["verb"])
    if where == "at":
        expect_success(check, call, p.excused)
    else:
        expect_refusal(check, call, f"{target['limit']} = {maximum} is the device's maximum")


C_INT_MAX = (1 << 31) - 1
