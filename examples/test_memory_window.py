"""Memory windows, only where the device advertises them (elsewhere: unsupported, naming the attribute)."""

import pytest
from pyverbs import enums as e
from pyverbs.mr import MW


@pytest.mark.rdma_claim(
    page="ibv_alloc_mw(3)", section="DESCRIPTION", needs="attr.device_cap_flags&IBV_DEVICE_MEM_WINDOW"
)
def test_a_type_1_window_is_allocated_and_freed(rdma_pd):
    """ibv_alloc_mw allocates a window of the type asked for; ibv_dealloc_mw frees it."""
    window = MW(rdma_pd, e.IBV_MW_TYPE_1)
    try:
        assert window.type == e.IBV_MW_TYPE_1
    finally:
        window.close()
