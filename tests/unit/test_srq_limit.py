"""The srq-limit kind's pieces that need no device: event names and the element each event names."""

from __future__ import annotations

from pytest_rdma.ibv.enums import ENUMS
from pytest_rdma.kinds import srq
from pytest_rdma.kinds.load import KINDS


def _member(name: str) -> str:
    return next((m for prefix, m in srq._ELEMENT.items() if name.startswith(f"IBV_EVENT_{prefix}")), "port_num")


def test_srq_limit_kind_is_registered() -> None:
    assert KINDS["srq-limit"].run is srq.srq_limit


def test_event_names_read_back() -> None:
    assert srq._event_name(ENUMS["ibv_event_type"][srq.LIMIT_REACHED]) == srq.LIMIT_REACHED


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
        assert _member(name) == member, name
