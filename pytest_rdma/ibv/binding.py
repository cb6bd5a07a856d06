"""The binding's one entry point: ``call(name, *args)`` runs a documented verb as a C program would.

A C program compiled against the installed verbs.h calls an exported function of the library
directly (``lib``) and runs a ``static inline`` verb (or macro) as the header's code, which
``mirrors`` and ``mirrors_special`` transcribe. ``call`` returns the C value untouched (an int
with its sign; a pointer as an int, or None for NULL; bytes for ``char *``), errno as it stood
right after the call (set to 0 just before it), and the route: who answered.

This module sits above the three, so none of them imports another in a circle: ``mirrors`` is
the registry and the table-driven mirrors, ``mirrors_special`` registers into it, and the
complete table is ``MIRRORS`` here.
"""

from __future__ import annotations

import ctypes
from typing import Any

from pytest_rdma.ibv import (
    lib,
    mirrors,
    mirrors_special,  # noqa: F401  (imported for its registrations into mirrors)
)
from pytest_rdma.ibv.lib import EXPORTED, ROUTE_LIBRARY, Raw

# Every inline verb and macro: the table mirrors' own and mirrors_special's registrations fill.
MIRRORS = mirrors.MIRRORS


def call(name: str, *args: Any) -> Raw:
    """Run the documented verb `name` as a C program would, and say who answered."""
    if name not in MIRRORS and name not in EXPORTED:
        raise KeyError(f"{name} is not a verb of this binding (see lib.EXPORTED and binding.MIRRORS)")
    ctypes.set_errno(0)
    if name in MIRRORS:
        value, route = MIRRORS[name](*args)
    else:
        value, route = lib.c_call(name, *args), ROUTE_LIBRARY
    return Raw(value, ctypes.get_errno(), route)
