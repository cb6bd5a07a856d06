"""ctypes mirrors of the structs and unions of <infiniband/verbs.h>, named as in C.

Split by area (device, memory, qp, wr, flow); import them all from here:
``from pytest_rdma.ibv import abi; abi.ibv_qp_attr()``. Pointers are ``c_void_p`` fields (an
address as an int), with their C type kept in each class's ``_c_`` map; anonymous unions are
ctypes ``_anonymous_`` members, so ``wc.imm_data`` reads as in C. tests/unit/test_ibv_abi.py
proves every size, offset, sign and pointer type against the installed header with gcc.
"""

from __future__ import annotations

import ctypes
from typing import Any

from pytest_rdma.ibv.abi import device, flow, memory, qp, wr
from pytest_rdma.ibv.abi._base import pthread_cond_t, pthread_mutex_t, timespec
from pytest_rdma.ibv.abi.device import *  # noqa: F403
from pytest_rdma.ibv.abi.flow import *  # noqa: F403
from pytest_rdma.ibv.abi.memory import *  # noqa: F403
from pytest_rdma.ibv.abi.qp import *  # noqa: F403
from pytest_rdma.ibv.abi.wr import *  # noqa: F403

_MODULES = (device, memory, qp, wr, flow)


def all_types() -> list[Any]:
    """Every struct and union declared here that has a name in C, in declaration order (classes `define` made)."""
    found: list[Any] = [pthread_mutex_t, pthread_cond_t, timespec]
    for module in _MODULES:
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, (ctypes.Structure, ctypes.Union))
                and value.__module__ == module.__name__
                and getattr(value, "_cname_", None)
            ):
                found.append(value)
    return found


def by_cname() -> dict[str, type]:
    """The classes by C name ("struct ibv_qp")."""
    return {cls._cname_: cls for cls in all_types()}
