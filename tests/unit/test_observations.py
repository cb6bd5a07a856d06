"""Typed observations: each type writes the JSON results and waivers have always used, and reads it back."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_rdma.calls.record import Call
from pytest_rdma.calls.render import CProgram, Site
from pytest_rdma.catalogue.model import Arg, Expect, Ref
from pytest_rdma.expectations import SHIPPED_DIR, load
from pytest_rdma.kinds.check import Check
from pytest_rdma.observations import (
    TYPES,
    BadWr,
    Capacities,
    Changed,
    CompletionStatus,
    CqEvent,
    Crashed,
    Differ,
    Differs,
    Errno,
    EventCq,
    FieldValue,
    KernelFaulted,
    MissingAsyncEvent,
    Observation,
    Opaque,
    Placed,
    Problem,
    Produced,
    RelationBroken,
    Repeated,
    Returned,
    State,
    from_dict,
)

# One of each shape the kinds raise, with the JSON the results have always held for it.
SHAPES: list[tuple[Observation, dict[str, object]]] = [
    (Returned(), {"returned": "success"}),
    (Returned(step="ibv_dealloc_pd"), {"step": "ibv_dealloc_pd", "returned": "success"}),
    (Returned(-3), {"returned": -3}),
    (Errno("EINVAL"), {"errno": "EINVAL"}),
    (Errno("EBUSY", step="ibv_dereg_mr"), {"step": "ibv_dereg_mr", "errno": "EBUSY"}),
    (Errno("ENOMEM", verb="ibv_create_qp"), {"verb": "ibv_create_qp", "errno": "ENOMEM"}),
    (Errno("EINVAL", problem="returned -22"), {"errno": "EINVAL", "problem": "returned -22"}),
    (Problem("returned NULL without setting errno"), {"problem": "returned NULL without setting errno"}),
    (FieldValue("attr.qp_state", 0), {"field": "attr.qp_state", "value": 0}),
    (FieldValue("ret", None), {"field": "ret", "value": None}),
    (
        FieldValue("q.init_attr.cap.max_recv_wr", 7, "call.qp_init_attr.cap.max_recv_wr", "=="),
        {
            "field": "q.init_attr.cap.max_recv_wr",
            "value": 7,
            "against": "call.qp_init_attr.cap.max_recv_wr",
            "op": "==",
        },
    ),
    (
        CompletionStatus("wc.0.status", 2, "IBV_WC_LOC_QP_OP_ERR"),
        {"field": "wc.0.status", "value": 2, "status": "IBV_WC_LOC_QP_OP_ERR"},
    ),
    (State("RTS"), {"state": "RTS"}),
    (Changed(("cap.max_send_wr", "qp_state")), {"changed": ["cap.max_send_wr", "qp_state"]}),
    (Differ(("port_num",)), {"differ": ["port_num"]}),
    (Capacities({"max_send_wr": 4, "max_recv_wr": None}), {"cap": {"max_send_wr": 4, "max_recv_wr": None}}),
    (BadWr(None), {"bad_wr": "NULL"}),
    (BadWr(1), {"bad_wr": 1}),
    (Placed(0, "mr0", 64), {"data": "placed", "first": 0, "region": "mr0", "length": 64}),
    (
        Differs(3, "mr1", 0, "mr0", 48),
        {"data": "differs", "first": 3, "region": "mr1", "offset": 0, "source": "mr0", "length": 48},
    ),
    (
        Differs(0, "mr0", 0, "mr1", 64, 1536),
        {
            "data": "differs",
            "first": 0,
            "region": "mr0",
            "offset": 0,
            "source": "mr1",
            "source_offset": 1536,
            "length": 64,
        },
    ),
    (MissingAsyncEvent(), {"async_event": "none"}),
    (MissingAsyncEvent(outstanding=3), {"async_event": "none", "outstanding": 3}),
    (
        MissingAsyncEvent(("IBV_EVENT_QP_FATAL", "IBV_EVENT_CQ_ERR")),
        {"async_events": "IBV_EVENT_QP_FATAL, IBV_EVENT_CQ_ERR"},
    ),
    (CqEvent(True), {"event": True}),
    (CqEvent(False, 0), {"event": False, "status": 0}),
    (EventCq(0x1000), {"cq": 0x1000}),
    (Repeated((5, 5)), {"repeated": [5, 5]}),
    (
        RelationBroken("max_qp_wr", 0, "max_sge", 4),
        {"left": "max_qp_wr", "value": 0, "right": "max_sge", "right_value": 4},
    ),
    (
        RelationBroken("active_mtu", 3, "max_mtu", 1, "<=", "q.port_attr.active_mtu", "q.port_attr.max_mtu"),
        {
            "left": "active_mtu",
            "value": 3,
            "right": "max_mtu",
            "right_value": 1,
            "op": "<=",
            "left_at": "q.port_attr.active_mtu",
            "right_at": "q.port_attr.max_mtu",
        },
    ),
    (Produced("IBV_WC_SUCCESS"), {"value": "IBV_WC_SUCCESS"}),
    (Crashed(), {"crash": True}),
    (KernelFaulted("warning"), {"kernel_fault": "warning"}),
    (
        KernelFaulted("oops", ("BUG: unable to handle page fault",)),
        {"kernel_fault": "oops", "console": ["BUG: unable to handle page fault"]},
    ),
]


@pytest.mark.parametrize(("observation", "data"), SHAPES, ids=[type(o).__name__ for o, _ in SHAPES])
def test_each_type_writes_the_keys_results_have_always_held_and_reads_them_back(
    observation: Observation, data: dict[str, object]
) -> None:
    assert observation.as_dict() == data
    assert list(observation.as_dict()) == list(data), "the keys in the order results wrote them"
    assert from_dict(data) == observation


def test_every_type_has_a_shape_here() -> None:
    assert {type(o) for o, _ in SHAPES} == set(TYPES)


def test_a_call_that_broke_its_return_convention_adds_the_problem_to_any_type() -> None:
    seen = State("RTS").with_problem("returned -1")
    assert seen == State("RTS", problem="returned -1")
    assert seen.as_dict() == {"state": "RTS", "problem": "returned -1"}


def test_what_no_type_reads_back_stays_as_it_was() -> None:
    odd = from_dict({"odd": 1, "errno": "EINVAL"})
    assert isinstance(odd, Opaque) and odd.as_dict() == {"odd": 1, "errno": "EINVAL"}
    assert odd.c_condition(None) == "" and odd.replayed(Call(0, "v", (), 0, 0, 0, "", True), {}) is None  # type: ignore[arg-type]


@pytest.mark.parametrize("path", sorted(SHIPPED_DIR.glob("*.toml")), ids=lambda p: Path(p).name)
def test_every_shipped_waiver_records_keys_a_type_writes(path: Path) -> None:
    # A waiver holds on the keys it records: a type that stopped writing one would leave it stale for ever.
    written = [set(observation.as_dict()) for observation, _ in SHAPES]
    for waiver in load([path]).all():
        assert any(set(waiver.observed) <= keys for keys in written), (waiver.where, dict(waiver.observed))


def test_a_waiver_matches_by_the_observations_own_keys() -> None:
    status = CompletionStatus("wc.0.status", 4, "IBV_WC_LOC_PROT_ERR")
    assert status.matches({"field": "wc.0.status", "status": "IBV_WC_LOC_PROT_ERR"})
    assert not status.matches({"field": "wc.0.status", "status": "IBV_WC_SUCCESS"})
    assert BadWr(None).matches({"bad_wr": "NULL"}) and not BadWr(0).matches({"bad_wr": "NULL"})
    assert CqEvent(False, 1).matches({"event": False, "status": 1}), "TOML's false is Python's False, as text"


def _create_then_query(written_back: int, queried: int) -> tuple[Call, Call]:
    """ibv_create_qp writing back max_recv_wr, then ibv_query_qp (step "q") reading it."""
    create = Call(
        2, "ibv_create_qp", (), 1, None, 0, "", True, outs={"qp_init_attr": {"cap": {"max_recv_wr": written_back}}}
    )
    query = Call(3, "ibv_query_qp", (), 0, 0, 0, "", True, outs={"init_attr": {"cap": {"max_recv_wr": queried}}})
    return create, query


# rxe on 6.1 writes back the 5 asked for and ibv_query_qp says 7; on 6.12 both say 7 (issue 27).
DISAGREED = FieldValue("q.init_attr.cap.max_recv_wr", 7, "call.qp_init_attr.cap.max_recv_wr", "==")


def test_a_field_that_disagreed_with_another_call_is_judged_by_the_comparison_in_c() -> None:
    create, query = _create_then_query(5, 7)
    site = Site(
        CProgram({}, "rxe0"),
        create,
        [Call(0, "v", (), 0, 0, 0, "", True), create, create, query],
        {"call": 2, "q": 3},
        "pointer",
    )
    assert DISAGREED.c_condition(site) == (
        "!((long long)(a3_init_attr.cap.max_recv_wr) == (long long)(a2_qp_init_attr.cap.max_recv_wr))"
    )
    assert (
        FieldValue("q.init_attr.cap.max_recv_wr", 7).c_condition(site)
        == "(long long)(a3_init_attr.cap.max_recv_wr) == 7"
    )
    without_the_step = Site(CProgram({}, "rxe0"), create, [create], {}, "pointer")
    assert DISAGREED.c_condition(without_the_step) == ""  # no program says what it cannot read


@pytest.mark.parametrize(("written_back", "queried", "reproduced"), [(5, 7, True), (7, 7, False), (7, 9, True)])
def test_a_field_that_disagreed_with_another_call_is_judged_by_the_comparison_in_a_replay(
    written_back: int, queried: int, reproduced: bool
) -> None:
    create, query = _create_then_query(written_back, queried)
    assert DISAGREED.replayed(create, {"call": create, "q": query}) is reproduced


def test_an_expectation_against_another_calls_field_observes_the_comparison_and_one_against_a_value_the_value() -> None:
    against_step = Expect("q.init_attr.cap.max_recv_wr", "==", Ref("call", "qp_init_attr.cap.max_recv_wr"))
    assert Check.field_value(against_step, 7) == DISAGREED
    assert Check.field_value(Expect("attr.qp_state", "==", 0), 3) == FieldValue("attr.qp_state", 3)
    given = Expect("qp_init_attr.cap.max_recv_wr", ">=", Arg("qp_init_attr.cap.max_recv_wr"))
    assert Check.field_value(given, 4) == FieldValue("qp_init_attr.cap.max_recv_wr", 4)  # what was given is known


def _query_port(active_mtu: int, max_mtu: int) -> Call:
    return Call(
        1, "ibv_query_port", (), 0, 0, 0, "", True, outs={"port_attr": {"active_mtu": active_mtu, "max_mtu": max_mtu}}
    )


# siw on 6.12 reports active_mtu IBV_MTU_1024 (3) above max_mtu IBV_MTU_256 (1) (issue 27).
MTU_ABOVE_MAX = RelationBroken("active_mtu", 3, "max_mtu", 1, "<=", "q.port_attr.active_mtu", "q.port_attr.max_mtu")


def test_a_broken_relation_is_judged_by_the_relation_in_c_and_in_a_replay() -> None:
    query = _query_port(3, 1)
    site = Site(CProgram({}, "siw0"), query, [Call(0, "v", (), 0, 0, 0, "", True), query], {"q": 1}, "errno")
    assert MTU_ABOVE_MAX.c_condition(site) == (
        "!((long long)(a1_port_attr.active_mtu) <= (long long)(a1_port_attr.max_mtu))"
    )
    state = RelationBroken("state", 7, "5", 5, "<=", "q.port_attr.state", "")
    assert state.c_condition(site) == "!((long long)(a1_port_attr.state) <= (long long)(5))"
    assert MTU_ABOVE_MAX.replayed(query, {"q": query}) is True
    assert MTU_ABOVE_MAX.replayed(_query_port(3, 5), {"q": _query_port(3, 5)}) is False
    # No verdict: flag bits, a relation no C operator says, a result written before the relation was known.
    flags = RelationBroken("flags", 0, "1", 1, ">=", "q.attr.device_cap_flags&IBV_DEVICE_X", "")
    implies = RelationBroken("a", 1, "b", 0, "0=>0", "q.port_attr.a", "q.port_attr.b")
    for unjudged in (flags, implies, RelationBroken("active_mtu", 3, "max_mtu", 1)):
        assert unjudged.c_condition(site) == "" and unjudged.replayed(query, {"q": query}) is None


def test_a_missing_cq_event_is_waited_for_in_c_as_long_as_the_check_waited() -> None:
    """The notify kind polls the completion first and waits QUIET for its event (the status is then known); the
    kinds that wait for an event alone wait TIMEOUT. The C program waits the same, or it judges another thing."""
    from types import SimpleNamespace

    from pytest_rdma.kinds.datapath import QUIET
    from pytest_rdma.kinds.traffic import TIMEOUT
    from pytest_rdma.observations import EVENT_AFTER_COMPLETION_MS, EVENT_WAIT_MS

    site = SimpleNamespace(call=None, out=lambda call, path: "cq0", result=lambda: "ret")
    assert CqEvent(False, 5).c_condition(site) == f"!fd_ready(cq0->channel->fd, {EVENT_AFTER_COMPLETION_MS})"  # type: ignore[arg-type]
    assert CqEvent(False).c_condition(site) == f"!fd_ready(cq0->channel->fd, {EVENT_WAIT_MS})"  # type: ignore[arg-type]
    assert (EVENT_AFTER_COMPLETION_MS, EVENT_WAIT_MS) == (QUIET * 1000, TIMEOUT * 1000)
