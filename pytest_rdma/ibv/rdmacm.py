"""A minimal ctypes binding of librdmacm.so.1: enough for an RC connection through rdma_cm.

iWARP providers (siw) connect QPs only through the connection manager, so checks of their data
path need it. ``call(name, *args)`` works as pytest_rdma.ibv.binding.call does (Raw value, errno,
route "librdmacm"); QPs, CQs and PDs made here are ordinary verbs objects for binding.call.
rdma_get_local_addr/rdma_get_peer_addr are inlines of rdma_cma.h: pointer arithmetic, mirrored.
"""

from __future__ import annotations

import ctypes
import functools
import socket
import sys
from typing import Any

from pytest_rdma.ibv import cdecl
from pytest_rdma.ibv.lib import Raw, address, c_args
from pytest_rdma.ibv.rdmacm_abi import rdma_addr, rdma_cm_id, rdma_route, sockaddr_in

__all__ = ["EXPORTED", "INLINE", "Raw", "address", "call", "ipv4", "library"]

LIBRARY = "librdmacm.so.1"
ROUTE = "librdmacm"

EXPORTED: dict[str, str] = {
    "rdma_create_event_channel": "struct rdma_event_channel *(void)",
    "rdma_destroy_event_channel": "void (struct rdma_event_channel *)",
    "rdma_create_id": "int (struct rdma_event_channel *, struct rdma_cm_id **, void *, enum rdma_port_space)",
    "rdma_destroy_id": "int (struct rdma_cm_id *)",
    "rdma_bind_addr": "int (struct rdma_cm_id *, struct sockaddr *)",
    "rdma_resolve_addr": "int (struct rdma_cm_id *, struct sockaddr *, struct sockaddr *, int)",
    "rdma_resolve_route": "int (struct rdma_cm_id *, int)",
    "rdma_listen": "int (struct rdma_cm_id *, int)",
    "rdma_connect": "int (struct rdma_cm_id *, struct rdma_conn_param *)",
    "rdma_accept": "int (struct rdma_cm_id *, struct rdma_conn_param *)",
    "rdma_reject": "int (struct rdma_cm_id *, const void *, uint8_t)",
    "rdma_disconnect": "int (struct rdma_cm_id *)",
    "rdma_get_cm_event": "int (struct rdma_event_channel *, struct rdma_cm_event **)",
    "rdma_ack_cm_event": "int (struct rdma_cm_event *)",
    "rdma_create_qp": "int (struct rdma_cm_id *, struct ibv_pd *, struct ibv_qp_init_attr *)",
    "rdma_create_qp_ex": "int (struct rdma_cm_id *, struct ibv_qp_init_attr_ex *)",
    "rdma_destroy_qp": "void (struct rdma_cm_id *)",
    "rdma_init_qp_attr": "int (struct rdma_cm_id *, struct ibv_qp_attr *, int *)",
    "rdma_get_src_port": "__be16 (struct rdma_cm_id *)",
    "rdma_get_dst_port": "__be16 (struct rdma_cm_id *)",
    "rdma_event_str": "const char *(enum rdma_cm_event_type)",
    "rdma_set_option": "int (struct rdma_cm_id *, int, int, void *, size_t)",
    "rdma_migrate_id": "int (struct rdma_cm_id *, struct rdma_event_channel *)",
}

# The inlines of rdma_cma.h: &id->route.addr.src_addr and &id->route.addr.dst_addr.
INLINE: dict[str, str] = {
    "rdma_get_local_addr": "struct sockaddr *(struct rdma_cm_id *)",
    "rdma_get_peer_addr": "struct sockaddr *(struct rdma_cm_id *)",
}
_ADDR_OFFSETS = {
    "rdma_get_local_addr": rdma_cm_id.route.offset + rdma_route.addr.offset + rdma_addr.src_addr.offset,
    "rdma_get_peer_addr": rdma_cm_id.route.offset + rdma_route.addr.offset + rdma_addr.dst_addr.offset,
}


@functools.cache
def library() -> ctypes.CDLL:
    """librdmacm.so.1 by soname (it loads libibverbs.so.1 itself)."""
    return ctypes.CDLL(LIBRARY, use_errno=True)


@functools.cache
def function(name: str) -> Any:
    sig = cdecl.signature(EXPORTED[name])
    fn = getattr(library(), name)
    fn.restype, fn.argtypes = sig.restype, list(sig.argtypes)
    return fn


def call(name: str, *args: Any) -> Raw:
    """Run the librdmacm function `name` (or mirror an inline): value, errno and route, as binding.call."""
    ctypes.set_errno(0)
    if name in _ADDR_OFFSETS:
        (cm_id,) = args
        # A NULL id raises TypeError here, where the C inline would compute a bad address.
        return Raw(address(cm_id) + _ADDR_OFFSETS[name], 0, f"{ROUTE}:inline")  # type: ignore[operator]
    sig = cdecl.signature(EXPORTED[name])
    value = function(name)(*c_args(sig.argtypes, args, name))
    return Raw(value, ctypes.get_errno(), ROUTE)


def ipv4(host: str, port: int) -> sockaddr_in:
    """A sockaddr_in for "a.b.c.d" and a port in host order (stored in network order, as C does)."""
    sin = sockaddr_in(sin_family=socket.AF_INET, sin_port=socket.htons(port))
    sin.sin_addr.s_addr = int.from_bytes(socket.inet_aton(host), sys.byteorder)
    return sin
