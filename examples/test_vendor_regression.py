"""A test a vendor would add: a regression of their driver, fixed, kept fixed, tied to the page it keeps true.

Say an early version of our provider handed the same keys to two regions registered back to back.
This runs on every device the run tests (`pytest examples/ --rdma-dev mlx5_0`), under the leak guard,
and its result is reported with the suite's, per driver: conforms, or deviates with the message.
"""

import pytest
from pyverbs import enums as e

ACCESS = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ


@pytest.mark.rdma_claim(page="ibv_reg_mr(3)", section="DESCRIPTION", needs="attr.max_mr")
def test_two_regions_get_keys_of_their_own(rdma_mr):
    """Each registered memory region has its own local and remote key."""
    first, second = rdma_mr(1 << 20, ACCESS), rdma_mr(1 << 20, ACCESS)
    assert first.lkey != second.lkey, f"two regions share the lkey {first.lkey:#x}"
    assert first.rkey != second.rkey, f"two regions share the rkey {first.rkey:#x}"
