"""C declarations, as written in verbs.h, turned into ctypes types.

Each verb's prototype and each function pointer of an op table is written once, as C text
(``"int (struct ibv_qp *, struct ibv_send_wr *, struct ibv_send_wr **)"``), and its ctypes form is
derived from that text here. One text serves two ends: ctypes calls through it, and
tests/unit/test_ibv_abi.py and test_ibv_lib.py hand the very same text to gcc with
``__builtin_types_compatible_p`` against the installed header, so a prototype that drifts from
verbs.h fails a test instead of corrupting a call.

Every data pointer becomes ``c_void_p`` (a call returns an address as an int, or None for NULL);
``char *`` results become ``c_char_p`` (bytes), as the string helpers return them.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any, Optional

from pytest_rdma.ibv.enums import ENUMS

# Integer types of the header by their spelling. __be* are big-endian on the wire but plain
# unsigned integers to the ABI.
_SCALARS: dict[str, Any] = {
    "char": ctypes.c_char,
    "int": ctypes.c_int,
    "unsigned int": ctypes.c_uint,
    "uint8_t": ctypes.c_uint8,
    "uint16_t": ctypes.c_uint16,
    "uint32_t": ctypes.c_uint32,
    "uint64_t": ctypes.c_uint64,
    "__be16": ctypes.c_uint16,
    "__be32": ctypes.c_uint32,
    "__be64": ctypes.c_uint64,
    "size_t": ctypes.c_size_t,
    "ssize_t": ctypes.c_ssize_t,
    "uintptr_t": ctypes.c_size_t,
    "socklen_t": ctypes.c_uint32,
    "sa_family_t": ctypes.c_ushort,
}

# Enums of other headers built on verbs.h (rdma_cma.h), by name: pytest_rdma.ibv.rdmacm adds its own.
_OTHER_ENUMS: dict[str, dict[str, int]] = {}


def register_enums(enums: dict[str, dict[str, int]]) -> None:
    """Make `enums` known to enum_type(), for prototypes of a library beside libibverbs."""
    _OTHER_ENUMS.update(enums)


def enum_type(name: str) -> Any:
    """The integer type gcc gives `enum name`: unsigned int unless a member is negative.

    gcc picks the enum's type from its values, so ``enum ibv_qp_state`` is unsigned and
    ``enum ibv_node_type`` (IBV_NODE_UNKNOWN = -1) is signed; the layout test checks the sign.
    """
    members = ENUMS[name] if name in ENUMS else _OTHER_ENUMS[name]
    return ctypes.c_int if min(members.values()) < 0 else ctypes.c_uint


def scalar(decl: str) -> Any:
    """The ctypes type of one C type spelled as in a prototype (None for void)."""
    text = " ".join(decl.replace("const ", "").split())
    if "*" in text:
        return ctypes.c_char_p if text.replace(" ", "") == "char*" else ctypes.c_void_p
    if text == "void":
        return None
    if text.startswith("enum "):
        return enum_type(text[len("enum ") :])
    return _SCALARS[text]


@dataclass(frozen=True)
class Signature:
    """A C function type: its text, and the ctypes result and argument types derived from it."""

    text: str
    restype: Any
    argtypes: tuple[Any, ...]

    @property
    def pointer_text(self) -> str:
        """The C spelling of a pointer to this function type, as gcc's typeof would compare it."""
        ret, _, params = self.text.partition("(")
        return f"{ret.strip()} (*)({params}"

    def functype(self, use_errno: bool = True) -> Any:
        """A ctypes CFUNCTYPE for calling a function pointer of this type."""
        return ctypes.CFUNCTYPE(self.restype, *self.argtypes, use_errno=use_errno)


def signature(text: str) -> Signature:
    """Parse ``"RET (ARG, ARG, ...)"`` (no parameter names, no function-pointer parameters)."""
    ret, open_paren, rest = text.partition("(")
    if not open_paren or not rest.endswith(")"):
        raise ValueError(f"not a function type: {text!r}")
    params = [p.strip() for p in rest[:-1].split(",") if p.strip()]
    if params == ["void"]:
        params = []
    return Signature(text, scalar(ret), tuple(scalar(p) for p in params))


def is_function(hint: Optional[str]) -> bool:
    """Whether a field's C type hint names a function pointer (it has a parameter list)."""
    return hint is not None and "(" in hint
