"""Expansion of the fixture verbs' kinds (host only)."""

from __future__ import annotations

from pytest_rdma.generate import expand
from pytest_rdma.verbs import (
    ibv_create_cq,
    ibv_create_srq,
    ibv_query_gid,
    ibv_query_pkey,
    ibv_query_port,
    ibv_reg_mr,
)


def test_index_bounds_is_data_driven() -> None:
    assert [c.id for c in expand(ibv_query_gid)] == [
        "index-bounds-gid_tbl_len-first",
        "index-bounds-gid_tbl_len-last",
        "index-bounds-gid_tbl_len-one-past-end",
        "index-bounds-gid_tbl_len-before-first",
    ]
    pkey = expand(ibv_query_pkey)[2]
    assert pkey.params["method"] == "query_pkey" and pkey.params["where"] == "one-past-end"
    port = expand(ibv_query_port)[3]
    assert (
        port.params["base"] == 1
        and port.params["with_port"] is False
        and port.params["where"] == "before-first"
    )


def test_sized_resources_and_mr_cases() -> None:
    # The entry's first claim; later claims add cases after these.
    assert [c.id for c in expand(ibv_create_cq)][:4] == [
        f"cqe-at-least-requested-cqe-{n}" for n in (1, 3, 100, 1000)
    ]
    assert [c.id for c in expand(ibv_create_srq)][0] == "sizes-at-least-requested-max_wr-3-max_sge-1"
    got = [c.id for c in expand(ibv_reg_mr)]
    assert "remote-write-needs-local-write-REMOTE_WRITE+REMOTE_READ-without-LOCAL_WRITE" in got
    assert "registers-length-65539" in got
