"""The header's own inline verbs, compiled into a shim library, against the mirrors, on fake objects.

Each mirror claims to do what verbs.h's inline does. To hold it to that without a device, the
test compiles ``shim_<verb>()`` wrappers around the real inlines of the installed header, builds
a fake world in memory (a verbs_context whose ops are Python callbacks, objects whose ``context``
points at it, zeroed buffers for every other pointer), and runs the shim and the mirror on the same
world in turn. Return value, errno, every op call with its arguments, and every byte of the world
afterwards must agree.
"""

from __future__ import annotations

import ctypes
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from pytest_rdma.ibv import abi, binding, cdecl, mirrors

BUFFER = 4096  # every fake object and argument buffer; larger than any verbs struct
INT_RETURN = 7


def shim_source(names: list[str]) -> str:
    """C wrappers ``shim_NAME`` that call each inline verb of the header."""
    out = ["#include <infiniband/verbs.h>"]
    for name in names:
        sig = cdecl.signature(mirrors.INLINE[name])
        ret, _, rest = sig.text.partition("(")
        params = [p.strip() for p in rest[:-1].split(",") if p.strip() and p.strip() != "void"]
        decl = ", ".join(f"{p} a{i}" for i, p in enumerate(params)) or "void"
        call = f"{name}({', '.join(f'a{i}' for i in range(len(params)))})"
        body = f"{call};" if ret.strip() == "void" else f"return {call};"
        out.append(f"{ret.strip()} shim_{name}({decl}) {{ {body} }}")
    return "\n".join(out) + "\n"


def build_shim(names: list[str], workdir: Path) -> ctypes.CDLL:
    src, so = workdir / "shim.c", workdir / "libshim.so"
    src.write_text(shim_source(names))
    cmd = ["gcc", "-shared", "-fPIC", "-O0", "-o", str(so), str(src), "-libverbs"]
    built = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if built.returncode:
        raise AssertionError(f"gcc failed on the shim:\n{built.stderr[-4000:]}")
    return ctypes.CDLL(str(so), use_errno=True)


@dataclass
class World:
    """Fake objects in memory: one verbs_context, the verb's object, argument buffers, op callbacks."""

    vctx: abi.verbs_context = field(default_factory=abi.verbs_context)
    buffers: list[Any] = field(default_factory=list)
    calls: list[tuple[str, tuple[Any, ...]]] = field(default_factory=list)
    keep: list[Any] = field(default_factory=list)  # callbacks must outlive the calls

    def __post_init__(self) -> None:
        self.vctx.sz = ctypes.sizeof(abi.verbs_context)
        self.vctx.context.abi_compat = mirrors.ABI_IS_EXTENDED

    @property
    def context(self) -> int:
        return ctypes.addressof(self.vctx.context)

    def buffer(self) -> int:
        buf = ctypes.create_string_buffer(BUFFER)
        self.buffers.append(buf)
        return ctypes.addressof(buf)

    def callback(self, label: str, prototype: str) -> int:
        """A C-callable function of type `prototype` that records its call and returns a sentinel."""
        sig = cdecl.signature(prototype)
        result = self.buffer() if sig.restype is ctypes.c_void_p else None

        def op(*args: Any) -> Any:
            self.calls.append((label, args))
            if sig.restype is None:
                return None
            return result if sig.restype is ctypes.c_void_p else INT_RETURN

        fn = ctypes.CFUNCTYPE(sig.restype, *sig.argtypes)(op)
        self.keep.append(fn)
        return ctypes.cast(fn, ctypes.c_void_p).value

    def snapshot(self) -> list[bytes]:
        return [bytes(self.vctx)] + [buf.raw for buf in self.buffers]

    def restore(self, state: list[bytes]) -> None:
        ctypes.memmove(ctypes.addressof(self.vctx), state[0], len(state[0]))
        for buf, raw in zip(self.buffers, state[1:]):
            ctypes.memmove(buf, raw, len(raw))


def struct_of(param: str) -> Optional[Any]:
    """The abi class a ``struct X *`` parameter points to."""
    text = param.replace("const ", "").replace("*", "").strip()
    return abi.by_cname().get(text)


def arguments(world: World, verb: str) -> tuple[Any, ...]:
    """Arguments for `verb`: the context, objects whose context is the fake one, buffers, small ints."""
    sig = cdecl.signature(mirrors.INLINE[verb])
    params = [p.strip() for p in sig.text.partition("(")[2][:-1].split(",") if p.strip()]
    args: list[Any] = []
    for index, (param, kind) in enumerate(zip(params, sig.argtypes)):
        if kind is not ctypes.c_void_p:
            args.append(3 + index)
        elif param.replace("const", "").strip() == "struct ibv_context *":
            args.append(world.context)
        else:
            where = world.buffer()
            cls = struct_of(param)
            if cls is not None and hasattr(cls, "context"):
                ctypes.c_void_p.from_address(where + cls.context.offset).value = world.context
            args.append(where)
    return tuple(args)


@dataclass(frozen=True)
class Outcome:
    value: Any
    errno: int
    calls: tuple[tuple[str, tuple[Any, ...]], ...]
    memory: tuple[bytes, ...]


def run_both(world: World, shim: ctypes.CDLL, verb: str, args: tuple[Any, ...]) -> tuple[Outcome, Outcome]:
    """The header's inline, then the mirror, each from the same starting memory."""
    start = world.snapshot()
    sig = cdecl.signature(mirrors.INLINE[verb])
    fn = getattr(shim, f"shim_{verb}")
    fn.restype, fn.argtypes = sig.restype, list(sig.argtypes)
    world.calls.clear()
    ctypes.set_errno(0)
    value = fn(*args)
    header = Outcome(value, ctypes.get_errno(), tuple(world.calls), tuple(world.snapshot()))
    world.restore(start)
    world.calls.clear()
    raw = binding.call(verb, *args)
    mirror = Outcome(raw.value, raw.errno, tuple(world.calls), tuple(world.snapshot()))
    return header, mirror
