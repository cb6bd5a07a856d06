"""A message sent on one QP arrives intact on the other, over each transport service the device offers."""

import time

import pytest
from pyverbs import enums as e
from pyverbs.wr import SGE, RecvWR, SendWR

MESSAGE = bytes(range(256))
GRH = 40  # a UD receive buffer starts with room for the global routing header


def completion(cq, seconds=5.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        polled, completions = cq.poll()
        if polled:
            return completions[0]
        time.sleep(0.001)
    pytest.fail(f"no completion within {seconds} s")


@pytest.mark.rdma_claim(page="ibv_post_send(3)", section="DESCRIPTION")
@pytest.mark.parametrize("qp_type", ["RC", "UC", "UD"])
def test_a_send_arrives_intact(rdma_pair, rdma_mr, qp_type):
    """A SEND's bytes land in the receive buffer posted on the other QP; both ends complete successfully."""
    pair = rdma_pair(qp_type)
    room = GRH if qp_type == "UD" else 0
    source, target = rdma_mr(len(MESSAGE)), rdma_mr(room + len(MESSAGE))
    source.write(MESSAGE, len(MESSAGE))
    pair.b.post_recv(RecvWR(wr_id=2, num_sge=1, sg=[SGE(target.buf, target.length, target.lkey)]))
    send = SendWR(
        wr_id=1,
        opcode=e.IBV_WR_SEND,
        num_sge=1,
        sg=[SGE(source.buf, len(MESSAGE), source.lkey)],
        send_flags=e.IBV_SEND_SIGNALED,
    )
    if qp_type == "UD":
        send.set_wr_ud(pair.ah, pair.b.qp_num, pair.qkey)
    pair.a.post_send(send)
    sent, received = completion(pair.cq_a), completion(pair.cq_b)
    assert sent.status == e.IBV_WC_SUCCESS, f"the sender completed with status {sent.status}"
    assert received.status == e.IBV_WC_SUCCESS, f"the receiver completed with status {received.status}"
    assert received.byte_len == room + len(MESSAGE)
    assert target.read(len(MESSAGE), room) == MESSAGE
