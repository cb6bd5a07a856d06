"""A QP moved through its states reports the state it is in."""

import pytest
from pyverbs import enums as e


@pytest.mark.rdma_claim(page="ibv_query_qp(3)", section="DESCRIPTION")
@pytest.mark.parametrize("state", ["INIT", "RTR", "RTS"])
def test_a_qp_reports_the_state_it_was_moved_to(rdma_qp, state):
    """ibv_query_qp gives the QP's current state."""
    qp = rdma_qp("RC", state=state)
    attr, _ = qp.query(e.IBV_QP_STATE)
    assert attr.qp_state == getattr(e, f"IBV_QPS_{state}")
