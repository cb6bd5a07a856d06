"""What a recorded call is made of: plain data that the renderers and reporters read."""

from __future__ import annotations

import errno as errno_module
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Union

from pytest_rdma.catalogue.model import Array

# Linux gives EOPNOTSUPP and ENOTSUP one number; the verbs pages and headers say EOPNOTSUPP.
_PREFERRED = {errno_module.EOPNOTSUPP: "EOPNOTSUPP", errno_module.EWOULDBLOCK: "EAGAIN"}


# A verb's C return value as the binding gives it: an int (a pointer as its address), None for NULL
# or void, bytes for a char *.
CValue = Union[int, bytes, None]

# Data read back from the provider (marshal.read_struct): numbers, bytes (a GID, a C string), structs
# and arrays of them as dicts and lists; an out `struct X **` as {"index": n} or {"address": n}.
Readback = Union[int, bytes, str, None, Mapping[str, "Readback"], list["Readback"]]

# A C struct read back (marshal.read_struct): its fields by name.
Struct = Mapping[str, Readback]

# A catalogue value resolved for one call (calls/values.py): a number, a flag (Sym), an object or a
# buffer (Handle), a field of an object (Field), text, memory to lay out (Array), a device fact or a
# value read back, and struct fields (mappings) and lists of structs (tuples) of these.
Resolved = Union[
    int, str, bytes, None, "Handle", "Sym", "Field", Array, Readback, Mapping[str, "Resolved"], tuple["Resolved", ...]
]

# What a call's record shows for an argument or a struct field: a resolved value, or what the call
# layer built of it (a struct, an array of structs, an out parameter it allocated).
Shown = Union[Resolved, "StructArg", "ArrayArg", "OutArg"]

# What a call's result is: the Handle a returned pointer became, or the C value itself (a replay's
# stand-in for an earlier call's number: a Sym naming it, as r12).
Result = Union["Handle", "Sym", CValue]


def errno_name(code: int) -> str:
    if not code:
        return "0"
    return _PREFERRED.get(code) or errno_module.errorcode.get(code, str(code))


@dataclass
class Handle:
    """A verbs object or buffer the check holds, under the C variable name the reproducer uses."""

    name: str  # "pd0", "qp1", "buf0", "ctx"
    kind: str  # "pd", "qp", "buffer", "context", ...
    ctype: str  # "struct ibv_pd *", "void *"
    address: int
    size: int = 0  # for a buffer
    keep: object = None  # the Python object that keeps the memory alive (a buffer, a struct)
    alive: bool = True  # False once a destroy verb freed it
    seed: int | None = None  # for a buffer filled with a payload (payload.py)
    at: str = ""  # where the object lives: "" this process, "peer" the peer host's (--rdma-peer-host)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Sym:
    """A value written by name in the catalogue (flags, enum members): the number and its text."""

    value: int
    text: str

    def __int__(self) -> int:
        return self.value

    def __str__(self) -> str:
        return self.text


RESULT_NAME = re.compile(r"r(\d+)")  # a call's returned value by name: r12 in C, as in a replay


def result_name(index: int) -> str:
    """The name of what call [index] returned: the C reproducer's variable, the replay's key."""
    return f"r{index}"


def result_index(value: object) -> int | None:
    """The index of the call whose returned value `value` names (a Sym "r12"), or None."""
    found = RESULT_NAME.fullmatch(value.text) if isinstance(value, Sym) else None
    return int(found[1]) if found else None


@dataclass(frozen=True)
class Field:
    """A field of an object the check holds, read when the call was made: qp0->qp_num.

    Kept by name, not only by value, because a reproducer runs again and gets new numbers.
    """

    value: int
    handle: str
    path: str
    offset: int = 0  # an address inside the object's buffer: mr0->addr + 16

    def __int__(self) -> int:
        return self.value

    def __str__(self) -> str:
        # As an integer: an MR's addr is a void *, and the fields it fills (an SGE's addr) are uint64_t.
        if self.offset:
            return f"(uintptr_t){self.handle}->{self.path} + {self.offset}"
        return f"(uintptr_t){self.handle}->{self.path}"


@dataclass(frozen=True)
class StructArg:
    """A struct passed by pointer: its C type and the fields set, in the order they were given."""

    ctype: str  # "struct ibv_qp_attr"
    fields: tuple[tuple[str, Shown], ...]  # (dotted path, Handle | Sym | int | bytes | None)
    stands_in: bool = False  # passed where the prototype names another struct (a sockaddr_in as a sockaddr)


@dataclass(frozen=True)
class ArrayArg:
    """Structs passed as an array, chained through `next` where the struct has one: WR lists, SGEs."""

    ctype: str  # "struct ibv_sge"
    items: tuple[StructArg, ...]
    chained: bool = False


@dataclass(frozen=True)
class OutArg:
    """An out parameter the call layer allocated: a struct, an int, ..."""

    ctype: str  # "struct ibv_device_attr", "int"


@dataclass(frozen=True)
class Call:
    """One verb call as it happened."""

    index: int
    verb: str
    args: tuple[tuple[str, Shown], ...]  # parameter name -> Handle | Sym | int | StructArg | OutArg | None
    value: CValue  # the raw C return value (pointers as int or None)
    result: Result  # the Handle a pointer became, or the value as the convention reads it
    errno: int  # errno right after the call (set to 0 before it)
    route: str  # who answered: "libibverbs", "provider:<op>", "libibverbs:<reason>"
    ok: bool | None  # success by the verb's convention (None where the verb cannot fail)
    problem: str = ""  # a breach of the return convention itself (negative errno, errno 0 on failure)
    outs: Mapping[str, Readback] = field(default_factory=dict)  # out/inout params read back after the call
    phase: str = "call"  # "setup", "call", "step", "readback" or "teardown"
    owner: str = ""  # for a provider op: the shared object whose code answered (librxe-rdmav34.so, ...)
    repeat: int = 0  # a poll that found nothing, made this many times more before this one (collapsed)
    named_outs: dict[str, str] = field(default_factory=dict)  # out param -> the name an object it returned got
    # Fields of an object argument written just before the call ("qp.wr_id", value): qpx->wr_id = 1.
    sets: tuple[tuple[str, Resolved], ...] = ()
    at: str = ""  # where it was made: "" this process, "peer" the peer host's (--rdma-peer-host)

    def set_targets(self) -> list[tuple[str, Resolved]]:
        """Each written field as C names it ("qpx0->wr_id"), with its value."""
        given = dict(self.args)
        out = []
        for path, value in self.sets:
            param, _, member = path.partition(".")
            out.append((f"{given.get(param)!s}->{member}", value))  # the object argument's Handle: its name
        return out

    @property
    def failed(self) -> bool:
        return self.ok is False

    @property
    def errno_name(self) -> str:
        return errno_name(self.errno)

    def outcome_text(self) -> str:
        """ "-> 0", "-> qp1", "-> NULL, errno EINVAL (22)": what a step line ends with."""
        shown = "NULL" if self.value is None else self.value
        # !s spells out what str() shows: a char * the verb returned shows as its bytes' repr (b'...').
        if self.ok is False:
            text = f"-> {shown!s}, errno {self.errno_name} ({self.errno})"
        else:
            text = f"-> {self.result if self.result is not None else shown!s}"
        return f"{text}; {self.problem}" if self.problem else text
