"""Structs and enums of <rdma/rdma_cma.h> (librdmacm, rdma-core 44) and the socket addresses they hold.

Declared as pytest_rdma.ibv.abi declares verbs.h's, and checked the same way against the installed
header (tests/unit/test_rdmacm_abi.py). Only what a loopback RC connection needs beyond verbs.h
is here, plus the structs those embed (sockaddr_*), which is every struct of the header but
rdma_addrinfo's relatives the connection does not use (listed as well: they are small).
"""

from __future__ import annotations

import ctypes

from pytest_rdma.ibv import abi, cdecl
from pytest_rdma.ibv.abi._base import c_char, c_int, c_size_t, define, u8, u16, u32

ENUMS: dict[str, dict[str, int]] = {
    "rdma_cm_event_type": {
        name: value
        for value, name in enumerate(
            [
                "RDMA_CM_EVENT_ADDR_RESOLVED",
                "RDMA_CM_EVENT_ADDR_ERROR",
                "RDMA_CM_EVENT_ROUTE_RESOLVED",
                "RDMA_CM_EVENT_ROUTE_ERROR",
                "RDMA_CM_EVENT_CONNECT_REQUEST",
                "RDMA_CM_EVENT_CONNECT_RESPONSE",
                "RDMA_CM_EVENT_CONNECT_ERROR",
                "RDMA_CM_EVENT_UNREACHABLE",
                "RDMA_CM_EVENT_REJECTED",
                "RDMA_CM_EVENT_ESTABLISHED",
                "RDMA_CM_EVENT_DISCONNECTED",
                "RDMA_CM_EVENT_DEVICE_REMOVAL",
                "RDMA_CM_EVENT_MULTICAST_JOIN",
                "RDMA_CM_EVENT_MULTICAST_ERROR",
                "RDMA_CM_EVENT_ADDR_CHANGE",
                "RDMA_CM_EVENT_TIMEWAIT_EXIT",
            ]
        )
    },
    "rdma_port_space": {"RDMA_PS_IPOIB": 0x0002, "RDMA_PS_TCP": 0x0106, "RDMA_PS_UDP": 0x0111, "RDMA_PS_IB": 0x013F},
    "anon:RDMA_MAX_RESP_RES": {"RDMA_MAX_RESP_RES": 0xFF, "RDMA_MAX_INIT_DEPTH": 0xFF},
    "rdma_cm_join_mc_attr_mask": {
        "RDMA_CM_JOIN_MC_ATTR_ADDRESS": 1 << 0,
        "RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS": 1 << 1,
        "RDMA_CM_JOIN_MC_ATTR_RESERVED": 1 << 2,
    },
    "rdma_cm_mc_join_flags": {
        "RDMA_MC_JOIN_FLAG_FULLMEMBER": 0,
        "RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER": 1,
        "RDMA_MC_JOIN_FLAG_RESERVED": 2,
    },
    "anon:RDMA_OPTION_ID": {"RDMA_OPTION_ID": 0, "RDMA_OPTION_IB": 1},
    "anon:RDMA_OPTION_ID_TOS": {
        "RDMA_OPTION_ID_TOS": 0,
        "RDMA_OPTION_ID_REUSEADDR": 1,
        "RDMA_OPTION_ID_AFONLY": 2,
        "RDMA_OPTION_ID_ACK_TIMEOUT": 3,
    },
    "anon:RDMA_OPTION_IB_PATH": {"RDMA_OPTION_IB_PATH": 1},
}
DEFINES: dict[str, int] = {
    "RDMA_UDP_QKEY": 0x01234567,
    "RAI_PASSIVE": 1,
    "RAI_NUMERICHOST": 2,
    "RAI_NOROUTE": 4,
    "RAI_FAMILY": 8,
}
VALUES: dict[str, int] = {**{m: v for members in ENUMS.values() for m, v in members.items()}, **DEFINES}
cdecl.register_enums(ENUMS)

_FAMILY = ctypes.c_ushort  # sa_family_t


class sockaddr(ctypes.Structure):
    """struct sockaddr."""


define(sockaddr, [("sa_family", _FAMILY), ("sa_data", c_char * 14)])


class in_addr(ctypes.Structure):
    """struct in_addr: an IPv4 address in network byte order."""


define(in_addr, [("s_addr", u32)])


class sockaddr_in(ctypes.Structure):
    """struct sockaddr_in: port and address in network byte order."""


define(
    sockaddr_in,
    [("sin_family", _FAMILY), ("sin_port", u16), ("sin_addr", in_addr), ("sin_zero", ctypes.c_ubyte * 8)],
)


class in6_addr(ctypes.Structure):
    """struct in6_addr (glibc: a struct around a union of byte, half-word and word views)."""


class _in6_u(ctypes.Union):
    """in6_addr.__in6_u."""


define(_in6_u, [("__u6_addr8", u8 * 16), ("__u6_addr16", u16 * 8), ("__u6_addr32", u32 * 4)], cname=None)
define(in6_addr, [("__in6_u", _in6_u)])


class sockaddr_in6(ctypes.Structure):
    """struct sockaddr_in6."""


define(
    sockaddr_in6,
    [
        ("sin6_family", _FAMILY),
        ("sin6_port", u16),
        ("sin6_flowinfo", u32),
        ("sin6_addr", in6_addr),
        ("sin6_scope_id", u32),
    ],
)


class sockaddr_storage(ctypes.Structure):
    """struct sockaddr_storage: room for any address family."""


define(sockaddr_storage, [("ss_family", _FAMILY), ("__ss_padding", c_char * 118), ("__ss_align", ctypes.c_ulong)])


class rdma_ib_addr(ctypes.Structure):
    """struct rdma_ib_addr."""


define(rdma_ib_addr, [("sgid", abi.ibv_gid), ("dgid", abi.ibv_gid), ("pkey", u16)])


def _address_union(prefix: str) -> type:
    class union(ctypes.Union):
        pass

    union.__name__ = union.__qualname__ = f"_rdma_addr_{prefix}"
    union.__doc__ = f"rdma_addr's anonymous union of {prefix} addresses."
    define(
        union,
        [
            (f"{prefix}_addr", sockaddr),
            (f"{prefix}_sin", sockaddr_in),
            (f"{prefix}_sin6", sockaddr_in6),
            (f"{prefix}_storage", sockaddr_storage),
        ],
        cname=None,
    )
    return union


class _rdma_addr_addr(ctypes.Union):
    """rdma_addr.addr."""


define(_rdma_addr_addr, [("ibaddr", rdma_ib_addr)], cname=None)


class rdma_addr(ctypes.Structure):
    """struct rdma_addr: source and destination, then the IB addresses."""


define(
    rdma_addr,
    [("_src", _address_union("src")), ("_dst", _address_union("dst")), ("addr", _rdma_addr_addr)],
    anonymous=("_src", "_dst"),
)


class rdma_route(ctypes.Structure):
    """struct rdma_route."""


define(rdma_route, [("addr", rdma_addr), ("path_rec", "struct ibv_sa_path_rec *"), ("num_paths", c_int)])


class rdma_event_channel(ctypes.Structure):
    """struct rdma_event_channel: its fd can be polled before a blocking rdma_get_cm_event."""


define(rdma_event_channel, [("fd", c_int)])


class rdma_cm_id(ctypes.Structure):
    """struct rdma_cm_id: `verbs` is librdmacm's own ibv_context for the device the address resolved to."""


define(
    rdma_cm_id,
    [
        ("verbs", "struct ibv_context *"),
        ("channel", "struct rdma_event_channel *"),
        ("context", "void *"),
        ("qp", "struct ibv_qp *"),
        ("route", rdma_route),
        ("ps", cdecl.enum_type("rdma_port_space")),
        ("port_num", u8),
        ("event", "struct rdma_cm_event *"),
        ("send_cq_channel", "struct ibv_comp_channel *"),
        ("send_cq", "struct ibv_cq *"),
        ("recv_cq_channel", "struct ibv_comp_channel *"),
        ("recv_cq", "struct ibv_cq *"),
        ("srq", "struct ibv_srq *"),
        ("pd", "struct ibv_pd *"),
        ("qp_type", cdecl.enum_type("ibv_qp_type")),
    ],
)


class rdma_conn_param(ctypes.Structure):
    """struct rdma_conn_param (rdma_connect, rdma_accept)."""


define(
    rdma_conn_param,
    [
        ("private_data", "const void *"),
        ("private_data_len", u8),
        ("responder_resources", u8),
        ("initiator_depth", u8),
        ("flow_control", u8),
        ("retry_count", u8),
        ("rnr_retry_count", u8),
        ("srq", u8),
        ("qp_num", u32),
    ],
)


class rdma_ud_param(ctypes.Structure):
    """struct rdma_ud_param."""


define(
    rdma_ud_param,
    [
        ("private_data", "const void *"),
        ("private_data_len", u8),
        ("ah_attr", abi.ibv_ah_attr),
        ("qp_num", u32),
        ("qkey", u32),
    ],
)


class _rdma_cm_event_param(ctypes.Union):
    """rdma_cm_event.param."""


define(_rdma_cm_event_param, [("conn", rdma_conn_param), ("ud", rdma_ud_param)], cname=None)


class rdma_cm_event(ctypes.Structure):
    """struct rdma_cm_event (rdma_get_cm_event; give it back with rdma_ack_cm_event)."""


define(
    rdma_cm_event,
    [
        ("id", "struct rdma_cm_id *"),
        ("listen_id", "struct rdma_cm_id *"),
        ("event", cdecl.enum_type("rdma_cm_event_type")),
        ("status", c_int),
        ("param", _rdma_cm_event_param),
    ],
)


class rdma_addrinfo(ctypes.Structure):
    """struct rdma_addrinfo (rdma_getaddrinfo)."""


define(
    rdma_addrinfo,
    [
        ("ai_flags", c_int),
        ("ai_family", c_int),
        ("ai_qp_type", c_int),
        ("ai_port_space", c_int),
        ("ai_src_len", u32),
        ("ai_dst_len", u32),
        ("ai_src_addr", "struct sockaddr *"),
        ("ai_dst_addr", "struct sockaddr *"),
        ("ai_src_canonname", "char *"),
        ("ai_dst_canonname", "char *"),
        ("ai_route_len", c_size_t),
        ("ai_route", "void *"),
        ("ai_connect_len", c_size_t),
        ("ai_connect", "void *"),
        ("ai_next", "struct rdma_addrinfo *"),
    ],
)


class rdma_cm_join_mc_attr_ex(ctypes.Structure):
    """struct rdma_cm_join_mc_attr_ex."""


define(rdma_cm_join_mc_attr_ex, [("comp_mask", u32), ("join_flags", u32), ("addr", "struct sockaddr *")])


def all_types() -> list[type]:
    """Every named struct here, for the layout test."""
    return [
        value
        for value in globals().values()
        if isinstance(value, type)
        and issubclass(value, (ctypes.Structure, ctypes.Union))
        and value.__module__ == __name__
        and getattr(value, "_cname_", None)
    ]
