"""A state machine is the mover's tables: the same walk moves a QP or any other object (host only)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import pytest

from pytest_rdma.calls.record import Call, Handle
from pytest_rdma.catalogue.index import Catalogue
from pytest_rdma.catalogue.model import Value, Walk
from pytest_rdma.kinds.state_machine import StateMachine, walk
from pytest_rdma.outcomes import NotExercised
from pytest_rdma.verbs import CATALOGUE

VERBS = Catalogue.of(CATALOGUE)
QP = StateMachine.of(VERBS, "qp")

# A work queue's machine, as an ibv_modify_wq entry would give it: other states, enum, field and flags.
WQ_WALK: Walk = {
    "object_param": "wq",
    "attr_param": "wq_attr",
    "mask_param": "attr_mask",
    "path": ("RESET", "RDY"),
    "state_flag": "IBV_WQ_ATTR_STATE",
    "state_field": "wq_state",
    "state_enum": "ibv_wq_state",
    "through": {"ERR": "RDY"},
    "type_var": "wq_type",
    "required": {"RQ": {"RESET>RDY": ("IBV_WQ_ATTR_STATE",)}},
    "values": {"IBV_WQ_ATTR_STATE": {"wq_state": "{to}", "curr_wq_state": "{from}"}},
}
WQ = StateMachine(
    dataclasses.replace(
        VERBS["ibv_modify_qp"],
        name="ibv_modify_wq",
        tables={"walk": WQ_WALK},
    )
)


class Recorder:
    """A Modifier that records each move and answers as told."""

    def __init__(self, refuse: str = "") -> None:
        self.moves: list[tuple[str, str, str, tuple[str, ...]]] = []
        self.refuse = refuse

    def modify(
        self,
        handle: Handle,
        machine: StateMachine,
        before: str,
        after: str,
        flags: Sequence[str],
        *,
        fields: Mapping[str, Value] | None = None,
        extra_bits: int = 0,
        phase: str = "call",
    ) -> Call:
        self.moves.append((machine.name, before, after, tuple(flags)))
        ok = after != self.refuse
        return Call(len(self.moves), machine.name, (), 0 if ok else 22, 0, 0 if ok else 22, "", ok)


def test_a_qp_is_walked_along_ibv_modify_qps_path_and_error_is_reached_from_rts() -> None:
    moves = list(QP.path_to("ERR", {"qp_type": "IBV_QPT_UD"}))
    assert [(before, after) for before, after, _ in moves] == [
        ("RESET", "INIT"),
        ("INIT", "RTR"),
        ("RTR", "RTS"),
        ("RTS", "ERR"),
    ]
    assert moves[-1][2] == ("IBV_QP_STATE",), "off the path: the state flag alone"
    assert "IBV_QP_QKEY" in moves[0][2], "UD's RESET>INIT needs its Q_Key (the table's, per type)"


def test_the_same_walk_moves_another_machine_by_its_own_tables() -> None:
    modifier = Recorder()
    qp = Handle("wq0", "wq", "struct ibv_wq *", 0x100)
    walk(modifier, qp, WQ, "ERR", {"wq_type": "IBV_WQT_RQ"})
    assert modifier.moves == [
        ("ibv_modify_wq", "RESET", "RDY", ("IBV_WQ_ATTR_STATE",)),
        ("ibv_modify_wq", "RDY", "ERR", ("IBV_WQ_ATTR_STATE",)),
    ]
    assert WQ.attr_values(("IBV_WQ_ATTR_STATE",), "RESET", "RDY") == {
        "wq_state": "IBV_WQS_RDY",
        "curr_wq_state": "IBV_WQS_RESET",
    }
    assert (WQ.state_name(1), WQ.state_name(9), WQ.state_field) == ("RDY", "9", "wq_state")
    arguments = WQ.arguments(qp, "RESET", "RDY", ("IBV_WQ_ATTR_STATE",))
    assert set(arguments) == {"wq", "wq_attr", "attr_mask"}


def test_a_move_the_device_refuses_leaves_the_check_not_exercised() -> None:
    qp = Handle("qp0", "qp", "struct ibv_qp *", 0x100)
    with pytest.raises(NotExercised, match="could not reach RTS: ibv_modify_qp INIT>RTR"):
        walk(Recorder(refuse="RTR"), qp, QP, "RTS", {"qp_type": "IBV_QPT_RC"})


def test_a_state_on_the_path_needs_no_type_to_be_reached_from_a_fresh_object() -> None:
    assert list(QP.path_to("RESET", {})) == []
