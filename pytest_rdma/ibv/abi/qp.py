"""Address handles, SRQs, WQs and indirection tables, QPs (plain and extended) and their attributes."""

from __future__ import annotations

import ctypes
from typing import ClassVar

from pytest_rdma.ibv.abi._base import c_int, c_uint, define, pthread_cond_t, pthread_mutex_t, u8, u16, u32, u64
from pytest_rdma.ibv.abi.device import ibv_gid
from pytest_rdma.ibv.cdecl import enum_type as E


class ibv_global_route(ctypes.Structure):
    """struct ibv_global_route: the GRH part of an address vector."""


define(
    ibv_global_route,
    [("dgid", ibv_gid), ("flow_label", u32), ("sgid_index", u8), ("hop_limit", u8), ("traffic_class", u8)],
)


class ibv_grh(ctypes.Structure):
    """struct ibv_grh: a received global route header (network byte order)."""


define(
    ibv_grh,
    [
        ("version_tclass_flow", u32),
        ("paylen", u16),
        ("next_hdr", u8),
        ("hop_limit", u8),
        ("sgid", ibv_gid),
        ("dgid", ibv_gid),
    ],
)


class ibv_ah_attr(ctypes.Structure):
    """struct ibv_ah_attr: an address vector."""


define(
    ibv_ah_attr,
    [
        ("grh", ibv_global_route),
        ("dlid", u16),
        ("sl", u8),
        ("src_path_bits", u8),
        ("static_rate", u8),
        ("is_global", u8),
        ("port_num", u8),
    ],
)


class ibv_ah(ctypes.Structure):
    """struct ibv_ah."""


define(ibv_ah, [("context", "struct ibv_context *"), ("pd", "struct ibv_pd *"), ("handle", u32)])


class ibv_srq_attr(ctypes.Structure):
    """struct ibv_srq_attr."""


define(ibv_srq_attr, [("max_wr", u32), ("max_sge", u32), ("srq_limit", u32)])


class ibv_srq_init_attr(ctypes.Structure):
    """struct ibv_srq_init_attr: also the first fields of ibv_srq_init_attr_ex (the inline casts one to the other)."""


define(ibv_srq_init_attr, [("srq_context", "void *"), ("attr", ibv_srq_attr)])


class ibv_tm_cap(ctypes.Structure):
    """struct ibv_tm_cap."""


define(ibv_tm_cap, [("max_num_tags", u32), ("max_ops", u32)])


class ibv_srq_init_attr_ex(ctypes.Structure):
    """struct ibv_srq_init_attr_ex (ibv_create_srq_ex)."""


define(
    ibv_srq_init_attr_ex,
    [
        ("srq_context", "void *"),
        ("attr", ibv_srq_attr),
        ("comp_mask", u32),
        ("srq_type", E("ibv_srq_type")),
        ("pd", "struct ibv_pd *"),
        ("xrcd", "struct ibv_xrcd *"),
        ("cq", "struct ibv_cq *"),
        ("tm_cap", ibv_tm_cap),
    ],
)


class ibv_srq(ctypes.Structure):
    """struct ibv_srq."""


define(
    ibv_srq,
    [
        ("context", "struct ibv_context *"),
        ("srq_context", "void *"),
        ("pd", "struct ibv_pd *"),
        ("handle", u32),
        ("mutex", pthread_mutex_t),
        ("cond", pthread_cond_t),
        ("events_completed", u32),
    ],
)


class ibv_wq_init_attr(ctypes.Structure):
    """struct ibv_wq_init_attr (ibv_create_wq)."""


define(
    ibv_wq_init_attr,
    [
        ("wq_context", "void *"),
        ("wq_type", E("ibv_wq_type")),
        ("max_wr", u32),
        ("max_sge", u32),
        ("pd", "struct ibv_pd *"),
        ("cq", "struct ibv_cq *"),
        ("comp_mask", u32),
        ("create_flags", u32),
    ],
)


class ibv_wq_attr(ctypes.Structure):
    """struct ibv_wq_attr (ibv_modify_wq)."""


define(
    ibv_wq_attr,
    [
        ("attr_mask", u32),
        ("wq_state", E("ibv_wq_state")),
        ("curr_wq_state", E("ibv_wq_state")),
        ("flags", u32),
        ("flags_mask", u32),
    ],
)


class ibv_wq(ctypes.Structure):
    """struct ibv_wq: ibv_create_wq's inline fills wq_context and inits mutex/cond after the provider."""


define(
    ibv_wq,
    [
        ("context", "struct ibv_context *"),
        ("wq_context", "void *"),
        ("pd", "struct ibv_pd *"),
        ("cq", "struct ibv_cq *"),
        ("wq_num", u32),
        ("handle", u32),
        ("state", E("ibv_wq_state")),
        ("wq_type", E("ibv_wq_type")),
        ("post_recv", "int (struct ibv_wq *, struct ibv_recv_wr *, struct ibv_recv_wr **)"),
        ("mutex", pthread_mutex_t),
        ("cond", pthread_cond_t),
        ("events_completed", u32),
        ("comp_mask", u32),
    ],
)


class ibv_rwq_ind_table(ctypes.Structure):
    """struct ibv_rwq_ind_table."""


define(
    ibv_rwq_ind_table,
    [("context", "struct ibv_context *"), ("ind_tbl_handle", c_int), ("ind_tbl_num", c_int), ("comp_mask", u32)],
)


class ibv_rwq_ind_table_init_attr(ctypes.Structure):
    """struct ibv_rwq_ind_table_init_attr."""


define(
    ibv_rwq_ind_table_init_attr,
    [("log_ind_tbl_size", u32), ("ind_tbl", "struct ibv_wq **"), ("comp_mask", u32)],
)


class ibv_qp_cap(ctypes.Structure):
    """struct ibv_qp_cap."""


define(
    ibv_qp_cap,
    [
        ("max_send_wr", u32),
        ("max_recv_wr", u32),
        ("max_send_sge", u32),
        ("max_recv_sge", u32),
        ("max_inline_data", u32),
    ],
)

# The first seven fields of ibv_qp_init_attr_ex are ibv_qp_init_attr: the inline ibv_create_qp_ex
# passes one as the other when comp_mask is exactly IBV_QP_INIT_ATTR_PD.
_QP_INIT_ATTR = [
    ("qp_context", "void *"),
    ("send_cq", "struct ibv_cq *"),
    ("recv_cq", "struct ibv_cq *"),
    ("srq", "struct ibv_srq *"),
    ("cap", ibv_qp_cap),
    ("qp_type", E("ibv_qp_type")),
    ("sq_sig_all", c_int),
]


class ibv_qp_init_attr(ctypes.Structure):
    """struct ibv_qp_init_attr (ibv_create_qp)."""


define(ibv_qp_init_attr, list(_QP_INIT_ATTR))


class ibv_rx_hash_conf(ctypes.Structure):
    """struct ibv_rx_hash_conf."""


define(
    ibv_rx_hash_conf,
    [
        ("rx_hash_function", u8),
        ("rx_hash_key_len", u8),
        ("rx_hash_key", "uint8_t *"),
        ("rx_hash_fields_mask", u64),
    ],
)


class ibv_qp_init_attr_ex(ctypes.Structure):
    """struct ibv_qp_init_attr_ex (ibv_create_qp_ex)."""


define(
    ibv_qp_init_attr_ex,
    [
        *_QP_INIT_ATTR,
        ("comp_mask", u32),
        ("pd", "struct ibv_pd *"),
        ("xrcd", "struct ibv_xrcd *"),
        ("create_flags", u32),
        ("max_tso_header", u16),
        ("rwq_ind_tbl", "struct ibv_rwq_ind_table *"),
        ("rx_hash_conf", ibv_rx_hash_conf),
        ("source_qpn", u32),
        ("send_ops_flags", u64),
    ],
)


class ibv_qp_open_attr(ctypes.Structure):
    """struct ibv_qp_open_attr (ibv_open_qp)."""


define(
    ibv_qp_open_attr,
    [
        ("comp_mask", u32),
        ("qp_num", u32),
        ("xrcd", "struct ibv_xrcd *"),
        ("qp_context", "void *"),
        ("qp_type", E("ibv_qp_type")),
    ],
)


class ibv_qp_attr(ctypes.Structure):
    """struct ibv_qp_attr (ibv_modify_qp, ibv_query_qp)."""


define(
    ibv_qp_attr,
    [
        ("qp_state", E("ibv_qp_state")),
        ("cur_qp_state", E("ibv_qp_state")),
        ("path_mtu", E("ibv_mtu")),
        ("path_mig_state", E("ibv_mig_state")),
        ("qkey", u32),
        ("rq_psn", u32),
        ("sq_psn", u32),
        ("dest_qp_num", u32),
        ("qp_access_flags", c_uint),
        ("cap", ibv_qp_cap),
        ("ah_attr", ibv_ah_attr),
        ("alt_ah_attr", ibv_ah_attr),
        ("pkey_index", u16),
        ("alt_pkey_index", u16),
        ("en_sqd_async_notify", u8),
        ("sq_draining", u8),
        ("max_rd_atomic", u8),
        ("max_dest_rd_atomic", u8),
        ("min_rnr_timer", u8),
        ("port_num", u8),
        ("timeout", u8),
        ("retry_cnt", u8),
        ("rnr_retry", u8),
        ("alt_port_num", u8),
        ("alt_timeout", u8),
        ("rate_limit", u32),
    ],
)


class ibv_qp_rate_limit_attr(ctypes.Structure):
    """struct ibv_qp_rate_limit_attr (ibv_modify_qp_rate_limit)."""


define(
    ibv_qp_rate_limit_attr,
    [("rate_limit", u32), ("max_burst_sz", u32), ("typical_pkt_sz", u16), ("comp_mask", u32)],
)


class ibv_qp(ctypes.Structure):
    """struct ibv_qp: `context` leads to the op table ibv_post_send/ibv_post_recv call through."""


define(
    ibv_qp,
    [
        ("context", "struct ibv_context *"),
        ("qp_context", "void *"),
        ("pd", "struct ibv_pd *"),
        ("send_cq", "struct ibv_cq *"),
        ("recv_cq", "struct ibv_cq *"),
        ("srq", "struct ibv_srq *"),
        ("handle", u32),
        ("qp_num", u32),
        ("state", E("ibv_qp_state")),
        ("qp_type", E("ibv_qp_type")),
        ("mutex", pthread_mutex_t),
        ("cond", pthread_cond_t),
        ("events_completed", u32),
    ],
)


class ibv_qp_ex(ctypes.Structure):
    """struct ibv_qp_ex: the ibv_wr_* inlines call these provider function pointers unchecked."""

    _c_: ClassVar[dict[str, str]]  # the C spelling of each pointer field (define)


_QPX = "struct ibv_qp_ex *"
define(
    ibv_qp_ex,
    [
        ("qp_base", ibv_qp),
        ("comp_mask", u64),
        ("wr_id", u64),
        ("wr_flags", c_uint),
        ("wr_atomic_cmp_swp", f"void ({_QPX}, uint32_t, uint64_t, uint64_t, uint64_t)"),
        ("wr_atomic_fetch_add", f"void ({_QPX}, uint32_t, uint64_t, uint64_t)"),
        ("wr_bind_mw", f"void ({_QPX}, struct ibv_mw *, uint32_t, const struct ibv_mw_bind_info *)"),
        ("wr_local_inv", f"void ({_QPX}, uint32_t)"),
        ("wr_rdma_read", f"void ({_QPX}, uint32_t, uint64_t)"),
        ("wr_rdma_write", f"void ({_QPX}, uint32_t, uint64_t)"),
        ("wr_rdma_write_imm", f"void ({_QPX}, uint32_t, uint64_t, __be32)"),
        ("wr_send", f"void ({_QPX})"),
        ("wr_send_imm", f"void ({_QPX}, __be32)"),
        ("wr_send_inv", f"void ({_QPX}, uint32_t)"),
        ("wr_send_tso", f"void ({_QPX}, void *, uint16_t, uint16_t)"),
        ("wr_set_ud_addr", f"void ({_QPX}, struct ibv_ah *, uint32_t, uint32_t)"),
        ("wr_set_xrc_srqn", f"void ({_QPX}, uint32_t)"),
        ("wr_set_inline_data", f"void ({_QPX}, void *, size_t)"),
        ("wr_set_inline_data_list", f"void ({_QPX}, size_t, const struct ibv_data_buf *)"),
        ("wr_set_sge", f"void ({_QPX}, uint32_t, uint64_t, uint32_t)"),
        ("wr_set_sge_list", f"void ({_QPX}, size_t, const struct ibv_sge *)"),
        ("wr_start", f"void ({_QPX})"),
        ("wr_complete", f"int ({_QPX})"),
        ("wr_abort", f"void ({_QPX})"),
        ("wr_atomic_write", f"void ({_QPX}, uint32_t, uint64_t, const void *)"),
    ],
)


class ibv_ece(ctypes.Structure):
    """struct ibv_ece (ibv_set_ece, ibv_query_ece)."""


define(ibv_ece, [("vendor_id", u32), ("options", u32), ("comp_mask", u32)])
