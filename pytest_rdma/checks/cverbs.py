"""Multicast attach/detach around ibv_destroy_qp, through libibverbs with ctypes.

pyverbs (rdma-core 44) has no ibv_attach_mcast, so the one claim that needs it
(ibv_create_qp_ex(3) NOTES: destroy fails while attached) calls libibverbs directly.
This module imports nothing from pytest-rdma, so its own source is the reproducer.
"""

from __future__ import annotations

import ctypes
import ipaddress
import os
from dataclasses import dataclass


class _Cap(ctypes.Structure):
    _fields_ = [
        ("max_send_wr", ctypes.c_uint32),
        ("max_recv_wr", ctypes.c_uint32),
        ("max_send_sge", ctypes.c_uint32),
        ("max_recv_sge", ctypes.c_uint32),
        ("max_inline_data", ctypes.c_uint32),
    ]


class _QpInitAttr(ctypes.Structure):
    # struct ibv_qp_init_attr of <infiniband/verbs.h>
    _fields_ = [
        ("qp_context", ctypes.c_void_p),
        ("send_cq", ctypes.c_void_p),
        ("recv_cq", ctypes.c_void_p),
        ("srq", ctypes.c_void_p),
        ("cap", _Cap),
        ("qp_type", ctypes.c_int),
        ("sq_sig_all", ctypes.c_int),
    ]


@dataclass
class McastResult:
    attach_rc: int
    destroy_attached_rc: int
    detach_rc: int
    destroy_after_detach_rc: int


def _lib() -> ctypes.CDLL:
    # By soname, the library's ABI: ctypes.util.find_library would spawn ldconfig to learn it.
    lib = ctypes.CDLL("libibverbs.so.1", use_errno=True)
    for name in ("ibv_get_device_list", "ibv_open_device", "ibv_alloc_pd", "ibv_create_cq", "ibv_create_qp"):
        getattr(lib, name).restype = ctypes.c_void_p
    lib.ibv_get_device_name.restype = ctypes.c_char_p
    lib.ibv_get_device_name.argtypes = [ctypes.c_void_p]
    lib.ibv_open_device.argtypes = [ctypes.c_void_p]
    lib.ibv_alloc_pd.argtypes = [ctypes.c_void_p]
    lib.ibv_create_cq.argtypes = [
        ctypes.c_void_p,
        ctypes.c_int,
        ctypes.c_void_p,
        ctypes.c_void_p,
        ctypes.c_int,
    ]
    lib.ibv_create_qp.argtypes = [ctypes.c_void_p, ctypes.POINTER(_QpInitAttr)]
    for name in ("ibv_attach_mcast", "ibv_detach_mcast"):
        getattr(lib, name).argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint16]
    for name in (
        "ibv_destroy_qp",
        "ibv_destroy_cq",
        "ibv_dealloc_pd",
        "ibv_close_device",
        "ibv_free_device_list",
    ):
        getattr(lib, name).argtypes = [ctypes.c_void_p]
    return lib


def destroy_while_attached(device: str, qp_type: int, mgid: str, mlid: int) -> McastResult:
    """Create a QP, attach it to `mgid`, try to destroy it, detach, destroy again."""
    lib = _lib()
    count = ctypes.c_int(0)
    devices = ctypes.cast(lib.ibv_get_device_list(ctypes.byref(count)), ctypes.POINTER(ctypes.c_void_p))
    if not devices:
        raise OSError(ctypes.get_errno(), "ibv_get_device_list failed")
    ctx = pd = cq = qp = None
    try:
        for index in range(count.value):
            if lib.ibv_get_device_name(devices[index]).decode() == device:
                ctx = lib.ibv_open_device(devices[index])
        if not ctx:
            raise OSError(ctypes.get_errno(), f"cannot open {device}")
        pd = lib.ibv_alloc_pd(ctx)
        cq = lib.ibv_create_cq(ctx, 16, None, None, 0)
        init = _QpInitAttr(send_cq=cq, recv_cq=cq, cap=_Cap(1, 1, 1, 1, 0), qp_type=qp_type)
        qp = lib.ibv_create_qp(pd, ctypes.byref(init))
        if not (pd and cq and qp):
            raise OSError(ctypes.get_errno(), "could not create PD/CQ/QP")
        gid = ipaddress.IPv6Address(mgid).packed
        attach = lib.ibv_attach_mcast(qp, gid, mlid)
        if attach != 0:
            return McastResult(attach, -1, -1, -1)
        destroyed = lib.ibv_destroy_qp(qp)
        if destroyed == 0:
            qp = None
            return McastResult(0, 0, 0, 0)
        detach = lib.ibv_detach_mcast(qp, gid, mlid)
        after = lib.ibv_destroy_qp(qp)
        if after == 0:
            qp = None
        return McastResult(0, destroyed, detach, after)
    finally:
        if qp:
            lib.ibv_destroy_qp(qp)
        if cq:
            lib.ibv_destroy_cq(cq)
        if pd:
            lib.ibv_dealloc_pd(pd)
        if ctx:
            lib.ibv_close_device(ctx)
        lib.ibv_free_device_list(devices)


def reproducer(device: str, qp_type: int, mgid: str, mlid: int) -> str:
    with open(os.path.abspath(__file__), encoding="utf-8") as source:
        text = source.read()
    return (
        f"{text}\n\nif __name__ == '__main__':\n"
        f"    print(destroy_while_attached({device!r}, {qp_type}, {mgid!r}, {mlid}))\n"
    )
