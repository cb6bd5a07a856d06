"""Typed observations: each type writes the JSON results and waivers have always used, and reads it back."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_rdma.calls.record import Call
from pytest_rdma.expectations import SHIPPED_DIR, load
from pytest_rdma.observations import (
    TYPES,
    BadWr,
    Capacities,
    Changed,
    CompletionStatus,
    CqEvent,
    Differ,
    Differs,
    Errno,
    EventCq,
    FieldValue,
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
    (Produced("IBV_WC_SUCCESS"), {"value": "IBV_WC_SUCCESS"}),
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
