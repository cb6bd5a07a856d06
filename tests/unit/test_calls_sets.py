"""Fields of an object written just before a call (qpx->wr_id before ibv_wr_send): the call layer's `sets`."""

from __future__ import annotations

import ctypes
from typing import Any

import pytest

from pytest_rdma.calls import invoke
from pytest_rdma.calls.record import Handle
from pytest_rdma.calls.render import c_program, python_script, step_line
from pytest_rdma.catalogue.model import RETURNS_VOID, Param, Verb
from pytest_rdma.ibv import abi, binding, lib

SEND = Verb(
    "ibv_wr_send",
    "ibv_wr_post(3)",
    "void ibv_wr_send(struct ibv_qp_ex *qp);",
    RETURNS_VOID,
    "start a SEND",
    params=(Param("qp", "struct ibv_qp_ex *"),),
)


def test_a_field_is_written_before_the_call_and_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    qpx = abi.ibv_qp_ex()
    handle = Handle("qpx0", "qp_ex", "struct ibv_qp_ex *", ctypes.addressof(qpx))
    seen: dict[str, int] = {}

    def fake_call(name: str, *args: Any) -> lib.Raw:
        seen.update(wr_id=qpx.wr_id, wr_flags=qpx.wr_flags)  # what the builder reads
        return lib.Raw(None, 0, "provider:wr_send")

    monkeypatch.setattr(binding, "call", fake_call)
    calls = invoke.Calls({"ibv_wr_send": SEND}, None)  # type: ignore[arg-type]
    call = calls.invoke("ibv_wr_send", {"qp": handle}, sets={"qp.wr_id": 0x5E7D, "qp.wr_flags": "IBV_SEND_SIGNALED"})
    assert seen == {"wr_id": 0x5E7D, "wr_flags": 2}
    assert [target for target, _ in call.set_targets()] == ["qpx0->wr_id", "qpx0->wr_flags"]
    assert step_line(call).startswith("qpx0->wr_id = 24189; qpx0->wr_flags = IBV_SEND_SIGNALED; ibv_wr_send(qpx0)")
    text = c_program({"ibv_wr_send": SEND}, "rxe0", [call])
    assert text.index("qpx0->wr_id = 24189;") < text.index("qpx0->wr_flags = IBV_SEND_SIGNALED;")
    assert text.index("qpx0->wr_flags = IBV_SEND_SIGNALED;") < text.index("ibv_wr_send(qpx0);")
    assert "'sets': {'qp.wr_id': 24189, 'qp.wr_flags': 'IBV_SEND_SIGNALED'}" in python_script("rxe0", [call])


def test_only_a_field_of_an_object_argument_can_be_written() -> None:
    calls = invoke.Calls({"ibv_wr_send": SEND}, None)  # type: ignore[arg-type]
    with pytest.raises(LookupError, match="not a field of an object argument"):
        calls.invoke("ibv_wr_send", {"qp": None}, sets={"qp.wr_id": 1})
