"""The exploration as checks of the suite: `test_explore[explored]` per device, and one check per finding.

A finding's check is `test_explore[<class>-<verb>-<verb>...]` (the class and the shrunk sequence's verbs):
it runs that sequence again through the call layer, on every device under test, under the same guards as
every other check. So a leak or a kernel warning is the guards' finding of that check, a crash is its
worker's death and a hang its timeout, and a broken return convention its deviation with the call named;
its recorded calls are its C reproducer. The controller explored before any check ran (plugin.py); the
workers get the same explorations (their findings, in the same order) and so collect the same checks.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence as Seq

import pytest

from pytest_rdma import generate
from pytest_rdma.explore.execute import EXPLORE, Sequence, check_for, explore_case
from pytest_rdma.explore.sequence import Finding
from pytest_rdma.explore.session import CALL_LIMIT_S, Exploration
from pytest_rdma.observations import Problem
from pytest_rdma.outcomes import NOT_EXERCISED
from pytest_rdma.provider.device import DeviceUnderTest
from pytest_rdma.running import RUN, Run

_active: tuple[Exploration, ...] = ()


def activate(explorations: Seq[Exploration]) -> None:
    global _active
    _active = tuple(explorations)


def active() -> tuple[Exploration, ...]:
    return _active


def findings() -> dict[str, Finding]:
    """Every finding of every device, once per stable id, in the order found."""
    out: dict[str, Finding] = {}
    for exploration in _active:
        for finding in exploration.findings:
            out.setdefault(finding.case_id, finding)
    return out


def explore_tests() -> dict[str, Callable[..., None]]:
    """`test_explore` for a module's globals() when an exploration ran, else nothing."""
    if not _active:
        return {}
    seed = str(_active[0].seed)
    axes = (("seed", seed), ("seconds", f"{_active[0].seconds:g}"))
    params = [pytest.param(explore_case(axes=axes), id="explored")]
    for case_id, finding in findings().items():
        says = f"this sequence leaves no guard's finding ({finding.cls} on {finding.device}: {finding.detail})"
        case = explore_case(finding.cls, finding.variant, says, axes)
        limit = pytest.mark.timeout(CALL_LIMIT_S * (len(finding.steps) + 2))
        params.append(pytest.param(case, id=case_id, marks=[limit]))

    def test_explore(rdma_dut: DeviceUnderTest, rdma_case: object, request: pytest.FixtureRequest) -> None:
        run_explore(request, rdma_dut)

    test_explore.__doc__ = "sequences generated from the catalogue's contracts, and what they found"
    return {f"test_{EXPLORE}": pytest.mark.parametrize("rdma_case", params)(test_explore)}


def run_explore(request: pytest.FixtureRequest, dut: DeviceUnderTest) -> None:
    case = request.node.callspec.params["rdma_case"]
    run = request.node.stash[RUN] = Run(case, dut.name)
    finding = findings().get(case.id)
    if finding is None:
        explored = next((e for e in _active if e.device == dut.name), None)
        if explored is None:
            run.skipped_as, run.reason = NOT_EXERCISED, f"{dut.name} was not explored in this run"
            pytest.skip(f"{NOT_EXERCISED}: {run.reason}")
        if explored.error:
            raise RuntimeError(explored.error)
        return  # explored: each finding is a check of its own
    catalogue = generate.active()
    check = check_for(case, dut, catalogue, finding.steps[0].verb if finding.steps else "ibv_alloc_pd")
    run.calls = check.calls.log
    run.steps = check.steps
    sequence = Sequence(check)
    try:
        for step in finding.steps:
            call = sequence.perform(step)
            if call is not None and call.problem:
                raise check.deviation(
                    "every call keeps its page's return convention",
                    f"{call.verb} returned {call.value!r}",
                    Problem(call.problem),
                    call,
                    ref=f"{catalogue[call.verb].man} RETURN VALUE",
                )
    finally:
        run.teardown_failures = check.close()
