"""Devices, contexts and their op tables; device, port and GID attributes (verbs.h).

struct verbs_context is the extended op table that libibverbs places immediately before
struct ibv_context in memory; its `sz` says how much of it the provider's library knows, which is
what verbs.h's verbs_get_ctx_op() checks before it calls an extended op (pytest_rdma.ibv.lib).
"""

from __future__ import annotations

import ctypes
from typing import ClassVar

from pytest_rdma.ibv.abi._base import (
    c_char,
    c_int,
    c_size_t,
    c_uint,
    define,
    pthread_mutex_t,
    timespec,
    u8,
    u16,
    u32,
    u64,
)
from pytest_rdma.ibv.cdecl import enum_type as E


class _ibv_gid_global(ctypes.Structure):
    """ibv_gid.global: the GID as subnet prefix and interface id (both big-endian)."""


define(_ibv_gid_global, [("subnet_prefix", u64), ("interface_id", u64)], cname=None)


class ibv_gid(ctypes.Union):
    """union ibv_gid: 16 raw bytes."""


define(ibv_gid, [("raw", u8 * 16), ("global", _ibv_gid_global)])


class ibv_gid_entry(ctypes.Structure):
    """struct ibv_gid_entry: one GID table entry (ibv_query_gid_ex, ibv_query_gid_table)."""


define(
    ibv_gid_entry,
    [("gid", ibv_gid), ("gid_index", u32), ("port_num", u32), ("gid_type", u32), ("ndev_ifindex", u32)],
)


class _ibv_device_ops(ctypes.Structure):
    """struct _ibv_device_ops: obsolete, kept for ibv_device's layout."""


define(
    _ibv_device_ops,
    [
        ("_dummy1", "struct ibv_context *(struct ibv_device *, int)"),
        ("_dummy2", "void (struct ibv_context *)"),
    ],
)


class ibv_device(ctypes.Structure):
    """struct ibv_device: an entry of ibv_get_device_list()."""


define(
    ibv_device,
    [
        ("_ops", _ibv_device_ops),
        ("node_type", E("ibv_node_type")),
        ("transport_type", E("ibv_transport_type")),
        ("name", c_char * 64),
        ("dev_name", c_char * 64),
        ("dev_path", c_char * 256),
        ("ibdev_path", c_char * 256),
    ],
)


class ibv_context_ops(ctypes.Structure):
    """struct ibv_context_ops: the provider's data-path ops the header's inlines call unchecked."""

    _c_: ClassVar[dict[str, str]]  # the C spelling of each pointer field (define)


_V = "void *(void)"  # the _compat_* slots: never called by the header
define(
    ibv_context_ops,
    [
        ("_compat_query_device", "int (struct ibv_context *, struct ibv_device_attr *)"),
        ("_compat_query_port", "int (struct ibv_context *, uint8_t, struct _compat_ibv_port_attr *)"),
        ("_compat_alloc_pd", _V),
        ("_compat_dealloc_pd", _V),
        ("_compat_reg_mr", _V),
        ("_compat_rereg_mr", _V),
        ("_compat_dereg_mr", _V),
        ("alloc_mw", "struct ibv_mw *(struct ibv_pd *, enum ibv_mw_type)"),
        ("bind_mw", "int (struct ibv_qp *, struct ibv_mw *, struct ibv_mw_bind *)"),
        ("dealloc_mw", "int (struct ibv_mw *)"),
        ("_compat_create_cq", _V),
        ("poll_cq", "int (struct ibv_cq *, int, struct ibv_wc *)"),
        ("req_notify_cq", "int (struct ibv_cq *, int)"),
        ("_compat_cq_event", _V),
        ("_compat_resize_cq", _V),
        ("_compat_destroy_cq", _V),
        ("_compat_create_srq", _V),
        ("_compat_modify_srq", _V),
        ("_compat_query_srq", _V),
        ("_compat_destroy_srq", _V),
        ("post_srq_recv", "int (struct ibv_srq *, struct ibv_recv_wr *, struct ibv_recv_wr **)"),
        ("_compat_create_qp", _V),
        ("_compat_query_qp", _V),
        ("_compat_modify_qp", _V),
        ("_compat_destroy_qp", _V),
        ("post_send", "int (struct ibv_qp *, struct ibv_send_wr *, struct ibv_send_wr **)"),
        ("post_recv", "int (struct ibv_qp *, struct ibv_recv_wr *, struct ibv_recv_wr **)"),
        ("_compat_create_ah", _V),
        ("_compat_destroy_ah", _V),
        ("_compat_attach_mcast", _V),
        ("_compat_detach_mcast", _V),
        ("_compat_async_event", _V),
    ],
)


class ibv_context(ctypes.Structure):
    """struct ibv_context: what ibv_open_device returns; abi_compat marks an extended context."""


define(
    ibv_context,
    [
        ("device", "struct ibv_device *"),
        ("ops", ibv_context_ops),
        ("cmd_fd", c_int),
        ("async_fd", c_int),
        ("num_comp_vectors", c_int),
        ("mutex", pthread_mutex_t),
        ("abi_compat", "void *"),
    ],
)


class verbs_context(ctypes.Structure):
    """struct verbs_context: the extended ops, growing towards lower addresses, then `sz`, then the context."""

    _c_: ClassVar[dict[str, str]]  # the C spelling of each pointer field (define)


define(
    verbs_context,
    [
        ("query_port", "int (struct ibv_context *, uint8_t, struct ibv_port_attr *, size_t)"),
        (
            "advise_mr",
            "int (struct ibv_pd *, enum ibv_advise_mr_advice, uint32_t, struct ibv_sge *, uint32_t)",
        ),
        ("alloc_null_mr", "struct ibv_mr *(struct ibv_pd *)"),
        ("read_counters", "int (struct ibv_counters *, uint64_t *, uint32_t, uint32_t)"),
        (
            "attach_counters_point_flow",
            "int (struct ibv_counters *, struct ibv_counter_attach_attr *, struct ibv_flow *)",
        ),
        ("create_counters", "struct ibv_counters *(struct ibv_context *, struct ibv_counters_init_attr *)"),
        ("destroy_counters", "int (struct ibv_counters *)"),
        ("reg_dm_mr", "struct ibv_mr *(struct ibv_pd *, struct ibv_dm *, uint64_t, size_t, unsigned int)"),
        ("alloc_dm", "struct ibv_dm *(struct ibv_context *, struct ibv_alloc_dm_attr *)"),
        ("free_dm", "int (struct ibv_dm *)"),
        ("modify_flow_action_esp", "int (struct ibv_flow_action *, struct ibv_flow_action_esp_attr *)"),
        ("destroy_flow_action", "int (struct ibv_flow_action *)"),
        (
            "create_flow_action_esp",
            "struct ibv_flow_action *(struct ibv_context *, struct ibv_flow_action_esp_attr *)",
        ),
        ("modify_qp_rate_limit", "int (struct ibv_qp *, struct ibv_qp_rate_limit_attr *)"),
        ("alloc_parent_domain", "struct ibv_pd *(struct ibv_context *, struct ibv_parent_domain_init_attr *)"),
        ("dealloc_td", "int (struct ibv_td *)"),
        ("alloc_td", "struct ibv_td *(struct ibv_context *, struct ibv_td_init_attr *)"),
        ("modify_cq", "int (struct ibv_cq *, struct ibv_modify_cq_attr *)"),
        ("post_srq_ops", "int (struct ibv_srq *, struct ibv_ops_wr *, struct ibv_ops_wr **)"),
        ("destroy_rwq_ind_table", "int (struct ibv_rwq_ind_table *)"),
        (
            "create_rwq_ind_table",
            "struct ibv_rwq_ind_table *(struct ibv_context *, struct ibv_rwq_ind_table_init_attr *)",
        ),
        ("destroy_wq", "int (struct ibv_wq *)"),
        ("modify_wq", "int (struct ibv_wq *, struct ibv_wq_attr *)"),
        ("create_wq", "struct ibv_wq *(struct ibv_context *, struct ibv_wq_init_attr *)"),
        ("query_rt_values", "int (struct ibv_context *, struct ibv_values_ex *)"),
        ("create_cq_ex", "struct ibv_cq_ex *(struct ibv_context *, struct ibv_cq_init_attr_ex *)"),
        ("priv", "struct verbs_ex_private *"),
        (
            "query_device_ex",
            "int (struct ibv_context *, const struct ibv_query_device_ex_input *, struct ibv_device_attr_ex *, size_t)",
        ),
        ("ibv_destroy_flow", "int (struct ibv_flow *)"),
        ("ABI_placeholder2", "void (void)"),
        ("ibv_create_flow", "struct ibv_flow *(struct ibv_qp *, struct ibv_flow_attr *)"),
        ("ABI_placeholder1", "void (void)"),
        ("open_qp", "struct ibv_qp *(struct ibv_context *, struct ibv_qp_open_attr *)"),
        ("create_qp_ex", "struct ibv_qp *(struct ibv_context *, struct ibv_qp_init_attr_ex *)"),
        ("get_srq_num", "int (struct ibv_srq *, uint32_t *)"),
        ("create_srq_ex", "struct ibv_srq *(struct ibv_context *, struct ibv_srq_init_attr_ex *)"),
        ("open_xrcd", "struct ibv_xrcd *(struct ibv_context *, struct ibv_xrcd_init_attr *)"),
        ("close_xrcd", "int (struct ibv_xrcd *)"),
        ("_ABI_placeholder3", u64),
        ("sz", c_size_t),
        ("context", ibv_context),
    ],
)


class ibv_device_attr(ctypes.Structure):
    """struct ibv_device_attr: ibv_query_device's answer (and ibv_device_attr_ex.orig_attr)."""


define(
    ibv_device_attr,
    [
        ("fw_ver", c_char * 64),
        ("node_guid", u64),
        ("sys_image_guid", u64),
        ("max_mr_size", u64),
        ("page_size_cap", u64),
        ("vendor_id", u32),
        ("vendor_part_id", u32),
        ("hw_ver", u32),
        ("max_qp", c_int),
        ("max_qp_wr", c_int),
        ("device_cap_flags", c_uint),
        ("max_sge", c_int),
        ("max_sge_rd", c_int),
        ("max_cq", c_int),
        ("max_cqe", c_int),
        ("max_mr", c_int),
        ("max_pd", c_int),
        ("max_qp_rd_atom", c_int),
        ("max_ee_rd_atom", c_int),
        ("max_res_rd_atom", c_int),
        ("max_qp_init_rd_atom", c_int),
        ("max_ee_init_rd_atom", c_int),
        ("atomic_cap", E("ibv_atomic_cap")),
        ("max_ee", c_int),
        ("max_rdd", c_int),
        ("max_mw", c_int),
        ("max_raw_ipv6_qp", c_int),
        ("max_raw_ethy_qp", c_int),
        ("max_mcast_grp", c_int),
        ("max_mcast_qp_attach", c_int),
        ("max_total_mcast_qp_attach", c_int),
        ("max_ah", c_int),
        ("max_fmr", c_int),
        ("max_map_per_fmr", c_int),
        ("max_srq", c_int),
        ("max_srq_wr", c_int),
        ("max_srq_sge", c_int),
        ("max_pkeys", u16),
        ("local_ca_ack_delay", u8),
        ("phys_port_cnt", u8),
    ],
)


class ibv_query_device_ex_input(ctypes.Structure):
    """struct ibv_query_device_ex_input: the header's inline rejects a non-zero comp_mask itself."""


define(ibv_query_device_ex_input, [("comp_mask", u32)])


class _ibv_odp_per_transport_caps(ctypes.Structure):
    """ibv_odp_caps.per_transport_caps."""


define(_ibv_odp_per_transport_caps, [("rc_odp_caps", u32), ("uc_odp_caps", u32), ("ud_odp_caps", u32)], cname=None)


class ibv_odp_caps(ctypes.Structure):
    """struct ibv_odp_caps."""


define(ibv_odp_caps, [("general_caps", u64), ("per_transport_caps", _ibv_odp_per_transport_caps)])


class ibv_tso_caps(ctypes.Structure):
    """struct ibv_tso_caps."""


define(ibv_tso_caps, [("max_tso", u32), ("supported_qpts", u32)])


class ibv_rss_caps(ctypes.Structure):
    """struct ibv_rss_caps."""


define(
    ibv_rss_caps,
    [
        ("supported_qpts", u32),
        ("max_rwq_indirection_tables", u32),
        ("max_rwq_indirection_table_size", u32),
        ("rx_hash_fields_mask", u64),
        ("rx_hash_function", u8),
    ],
)


class ibv_packet_pacing_caps(ctypes.Structure):
    """struct ibv_packet_pacing_caps (rates in kbps)."""


define(ibv_packet_pacing_caps, [("qp_rate_limit_min", u32), ("qp_rate_limit_max", u32), ("supported_qpts", u32)])


class ibv_tm_caps(ctypes.Structure):
    """struct ibv_tm_caps: tag matching capabilities."""


define(
    ibv_tm_caps,
    [("max_rndv_hdr_size", u32), ("max_num_tags", u32), ("flags", u32), ("max_ops", u32), ("max_sge", u32)],
)


class ibv_cq_moderation_caps(ctypes.Structure):
    """struct ibv_cq_moderation_caps."""


define(ibv_cq_moderation_caps, [("max_cq_count", u16), ("max_cq_period", u16)])


class ibv_pci_atomic_caps(ctypes.Structure):
    """struct ibv_pci_atomic_caps: bitmasks of enum ibv_pci_atomic_op_size."""


define(ibv_pci_atomic_caps, [("fetch_add", u16), ("swap", u16), ("compare_swap", u16)])


class ibv_device_attr_ex(ctypes.Structure):
    """struct ibv_device_attr_ex: the inline passes sizeof() of this to the provider's query_device_ex."""


define(
    ibv_device_attr_ex,
    [
        ("orig_attr", ibv_device_attr),
        ("comp_mask", u32),
        ("odp_caps", ibv_odp_caps),
        ("completion_timestamp_mask", u64),
        ("hca_core_clock", u64),
        ("device_cap_flags_ex", u64),
        ("tso_caps", ibv_tso_caps),
        ("rss_caps", ibv_rss_caps),
        ("max_wq_type_rq", u32),
        ("packet_pacing_caps", ibv_packet_pacing_caps),
        ("raw_packet_caps", u32),
        ("tm_caps", ibv_tm_caps),
        ("cq_mod_caps", ibv_cq_moderation_caps),
        ("max_dm_size", u64),
        ("pci_atomic_caps", ibv_pci_atomic_caps),
        ("xrc_odp_caps", u32),
        ("phys_port_cnt_ex", u32),
    ],
)


class ibv_port_attr(ctypes.Structure):
    """struct ibv_port_attr: the macro ibv_query_port passes sizeof() of this to the provider."""


define(
    ibv_port_attr,
    [
        ("state", E("ibv_port_state")),
        ("max_mtu", E("ibv_mtu")),
        ("active_mtu", E("ibv_mtu")),
        ("gid_tbl_len", c_int),
        ("port_cap_flags", u32),
        ("max_msg_sz", u32),
        ("bad_pkey_cntr", u32),
        ("qkey_viol_cntr", u32),
        ("pkey_tbl_len", u16),
        ("lid", u16),
        ("sm_lid", u16),
        ("lmc", u8),
        ("max_vl_num", u8),
        ("sm_sl", u8),
        ("subnet_timeout", u8),
        ("init_type_reply", u8),
        ("active_width", u8),
        ("active_speed", u8),
        ("phys_state", u8),
        ("link_layer", u8),
        ("flags", u8),
        ("port_cap_flags2", u16),
    ],
)


class _ibv_async_event_element(ctypes.Union):
    """ibv_async_event.element: the object the event is about, or a port number."""


define(
    _ibv_async_event_element,
    [
        ("cq", "struct ibv_cq *"),
        ("qp", "struct ibv_qp *"),
        ("srq", "struct ibv_srq *"),
        ("wq", "struct ibv_wq *"),
        ("port_num", c_int),
    ],
    cname=None,
)


class ibv_async_event(ctypes.Structure):
    """struct ibv_async_event (ibv_get_async_event)."""


define(ibv_async_event, [("element", _ibv_async_event_element), ("event_type", E("ibv_event_type"))])


class ibv_values_ex(ctypes.Structure):
    """struct ibv_values_ex (ibv_query_rt_values_ex)."""


define(ibv_values_ex, [("comp_mask", u32), ("raw_clock", timespec)])
