"""Flow steering: filters, specs, the flow attribute header, flows and (ESP) flow actions.

ibv_flow_attr is a header followed in memory by `num_of_specs` specs of varying size; a caller
lays them out in one buffer (e.g. a Structure with an ibv_flow_attr and the specs as fields).
The ESP types are the kernel's ib_uverbs_flow_action_esp* that verbs_api.h renames with #define;
the classes carry the ibv_ names a verbs program writes.
"""

from __future__ import annotations

import ctypes

from pytest_rdma.ibv.abi._base import define, u8, u16, u32, u64
from pytest_rdma.ibv.cdecl import enum_type as E

_TYPE = E("ibv_flow_spec_type")


class ibv_flow_eth_filter(ctypes.Structure):
    """struct ibv_flow_eth_filter."""


define(
    ibv_flow_eth_filter,
    [("dst_mac", u8 * 6), ("src_mac", u8 * 6), ("ether_type", u16), ("vlan_tag", u16)],
)


class ibv_flow_ipv4_filter(ctypes.Structure):
    """struct ibv_flow_ipv4_filter."""


define(ibv_flow_ipv4_filter, [("src_ip", u32), ("dst_ip", u32)])


class ibv_flow_ipv4_ext_filter(ctypes.Structure):
    """struct ibv_flow_ipv4_ext_filter."""


define(
    ibv_flow_ipv4_ext_filter,
    [("src_ip", u32), ("dst_ip", u32), ("proto", u8), ("tos", u8), ("ttl", u8), ("flags", u8)],
)


class ibv_flow_ipv6_filter(ctypes.Structure):
    """struct ibv_flow_ipv6_filter."""


define(
    ibv_flow_ipv6_filter,
    [
        ("src_ip", u8 * 16),
        ("dst_ip", u8 * 16),
        ("flow_label", u32),
        ("next_hdr", u8),
        ("traffic_class", u8),
        ("hop_limit", u8),
    ],
)


class ibv_flow_esp_filter(ctypes.Structure):
    """struct ibv_flow_esp_filter."""


define(ibv_flow_esp_filter, [("spi", u32), ("seq", u32)])


class ibv_flow_tcp_udp_filter(ctypes.Structure):
    """struct ibv_flow_tcp_udp_filter."""


define(ibv_flow_tcp_udp_filter, [("dst_port", u16), ("src_port", u16)])


class ibv_flow_gre_filter(ctypes.Structure):
    """struct ibv_flow_gre_filter."""


define(ibv_flow_gre_filter, [("c_ks_res0_ver", u16), ("protocol", u16), ("key", u32)])


class ibv_flow_mpls_filter(ctypes.Structure):
    """struct ibv_flow_mpls_filter."""


define(ibv_flow_mpls_filter, [("label", u32)])


class ibv_flow_tunnel_filter(ctypes.Structure):
    """struct ibv_flow_tunnel_filter."""


define(ibv_flow_tunnel_filter, [("tunnel_id", u32)])


def _spec(cls: type, filter_type: type) -> None:
    # Every filtering spec is {type, size, val, mask}.
    define(cls, [("type", _TYPE), ("size", u16), ("val", filter_type), ("mask", filter_type)])


class ibv_flow_spec_eth(ctypes.Structure):
    """struct ibv_flow_spec_eth."""


_spec(ibv_flow_spec_eth, ibv_flow_eth_filter)


class ibv_flow_spec_ipv4(ctypes.Structure):
    """struct ibv_flow_spec_ipv4."""


_spec(ibv_flow_spec_ipv4, ibv_flow_ipv4_filter)


class ibv_flow_spec_ipv4_ext(ctypes.Structure):
    """struct ibv_flow_spec_ipv4_ext."""


_spec(ibv_flow_spec_ipv4_ext, ibv_flow_ipv4_ext_filter)


class ibv_flow_spec_ipv6(ctypes.Structure):
    """struct ibv_flow_spec_ipv6."""


_spec(ibv_flow_spec_ipv6, ibv_flow_ipv6_filter)


class ibv_flow_spec_esp(ctypes.Structure):
    """struct ibv_flow_spec_esp."""


_spec(ibv_flow_spec_esp, ibv_flow_esp_filter)


class ibv_flow_spec_tcp_udp(ctypes.Structure):
    """struct ibv_flow_spec_tcp_udp."""


_spec(ibv_flow_spec_tcp_udp, ibv_flow_tcp_udp_filter)


class ibv_flow_spec_gre(ctypes.Structure):
    """struct ibv_flow_spec_gre."""


_spec(ibv_flow_spec_gre, ibv_flow_gre_filter)


class ibv_flow_spec_mpls(ctypes.Structure):
    """struct ibv_flow_spec_mpls."""


_spec(ibv_flow_spec_mpls, ibv_flow_mpls_filter)


class ibv_flow_spec_tunnel(ctypes.Structure):
    """struct ibv_flow_spec_tunnel."""


_spec(ibv_flow_spec_tunnel, ibv_flow_tunnel_filter)


class ibv_flow_spec_action_tag(ctypes.Structure):
    """struct ibv_flow_spec_action_tag."""


define(ibv_flow_spec_action_tag, [("type", _TYPE), ("size", u16), ("tag_id", u32)])


class ibv_flow_spec_action_drop(ctypes.Structure):
    """struct ibv_flow_spec_action_drop."""


define(ibv_flow_spec_action_drop, [("type", _TYPE), ("size", u16)])


class ibv_flow_spec_action_handle(ctypes.Structure):
    """struct ibv_flow_spec_action_handle."""


define(ibv_flow_spec_action_handle, [("type", _TYPE), ("size", u16), ("action", "const struct ibv_flow_action *")])


class ibv_flow_spec_counter_action(ctypes.Structure):
    """struct ibv_flow_spec_counter_action."""


define(ibv_flow_spec_counter_action, [("type", _TYPE), ("size", u16), ("counters", "struct ibv_counters *")])


class _flow_spec_hdr(ctypes.Structure):
    """ibv_flow_spec.hdr."""


define(_flow_spec_hdr, [("type", _TYPE), ("size", u16)], cname=None)


class _flow_spec_any(ctypes.Union):
    """ibv_flow_spec's anonymous union of every spec."""


define(
    _flow_spec_any,
    [
        ("hdr", _flow_spec_hdr),
        ("eth", ibv_flow_spec_eth),
        ("ipv4", ibv_flow_spec_ipv4),
        ("tcp_udp", ibv_flow_spec_tcp_udp),
        ("ipv4_ext", ibv_flow_spec_ipv4_ext),
        ("ipv6", ibv_flow_spec_ipv6),
        ("esp", ibv_flow_spec_esp),
        ("tunnel", ibv_flow_spec_tunnel),
        ("gre", ibv_flow_spec_gre),
        ("mpls", ibv_flow_spec_mpls),
        ("flow_tag", ibv_flow_spec_action_tag),
        ("drop", ibv_flow_spec_action_drop),
        ("handle", ibv_flow_spec_action_handle),
        ("flow_count", ibv_flow_spec_counter_action),
    ],
    cname=None,
)


class ibv_flow_spec(ctypes.Structure):
    """struct ibv_flow_spec: any one spec."""


define(ibv_flow_spec, [("_any", _flow_spec_any)], anonymous=("_any",))


class ibv_flow_attr(ctypes.Structure):
    """struct ibv_flow_attr: the header of a flow rule; its specs follow it in memory."""


define(
    ibv_flow_attr,
    [
        ("comp_mask", u32),
        ("type", E("ibv_flow_attr_type")),
        ("size", u16),
        ("priority", u16),
        ("num_of_specs", u8),
        ("port", u8),
        ("flags", u32),
    ],
)


class ibv_flow(ctypes.Structure):
    """struct ibv_flow: ibv_destroy_flow's inline reads `context` from it."""


define(ibv_flow, [("comp_mask", u32), ("context", "struct ibv_context *"), ("handle", u32)])


class ibv_flow_action(ctypes.Structure):
    """struct ibv_flow_action."""


define(ibv_flow_action, [("context", "struct ibv_context *")])


class ibv_flow_action_esp(ctypes.Structure):
    """struct ibv_flow_action_esp (= struct ib_uverbs_flow_action_esp)."""


define(
    ibv_flow_action_esp,
    [("spi", u32), ("seq", u32), ("tfc_pad", u32), ("flags", u32), ("hard_limit_pkts", u64)],
)


class ibv_flow_action_esp_keymat_aes_gcm(ctypes.Structure):
    """struct ibv_flow_action_esp_keymat_aes_gcm (= struct ib_uverbs_flow_action_esp_keymat_aes_gcm)."""


define(
    ibv_flow_action_esp_keymat_aes_gcm,
    [("iv", u64), ("iv_algo", u32), ("salt", u32), ("icv_len", u32), ("key_len", u32), ("aes_key", u32 * 8)],
)


class ibv_flow_action_esp_replay_bmp(ctypes.Structure):
    """struct ibv_flow_action_esp_replay_bmp (= struct ib_uverbs_flow_action_esp_replay_bmp)."""


define(ibv_flow_action_esp_replay_bmp, [("size", u32)])


class _esp_encap_val(ctypes.Union):
    """RDMA_UAPI_PTR(void *, val_ptr) on a 64-bit host: the pointer or its u64."""


define(_esp_encap_val, [("val_ptr", "void *"), ("val_ptr_data_u64", u64)], cname=None)


class _esp_encap_next(ctypes.Union):
    """RDMA_UAPI_PTR(struct ib_uverbs_flow_action_esp_encap *, next_ptr)."""


define(
    _esp_encap_next,
    [("next_ptr", "struct ib_uverbs_flow_action_esp_encap *"), ("next_ptr_data_u64", u64)],
    cname=None,
)


class ibv_flow_action_esp_encap(ctypes.Structure):
    """struct ibv_flow_action_esp_encap (= struct ib_uverbs_flow_action_esp_encap)."""


define(
    ibv_flow_action_esp_encap,
    [("_val", _esp_encap_val), ("_next", _esp_encap_next), ("len", u16), ("type", u16)],
    anonymous=("_val", "_next"),
)


class ibv_flow_action_esp_attr(ctypes.Structure):
    """struct ibv_flow_action_esp_attr (ibv_create_flow_action_esp, ibv_modify_flow_action_esp)."""


define(
    ibv_flow_action_esp_attr,
    [
        ("esp_attr", "struct ibv_flow_action_esp *"),
        ("keymat_proto", E("ibv_flow_action_esp_keymat")),
        ("keymat_len", u16),
        ("keymat_ptr", "void *"),
        ("replay_proto", E("ibv_flow_action_esp_replay")),
        ("replay_len", u16),
        ("replay_ptr", "void *"),
        ("esp_encap", "struct ibv_flow_action_esp_encap *"),
        ("comp_mask", u32),
        ("esn", u32),
    ],
)
