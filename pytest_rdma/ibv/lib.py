"""libibverbs.so.1 through ctypes: the table of exported verbs and how a C value crosses into them.

The one entry point for a documented verb is ``pytest_rdma.ibv.binding.call``, which runs an
exported function from here and a ``static inline`` verb through its transcription in
``mirrors``; both build on this module, which imports neither.

Arguments: ints for integers; for pointers an int address, None, a ctypes Structure/Union/Array
(passed by reference, as C passes ``&attr``), a ctypes pointer, ``ctypes.byref(x)`` (without
offset) or a ``c_void_p`` (its value). The library is loaded by soname: ctypes.util.find_library
would spawn gcc and ldconfig to find it, and loading needs no RDMA device.
"""

from __future__ import annotations

import ctypes
import functools
from dataclasses import dataclass
from typing import Any, Optional

from pytest_rdma.ibv import cdecl

LIBRARY = "libibverbs.so.1"
ROUTE_LIBRARY = "libibverbs"  # the route of an exported function


@dataclass(frozen=True)
class Raw:
    """What one call did, as C would see it."""

    value: Any  # the C return value as ctypes gives it (int; pointer as int or None; bytes for char*)
    errno: int  # errno right after the call; set to 0 just before it
    route: str  # "libibverbs", "provider:<op>" or "libibverbs:<reason>" (see pytest_rdma.ibv)


# Every exported function of libibverbs.so.1 that a man page documents, and the two the header's
# inlines forward to (_ibv_query_gid_ex, _ibv_query_gid_table), as C prototypes without names.
# tests/unit/test_ibv_lib.py has gcc compare each one with the installed header.
EXPORTED: dict[str, str] = {
    "ibv_get_device_list": "struct ibv_device **(int *)",
    "ibv_free_device_list": "void (struct ibv_device **)",
    "ibv_get_device_name": "const char *(struct ibv_device *)",
    "ibv_get_device_index": "int (struct ibv_device *)",
    "ibv_get_device_guid": "__be64 (struct ibv_device *)",  # big-endian, as stored
    "ibv_open_device": "struct ibv_context *(struct ibv_device *)",
    "ibv_close_device": "int (struct ibv_context *)",
    "ibv_import_device": "struct ibv_context *(int)",
    "ibv_import_pd": "struct ibv_pd *(struct ibv_context *, uint32_t)",
    "ibv_unimport_pd": "void (struct ibv_pd *)",
    "ibv_import_mr": "struct ibv_mr *(struct ibv_pd *, uint32_t)",
    "ibv_unimport_mr": "void (struct ibv_mr *)",
    "ibv_import_dm": "struct ibv_dm *(struct ibv_context *, uint32_t)",
    "ibv_unimport_dm": "void (struct ibv_dm *)",
    "ibv_get_async_event": "int (struct ibv_context *, struct ibv_async_event *)",
    "ibv_ack_async_event": "void (struct ibv_async_event *)",
    "ibv_query_device": "int (struct ibv_context *, struct ibv_device_attr *)",
    # The exported ibv_query_port takes the old, shorter port attr; verbs.h hides it behind a
    # macro of the same name (mirrors.query_port), which is what call("ibv_query_port") runs.
    "ibv_query_port": "int (struct ibv_context *, uint8_t, struct _compat_ibv_port_attr *)",
    "ibv_query_gid": "int (struct ibv_context *, uint8_t, int, union ibv_gid *)",
    "_ibv_query_gid_ex": "int (struct ibv_context *, uint32_t, uint32_t, struct ibv_gid_entry *, uint32_t, size_t)",
    "_ibv_query_gid_table": "ssize_t (struct ibv_context *, struct ibv_gid_entry *, size_t, uint32_t, size_t)",
    "ibv_query_pkey": "int (struct ibv_context *, uint8_t, int, __be16 *)",
    "ibv_get_pkey_index": "int (struct ibv_context *, uint8_t, __be16)",
    "ibv_alloc_pd": "struct ibv_pd *(struct ibv_context *)",
    "ibv_dealloc_pd": "int (struct ibv_pd *)",
    # ibv_reg_mr and ibv_reg_mr_iova are also macros (mirrors.reg_mr): these are the functions.
    "ibv_reg_mr": "struct ibv_mr *(struct ibv_pd *, void *, size_t, int)",
    "ibv_reg_mr_iova": "struct ibv_mr *(struct ibv_pd *, void *, size_t, uint64_t, int)",
    "ibv_reg_mr_iova2": "struct ibv_mr *(struct ibv_pd *, void *, size_t, uint64_t, unsigned int)",
    "ibv_reg_dmabuf_mr": "struct ibv_mr *(struct ibv_pd *, uint64_t, size_t, uint64_t, int, int)",
    "ibv_rereg_mr": "int (struct ibv_mr *, int, struct ibv_pd *, void *, size_t, int)",
    "ibv_dereg_mr": "int (struct ibv_mr *)",
    "ibv_create_comp_channel": "struct ibv_comp_channel *(struct ibv_context *)",
    "ibv_destroy_comp_channel": "int (struct ibv_comp_channel *)",
    "ibv_create_cq": "struct ibv_cq *(struct ibv_context *, int, void *, struct ibv_comp_channel *, int)",
    "ibv_resize_cq": "int (struct ibv_cq *, int)",
    "ibv_destroy_cq": "int (struct ibv_cq *)",
    "ibv_get_cq_event": "int (struct ibv_comp_channel *, struct ibv_cq **, void **)",
    "ibv_ack_cq_events": "void (struct ibv_cq *, unsigned int)",
    "ibv_create_srq": "struct ibv_srq *(struct ibv_pd *, struct ibv_srq_init_attr *)",
    "ibv_modify_srq": "int (struct ibv_srq *, struct ibv_srq_attr *, int)",
    "ibv_query_srq": "int (struct ibv_srq *, struct ibv_srq_attr *)",
    "ibv_destroy_srq": "int (struct ibv_srq *)",
    "ibv_create_qp": "struct ibv_qp *(struct ibv_pd *, struct ibv_qp_init_attr *)",
    "ibv_modify_qp": "int (struct ibv_qp *, struct ibv_qp_attr *, int)",
    "ibv_query_qp": "int (struct ibv_qp *, struct ibv_qp_attr *, int, struct ibv_qp_init_attr *)",
    "ibv_query_qp_data_in_order": "int (struct ibv_qp *, enum ibv_wr_opcode, uint32_t)",
    "ibv_destroy_qp": "int (struct ibv_qp *)",
    "ibv_qp_to_qp_ex": "struct ibv_qp_ex *(struct ibv_qp *)",
    "ibv_set_ece": "int (struct ibv_qp *, struct ibv_ece *)",
    "ibv_query_ece": "int (struct ibv_qp *, struct ibv_ece *)",
    "ibv_create_ah": "struct ibv_ah *(struct ibv_pd *, struct ibv_ah_attr *)",
    "ibv_init_ah_from_wc": (
        "int (struct ibv_context *, uint8_t, struct ibv_wc *, struct ibv_grh *, struct ibv_ah_attr *)"
    ),
    "ibv_create_ah_from_wc": "struct ibv_ah *(struct ibv_pd *, struct ibv_wc *, struct ibv_grh *, uint8_t)",
    "ibv_destroy_ah": "int (struct ibv_ah *)",
    "ibv_attach_mcast": "int (struct ibv_qp *, const union ibv_gid *, uint16_t)",
    "ibv_detach_mcast": "int (struct ibv_qp *, const union ibv_gid *, uint16_t)",
    "ibv_fork_init": "int (void)",
    "ibv_is_fork_initialized": "enum ibv_fork_status (void)",
    # The string and rate helpers answer without a device, but they are documented verbs.
    "ibv_node_type_str": "const char *(enum ibv_node_type)",
    "ibv_port_state_str": "const char *(enum ibv_port_state)",
    "ibv_event_type_str": "const char *(enum ibv_event_type)",
    "ibv_wc_status_str": "const char *(enum ibv_wc_status)",
    "ibv_rate_to_mult": "int (enum ibv_rate)",
    "mult_to_ibv_rate": "enum ibv_rate (int)",
    "ibv_rate_to_mbps": "int (enum ibv_rate)",
    "mbps_to_ibv_rate": "enum ibv_rate (int)",
}


class WouldCrash(RuntimeError):
    """The header's inline would dereference or call through NULL: a C program would crash there.

    Raised instead of touching address 0, so a check can report what was missing, e.g. a provider
    that leaves ops.post_send or ibv_cq_ex.read_opcode NULL, or a NULL object passed to an inline
    that reads ``obj->context``.
    """

    def __init__(self, verb: str, what: str) -> None:
        super().__init__(f"{verb}: the header's inline would use NULL {what} (a C program would crash)")
        self.verb = verb
        self.what = what


@functools.cache
def library() -> ctypes.CDLL:
    """libibverbs.so.1, loaded once, with errno captured around every call."""
    return ctypes.CDLL(LIBRARY, use_errno=True)


@functools.cache
def signature(name: str) -> cdecl.Signature:
    """The ctypes form of an exported verb's prototype."""
    return cdecl.signature(EXPORTED[name])


@functools.cache
def function(name: str) -> Any:
    """The exported function `name` with its argtypes and restype set from EXPORTED."""
    sig = signature(name)
    fn = getattr(library(), name)
    fn.restype = sig.restype
    fn.argtypes = list(sig.argtypes)
    return fn


def address(value: Any) -> Optional[int]:
    """An argument meant as a pointer, as the address C would receive (None for NULL)."""
    if value is None or isinstance(value, int):
        return value or None
    if isinstance(value, ctypes.c_void_p):
        return value.value
    if isinstance(value, (ctypes.Structure, ctypes.Union, ctypes.Array)):
        return ctypes.addressof(value)
    if isinstance(value, ctypes._Pointer):
        return ctypes.cast(value, ctypes.c_void_p).value
    if type(value).__name__ == "CArgObject":  # ctypes.byref(x)
        return ctypes.addressof(value._obj)
    raise TypeError(f"cannot pass {value!r} as a pointer: give an int address, a ctypes object or byref()")


def c_args(argtypes: tuple[Any, ...], args: tuple[Any, ...], verb: str) -> list[Any]:
    """The arguments as ctypes takes them: every pointer parameter as an address."""
    if len(args) != len(argtypes):
        raise TypeError(f"{verb} takes {len(argtypes)} arguments, got {len(args)}")
    return [address(arg) if kind is ctypes.c_void_p else arg for kind, arg in zip(argtypes, args)]


def c_call(name: str, *args: Any) -> Any:
    """Call the exported function `name`; the C value only (errno is left as the call left it)."""
    return function(name)(*c_args(signature(name).argtypes, args, name))


class _DlInfo(ctypes.Structure):
    _fields_ = [
        ("dli_fname", ctypes.c_char_p),
        ("dli_fbase", ctypes.c_void_p),
        ("dli_sname", ctypes.c_char_p),
        ("dli_saddr", ctypes.c_void_p),
    ]


def owner(code_address: Optional[int]) -> Optional[str]:
    """The shared object that holds `code_address` (dladdr), e.g. the provider's librxe-rdmav34.so.

    An op pointer may point into libibverbs itself (verbs_set_ops fills gaps with its own
    fallbacks), so this tells a provider's own code from the library's.
    """
    if not code_address:
        return None
    libc = ctypes.CDLL("libc.so.6")
    libc.dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    info = _DlInfo()
    if not libc.dladdr(code_address, ctypes.byref(info)) or not info.dli_fname:
        return None
    return info.dli_fname.decode()


# Names the ibv_* man pages carry that are no verb to call, and why (tests/unit/test_ibv_lib.py
# requires every documented name to be bound or listed here).
NOT_CALLABLE: dict[str, str] = {
    "ibv_create_flow_action": "a page name: its verbs are ibv_create_flow_action_esp and ibv_destroy_flow_action",
    "ibv_modify_flow_action": "a page name: its verb is ibv_modify_flow_action_esp",
    "ibv_wr_post": "a page name (IBV_WR API): its verbs are ibv_wr_start, ibv_wr_send, ... ibv_wr_complete",
    "ibv_wc_read_pkey_index": "ibv_create_cq_ex(3) documents it, but verbs.h (rdma-core 44) has no such function",
    "ibv_wc_read_XXX": "a placeholder in ibv_create_flow_action(3) for the ibv_wc_read_* accessors",
    "ibv_destroy_action": "a misspelling in ibv_create_flow_action(3) SEE ALSO of ibv_destroy_flow_action",
    "ibv_set_wr_sge": "a misspelling in the EXAMPLE of ibv_wr_post(3) of ibv_wr_set_sge",
    "ibv_flow": "struct ibv_flow, in prose: 'ibv_flow(s)'",
    "ibv_context": "struct ibv_context, in prose: 'ibv_context(s)'",
    "ibv_qp_init_attr_ex": "struct ibv_qp_init_attr_ex, in prose before '(see the EXAMPLE below)'",
}
