"""Compare ctypes classes with the C header they mirror, by asking gcc.

For each class this generates C that prints, for the type and for every field (recursing into
members whose type has no name in C, e.g. ibv_send_wr.wr.rdma, and flattening anonymous unions as
C does): its offsetof, its sizeof, whether an integer is signed, the element size of an array, and
for each pointer whether its declared type is the C type the class names in `_c_`
(``__builtin_types_compatible_p``). The expected numbers come from ctypes; the test compares the
two maps key by key, so one wrong field shows up as its own key.

A function's prototype (cdecl.Signature) is checked the same way against the header's function,
inline or exported: ``__typeof__(name)`` against the signature's function type.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from pytest_rdma.ibv import cdecl

_SIMPLE_INTS = (
    ctypes.c_int8,
    ctypes.c_uint8,
    ctypes.c_int16,
    ctypes.c_uint16,
    ctypes.c_int32,
    ctypes.c_uint32,
    ctypes.c_int64,
    ctypes.c_uint64,
    ctypes.c_long,
    ctypes.c_ulong,
    ctypes.c_longlong,
    ctypes.c_ulonglong,
    ctypes.c_int,
    ctypes.c_uint,
    ctypes.c_size_t,
    ctypes.c_ssize_t,
)


def _is_int(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, _SIMPLE_INTS)


def _signed(kind: Any) -> int:
    return int(kind(-1).value < 0)


def _is_aggregate(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, (ctypes.Structure, ctypes.Union))


def _is_array(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, ctypes.Array)


@dataclass(frozen=True)
class Member:
    """One field reached from a named type: its C access path and its ctypes facts."""

    owner: type  # the named class the path starts at
    cpath: str  # C member designator, anonymous members left out ("wr.rdma.rkey", "imm_data")
    pypath: str  # the same through ctypes ("wr.rdma.rkey", "_imm.imm_data")
    kind: Any
    offset: int
    hint: Optional[str]  # the `_c_` spelling for a pointer field


def members(cls: Any, cprefix: str = "", pyprefix: str = "", base: int = 0, owner: Any = None) -> Iterator[Member]:
    """Every field of `cls`, recursing into members whose type has no C name."""
    owner = owner or cls
    anonymous = set(getattr(cls, "_anonymous_", ()))
    for name, kind in cls._fields_:
        offset = base + getattr(cls, name).offset
        cpath = cprefix if name in anonymous else f"{cprefix}{name}"
        pypath = f"{pyprefix}{name}"
        if name not in anonymous:
            yield Member(owner, cpath, pypath, kind, offset, cls._c_.get(name))
        if _is_aggregate(kind) and kind._cname_ is None:
            sub = cpath if name in anonymous else cpath + "."
            yield from members(kind, sub, pypath + ".", offset, owner)


class Program:
    """C source that prints `key value` lines, and the values ctypes expects for the same keys."""

    def __init__(self, includes: list[str]) -> None:
        self.includes = includes
        self.lines: list[str] = []
        self.expected: dict[str, int] = {}

    def check(self, key: str, c_expr: str, expected: int) -> None:
        self.lines.append(f'    printf("%s %lld\\n", "{key}", (long long)({c_expr}));')
        self.expected[key] = expected

    def add_type(self, cls: Any) -> int:
        """Checks for one named class and its fields; returns how many fields it checked."""
        cname = cls._cname_
        self.check(f"{cname}:sizeof", f"sizeof({cname})", ctypes.sizeof(cls))
        self.check(f"{cname}:alignof", f"_Alignof({cname})", ctypes.alignment(cls))
        if cls._opaque_:
            return 0
        count = 0
        for member in members(cls):
            self.add_member(cname, member)
            count += 1
        return count

    def add_member(self, cname: str, member: Member) -> None:
        key = f"{cname}.{member.cpath}"
        lvalue = f"(({cname} *)0)->{member.cpath}"
        kind = member.kind
        self.check(f"{key}:offsetof", f"offsetof({cname}, {member.cpath})", member.offset)
        self.check(f"{key}:sizeof", f"sizeof({lvalue})", ctypes.sizeof(kind))
        if _is_int(kind):
            # gcc's type classes: 1 integer, 3 enum; a pointer (5) or struct here would be wrong.
            self.check(
                f"{key}:is_integer",
                f"__builtin_classify_type({lvalue}) == 1 || __builtin_classify_type({lvalue}) == 3",
                1,
            )
            self.check(f"{key}:signed", f"(__typeof__({lvalue}))-1 < 0", _signed(kind))
        elif _is_array(kind):
            element = kind._type_
            self.check(f"{key}:length", f"sizeof({lvalue}) / sizeof({lvalue}[0])", kind._length_)
            self.check(f"{key}:element_sizeof", f"sizeof({lvalue}[0])", ctypes.sizeof(element))
            if element is ctypes.c_char:
                self.check(f"{key}:is_char", f"__builtin_types_compatible_p(__typeof__({lvalue}[0]), char)", 1)
            elif _is_int(element):
                self.check(f"{key}:element_signed", f"(__typeof__({lvalue}[0]))-1 < 0", _signed(element))
        elif kind is ctypes.c_void_p:
            hint = member.hint
            if hint is None:  # a pointer whose C type the class does not name: fail on this key
                self.check(f"{key}:pointer_type_named_in__c_", "0", 1)
                return
            spelled = cdecl.signature(hint).pointer_text if cdecl.is_function(hint) else hint
            self.check(f"{key}:type_is[{hint}]", f"__builtin_types_compatible_p(__typeof__({lvalue}), {spelled})", 1)
        elif _is_aggregate(kind) and kind._cname_:
            self.check(
                f"{key}:type_is[{kind._cname_}]",
                f"__builtin_types_compatible_p(__typeof__({lvalue}), {kind._cname_})",
                1,
            )
        elif _is_aggregate(kind):
            pass  # an unnamed member type: its fields were listed on their own
        else:
            self.check(f"{key}:unsupported_ctypes_type[{kind!r}]", "0", 1)

    def add_function(self, name: str, sig: cdecl.Signature) -> None:
        """The header's declaration of `name` must be the signature's function type."""
        self.check(
            f"{name}:prototype[{sig.text}]",
            # Function types, not pointers: the header's __attribute__((const)) (ibv_rate_to_mult)
            # makes pointer types differ although the functions are the same.
            f"__builtin_types_compatible_p(__typeof__({name}), {sig.text})",
            1,
        )

    def source(self) -> str:
        head = "".join(f"#include <{header}>\n" for header in ["stddef.h", "stdio.h", *self.includes])
        return f"{head}\nint main(void)\n{{\n" + "\n".join(self.lines) + "\n    return 0;\n}\n"


def gcc() -> Optional[str]:
    return shutil.which("gcc")


def run(program: Program, workdir: Path, libs: tuple[str, ...] = ()) -> dict[str, int]:
    """Compile and run `program`; its printed map."""
    src = workdir / "layout.c"
    exe = workdir / "layout"
    src.write_text(program.source())
    # -Wno-...: the `(type)-1 < 0` sign tests are the point, not a mistake.
    cmd = [gcc() or "gcc", "-std=gnu11", "-Wno-type-limits", "-Wno-int-to-pointer-cast", "-o", str(exe), str(src)]
    built = subprocess.run(cmd + [f"-l{lib}" for lib in libs], capture_output=True, text=True, check=False)
    if built.returncode:
        raise AssertionError(f"gcc failed on {src}:\n{built.stderr[-4000:]}")
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    return {key: int(value) for key, value in (line.rsplit(" ", 1) for line in out.splitlines())}


def differences(expected: dict[str, int], actual: dict[str, int]) -> list[str]:
    """One line per key whose C value is not the ctypes value."""
    return [
        f"{key}: ctypes {expected[key]}, C {actual.get(key)}" for key in expected if actual.get(key) != expected[key]
    ]
