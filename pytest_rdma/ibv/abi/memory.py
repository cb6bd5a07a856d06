"""Protection and thread domains, XRC domains, memory regions and windows, device memory, counters."""

from __future__ import annotations

import ctypes

from pytest_rdma.ibv.abi._base import c_int, c_size_t, c_uint, define, u32, u64
from pytest_rdma.ibv.cdecl import enum_type as E


class ibv_pd(ctypes.Structure):
    """struct ibv_pd."""


define(ibv_pd, [("context", "struct ibv_context *"), ("handle", u32)])


class ibv_td_init_attr(ctypes.Structure):
    """struct ibv_td_init_attr (ibv_alloc_td)."""


define(ibv_td_init_attr, [("comp_mask", u32)])


class ibv_td(ctypes.Structure):
    """struct ibv_td: a thread domain."""


define(ibv_td, [("context", "struct ibv_context *")])


class ibv_parent_domain_init_attr(ctypes.Structure):
    """struct ibv_parent_domain_init_attr: its alloc/free are callbacks the provider may call."""


define(
    ibv_parent_domain_init_attr,
    [
        ("pd", "struct ibv_pd *"),
        ("td", "struct ibv_td *"),
        ("comp_mask", u32),
        ("alloc", "void *(struct ibv_pd *, void *, size_t, size_t, uint64_t)"),
        ("free", "void (struct ibv_pd *, void *, void *, uint64_t)"),
        ("pd_context", "void *"),
    ],
)


class ibv_xrcd_init_attr(ctypes.Structure):
    """struct ibv_xrcd_init_attr (ibv_open_xrcd)."""


define(ibv_xrcd_init_attr, [("comp_mask", u32), ("fd", c_int), ("oflags", c_int)])


class ibv_xrcd(ctypes.Structure):
    """struct ibv_xrcd: an XRC domain."""


define(ibv_xrcd, [("context", "struct ibv_context *")])


class ibv_mr(ctypes.Structure):
    """struct ibv_mr: a registered memory region with its keys."""


define(
    ibv_mr,
    [
        ("context", "struct ibv_context *"),
        ("pd", "struct ibv_pd *"),
        ("addr", "void *"),
        ("length", c_size_t),
        ("handle", u32),
        ("lkey", u32),
        ("rkey", u32),
    ],
)


class ibv_mw(ctypes.Structure):
    """struct ibv_mw: a memory window; ibv_bind_mw's inline checks its type and pd itself."""


define(
    ibv_mw,
    [
        ("context", "struct ibv_context *"),
        ("pd", "struct ibv_pd *"),
        ("rkey", u32),
        ("handle", u32),
        ("type", E("ibv_mw_type")),
    ],
)


class ibv_mw_bind_info(ctypes.Structure):
    """struct ibv_mw_bind_info."""


define(ibv_mw_bind_info, [("mr", "struct ibv_mr *"), ("addr", u64), ("length", u64), ("mw_access_flags", c_uint)])


class ibv_mw_bind(ctypes.Structure):
    """struct ibv_mw_bind (ibv_bind_mw)."""


define(ibv_mw_bind, [("wr_id", u64), ("send_flags", c_uint), ("bind_info", ibv_mw_bind_info)])


class ibv_alloc_dm_attr(ctypes.Structure):
    """struct ibv_alloc_dm_attr (ibv_alloc_dm)."""


define(ibv_alloc_dm_attr, [("length", c_size_t), ("log_align_req", u32), ("comp_mask", u32)])


class ibv_dm(ctypes.Structure):
    """struct ibv_dm: device memory; its memcpy ops are called unchecked by the header's inlines."""


define(
    ibv_dm,
    [
        ("context", "struct ibv_context *"),
        ("memcpy_to_dm", "int (struct ibv_dm *, uint64_t, const void *, size_t)"),
        ("memcpy_from_dm", "int (void *, struct ibv_dm *, uint64_t, size_t)"),
        ("comp_mask", u32),
        ("handle", u32),
    ],
)


class ibv_counters_init_attr(ctypes.Structure):
    """struct ibv_counters_init_attr (ibv_create_counters)."""


define(ibv_counters_init_attr, [("comp_mask", u32)])


class ibv_counters(ctypes.Structure):
    """struct ibv_counters."""


define(ibv_counters, [("context", "struct ibv_context *")])


class ibv_counter_attach_attr(ctypes.Structure):
    """struct ibv_counter_attach_attr (ibv_attach_counters_point_flow)."""


define(
    ibv_counter_attach_attr,
    [("counter_desc", E("ibv_counter_description")), ("index", u32), ("comp_mask", u32)],
)
