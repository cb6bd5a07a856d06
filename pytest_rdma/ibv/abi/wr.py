"""Work requests, completions and completion queues (plain and extended)."""

from __future__ import annotations

import ctypes
from typing import ClassVar

from pytest_rdma.ibv.abi._base import (
    Field,
    c_int,
    c_size_t,
    c_uint,
    define,
    pthread_cond_t,
    pthread_mutex_t,
    u8,
    u16,
    u32,
    u64,
)
from pytest_rdma.ibv.abi.memory import ibv_mw_bind_info
from pytest_rdma.ibv.cdecl import enum_type as E


class ibv_sge(ctypes.Structure):
    """struct ibv_sge: one scatter/gather element."""


define(ibv_sge, [("addr", u64), ("length", u32), ("lkey", u32)])


class ibv_data_buf(ctypes.Structure):
    """struct ibv_data_buf (ibv_wr_set_inline_data_list)."""


define(ibv_data_buf, [("addr", "void *"), ("length", c_size_t)])


class _send_wr_imm(ctypes.Union):
    """ibv_send_wr's first anonymous union: immediate data, or the rkey to invalidate."""


define(_send_wr_imm, [("imm_data", u32), ("invalidate_rkey", u32)], cname=None)


class _send_wr_rdma(ctypes.Structure):
    """ibv_send_wr.wr.rdma."""


define(_send_wr_rdma, [("remote_addr", u64), ("rkey", u32)], cname=None)


class _send_wr_atomic(ctypes.Structure):
    """ibv_send_wr.wr.atomic."""


define(_send_wr_atomic, [("remote_addr", u64), ("compare_add", u64), ("swap", u64), ("rkey", u32)], cname=None)


class _send_wr_ud(ctypes.Structure):
    """ibv_send_wr.wr.ud."""


define(_send_wr_ud, [("ah", "struct ibv_ah *"), ("remote_qpn", u32), ("remote_qkey", u32)], cname=None)


class _send_wr_wr(ctypes.Union):
    """ibv_send_wr.wr."""


define(_send_wr_wr, [("rdma", _send_wr_rdma), ("atomic", _send_wr_atomic), ("ud", _send_wr_ud)], cname=None)


class _send_wr_xrc(ctypes.Structure):
    """ibv_send_wr.qp_type.xrc."""


define(_send_wr_xrc, [("remote_srqn", u32)], cname=None)


class _send_wr_qp_type(ctypes.Union):
    """ibv_send_wr.qp_type."""


define(_send_wr_qp_type, [("xrc", _send_wr_xrc)], cname=None)


class _send_wr_bind_mw(ctypes.Structure):
    """ibv_send_wr.bind_mw."""


define(_send_wr_bind_mw, [("mw", "struct ibv_mw *"), ("rkey", u32), ("bind_info", ibv_mw_bind_info)], cname=None)


class _send_wr_tso(ctypes.Structure):
    """ibv_send_wr.tso."""


define(_send_wr_tso, [("hdr", "void *"), ("hdr_sz", u16), ("mss", u16)], cname=None)


class _send_wr_ext(ctypes.Union):
    """ibv_send_wr's last anonymous union: bind_mw or tso."""


define(_send_wr_ext, [("bind_mw", _send_wr_bind_mw), ("tso", _send_wr_tso)], cname=None)


class ibv_send_wr(ctypes.Structure):
    """struct ibv_send_wr: a list of these goes to ibv_post_send; *bad_wr points into it."""


define(
    ibv_send_wr,
    [
        ("wr_id", u64),
        ("next", "struct ibv_send_wr *"),
        ("sg_list", "struct ibv_sge *"),
        ("num_sge", c_int),
        ("opcode", E("ibv_wr_opcode")),
        ("send_flags", c_uint),
        ("_imm", _send_wr_imm),
        ("wr", _send_wr_wr),
        ("qp_type", _send_wr_qp_type),
        ("_ext", _send_wr_ext),
    ],
    anonymous=("_imm", "_ext"),
)


class ibv_recv_wr(ctypes.Structure):
    """struct ibv_recv_wr."""


define(
    ibv_recv_wr, [("wr_id", u64), ("next", "struct ibv_recv_wr *"), ("sg_list", "struct ibv_sge *"), ("num_sge", c_int)]
)


class _ops_wr_add(ctypes.Structure):
    """ibv_ops_wr.tm.add."""


define(
    _ops_wr_add,
    [("recv_wr_id", u64), ("sg_list", "struct ibv_sge *"), ("num_sge", c_int), ("tag", u64), ("mask", u64)],
    cname=None,
)


class _ops_wr_tm(ctypes.Structure):
    """ibv_ops_wr.tm."""


define(_ops_wr_tm, [("unexpected_cnt", u32), ("handle", u32), ("add", _ops_wr_add)], cname=None)


class ibv_ops_wr(ctypes.Structure):
    """struct ibv_ops_wr (ibv_post_srq_ops)."""


define(
    ibv_ops_wr,
    [
        ("wr_id", u64),
        ("next", "struct ibv_ops_wr *"),
        ("opcode", E("ibv_ops_wr_opcode")),
        ("flags", c_int),
        ("tm", _ops_wr_tm),
    ],
)


class _wc_imm(ctypes.Union):
    """ibv_wc's anonymous union: immediate data, or the invalidated rkey."""


define(_wc_imm, [("imm_data", u32), ("invalidated_rkey", u32)], cname=None)


class ibv_wc(ctypes.Structure):
    """struct ibv_wc: one work completion of ibv_poll_cq."""


define(
    ibv_wc,
    [
        ("wr_id", u64),
        ("status", E("ibv_wc_status")),
        ("opcode", E("ibv_wc_opcode")),
        ("vendor_err", u32),
        ("byte_len", u32),
        ("_imm", _wc_imm),
        ("qp_num", u32),
        ("src_qp", u32),
        ("wc_flags", c_uint),
        ("pkey_index", u16),
        ("slid", u16),
        ("sl", u8),
        ("dlid_path_bits", u8),
    ],
    anonymous=("_imm",),
)


class ibv_comp_channel(ctypes.Structure):
    """struct ibv_comp_channel."""


define(ibv_comp_channel, [("context", "struct ibv_context *"), ("fd", c_int), ("refcnt", c_int)])

# struct ibv_cq is the head of struct ibv_cq_ex: ibv_cq_ex_to_cq is a cast.
_CQ: list[Field] = [
    ("context", "struct ibv_context *"),
    ("channel", "struct ibv_comp_channel *"),
    ("cq_context", "void *"),
    ("handle", u32),
    ("cqe", c_int),
    ("mutex", pthread_mutex_t),
    ("cond", pthread_cond_t),
    ("comp_events_completed", u32),
    ("async_events_completed", u32),
]


class ibv_cq(ctypes.Structure):
    """struct ibv_cq: `context` leads to the ops ibv_poll_cq/ibv_req_notify_cq call through."""


define(ibv_cq, list(_CQ))


class ibv_poll_cq_attr(ctypes.Structure):
    """struct ibv_poll_cq_attr (ibv_start_poll)."""


define(ibv_poll_cq_attr, [("comp_mask", u32)])


class ibv_wc_tm_info(ctypes.Structure):
    """struct ibv_wc_tm_info (ibv_wc_read_tm_info)."""


define(ibv_wc_tm_info, [("tag", u64), ("priv", u32)])


class ibv_cq_ex(ctypes.Structure):
    """struct ibv_cq_ex: the ibv_start_poll/ibv_wc_read_* inlines call these pointers unchecked."""

    _c_: ClassVar[dict[str, str]]  # the C spelling of each pointer field (define)


_CQX = "struct ibv_cq_ex *"
define(
    ibv_cq_ex,
    [
        *_CQ,
        ("comp_mask", u32),
        ("status", E("ibv_wc_status")),
        ("wr_id", u64),
        ("start_poll", f"int ({_CQX}, struct ibv_poll_cq_attr *)"),
        ("next_poll", f"int ({_CQX})"),
        ("end_poll", f"void ({_CQX})"),
        ("read_opcode", f"enum ibv_wc_opcode ({_CQX})"),
        ("read_vendor_err", f"uint32_t ({_CQX})"),
        ("read_byte_len", f"uint32_t ({_CQX})"),
        ("read_imm_data", f"__be32 ({_CQX})"),
        ("read_qp_num", f"uint32_t ({_CQX})"),
        ("read_src_qp", f"uint32_t ({_CQX})"),
        ("read_wc_flags", f"unsigned int ({_CQX})"),
        ("read_slid", f"uint32_t ({_CQX})"),
        ("read_sl", f"uint8_t ({_CQX})"),
        ("read_dlid_path_bits", f"uint8_t ({_CQX})"),
        ("read_completion_ts", f"uint64_t ({_CQX})"),
        ("read_cvlan", f"uint16_t ({_CQX})"),
        ("read_flow_tag", f"uint32_t ({_CQX})"),
        ("read_tm_info", f"void ({_CQX}, struct ibv_wc_tm_info *)"),
        ("read_completion_wallclock_ns", f"uint64_t ({_CQX})"),
    ],
)


class ibv_moderate_cq(ctypes.Structure):
    """struct ibv_moderate_cq."""


define(ibv_moderate_cq, [("cq_count", u16), ("cq_period", u16)])


class ibv_modify_cq_attr(ctypes.Structure):
    """struct ibv_modify_cq_attr (ibv_modify_cq)."""


define(ibv_modify_cq_attr, [("attr_mask", u32), ("moderate", ibv_moderate_cq)])


class ibv_cq_init_attr_ex(ctypes.Structure):
    """struct ibv_cq_init_attr_ex (ibv_create_cq_ex)."""


define(
    ibv_cq_init_attr_ex,
    [
        ("cqe", u32),
        ("cq_context", "void *"),
        ("channel", "struct ibv_comp_channel *"),
        ("comp_vector", u32),
        ("wc_flags", u64),
        ("comp_mask", u32),
        ("flags", u32),
        ("parent_domain", "struct ibv_pd *"),
    ],
)
