"""The async-event kinds' pieces that need no device: event names and the element each event names."""

from __future__ import annotations

from pytest_rdma.ibv.enums import ENUMS
from pytest_rdma.kinds import events, srq
from pytest_rdma.kinds.load import KINDS


def test_the_event_kinds_are_registered() -> None:
    assert KINDS["srq-limit"].run is srq.srq_limit
    assert KINDS["cq-overrun"].run is events.cq_overrun


def test_event_names_read_back() -> None:
    for name in (srq.LIMIT_REACHED, events.CQ_ERR):
        assert events.event_name(ENUMS["ibv_event_type"][name]) == name


def test_each_event_is_acknowledged_with_the_element_its_type_selects() -> None:
    # ibv_get_async_event(3): which member of element an event's type fills.
    expected = {
        "IBV_EVENT_CQ_ERR": "cq",
        "IBV_EVENT_QP_FATAL": "qp",
        "IBV_EVENT_QP_LAST_WQE_REACHED": "qp",
        "IBV_EVENT_COMM_EST": "qp",
        "IBV_EVENT_SQ_DRAINED": "qp",
        "IBV_EVENT_PATH_MIG": "qp",
        "IBV_EVENT_SRQ_ERR": "srq",
        "IBV_EVENT_SRQ_LIMIT_REACHED": "srq",
        "IBV_EVENT_WQ_FATAL": "wq",
        "IBV_EVENT_PORT_ACTIVE": "port_num",
        "IBV_EVENT_GID_CHANGE": "port_num",
        "IBV_EVENT_CLIENT_REREGISTER": "port_num",
        "IBV_EVENT_DEVICE_FATAL": "port_num",
    }
    for name, member in expected.items():
        assert name in ENUMS["ibv_event_type"], name
        assert events.element_member(name) == member, name
