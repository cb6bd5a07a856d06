"""How the abi modules declare a C struct: fields as ctypes types, pointers as their C spelling.

A field whose type is given as a string is a pointer: ctypes holds it as ``c_void_p`` (an address,
or None for NULL), and the string, the pointer's C type as verbs.h writes it, is kept in the
class's ``_c_`` map. For a function pointer the string is the function type
(``"int (struct ibv_cq *, int)"``), from which pytest_rdma.ibv.cdecl derives the ctypes prototype
used to call through it. tests/unit/test_ibv_abi.py compiles every such string against the
installed header, so the spelling is checked, not just the size.
"""

from __future__ import annotations

import ctypes
from typing import Any, Optional, Union

Field = tuple[str, Union[type, str]]


def define(
    cls: Any, fields: list[Field], anonymous: tuple[str, ...] = (), cname: Optional[str] = "", opaque: bool = False
) -> Any:
    """Give `cls` its _fields_ (pointers as c_void_p), its `_c_` pointer spellings and its C name.

    `cname` "" means ``struct NAME``/``union NAME`` after the class; None marks a struct or union
    that has no name in C (a member's anonymous type), checked only through its parent. `opaque`
    marks a type whose members are libc's business (pthread_mutex_t): only its size is checked.
    """
    hints: dict[str, str] = {}
    ctypes_fields: list[tuple[str, Any]] = []
    for name, kind in fields:
        if isinstance(kind, str):
            hints[name] = kind
            kind = ctypes.c_void_p
        ctypes_fields.append((name, kind))
    if cname == "":
        cname = ("union " if issubclass(cls, ctypes.Union) else "struct ") + cls.__name__
    cls._c_ = hints
    cls._cname_ = cname
    cls._opaque_ = opaque
    if anonymous:
        cls._anonymous_ = anonymous
    cls._fields_ = ctypes_fields
    return cls


class pthread_mutex_t(ctypes.Union):
    """glibc's pthread_mutex_t on x86_64: 40 opaque bytes, aligned as a long."""


define(
    pthread_mutex_t, [("_size", ctypes.c_char * 40), ("_align", ctypes.c_long)], cname="pthread_mutex_t", opaque=True
)


class pthread_cond_t(ctypes.Union):
    """glibc's pthread_cond_t on x86_64: 48 opaque bytes, aligned as a long long."""


define(
    pthread_cond_t, [("_size", ctypes.c_char * 48), ("_align", ctypes.c_longlong)], cname="pthread_cond_t", opaque=True
)


class timespec(ctypes.Structure):
    """struct timespec (ibv_values_ex.raw_clock)."""


define(timespec, [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)])


# Short names for the integer types, so field lists read like the header.
u8, u16, u32, u64 = ctypes.c_uint8, ctypes.c_uint16, ctypes.c_uint32, ctypes.c_uint64
c_int, c_uint, c_size_t, c_char = ctypes.c_int, ctypes.c_uint, ctypes.c_size_t, ctypes.c_char
