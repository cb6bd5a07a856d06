"""`Calls`: the recorder every verb call of a check goes through.

`invoke(verb, args)` takes the verb's entry from the catalogue: its parameters' defaults are
the call's base, `args` override them (a whole parameter by name, or one struct field by
"param.field.path"), and `vars` fill the axes a default leaves open (Var). The result is a
`Call` record, appended to `log` in the order the calls were made.

Objects a call creates are owned here and destroyed, newest first, by `close()` with the
verb the catalogue names as their destructor, unless the check destroyed them itself.
"""

from __future__ import annotations

import ctypes
import mmap
from collections.abc import Callable, Mapping
from typing import cast

from pytest_rdma.calls.convention import judge
from pytest_rdma.calls.marshal import Marshalled, marshal, parse_ctype, read_object, read_struct, struct_class
from pytest_rdma.calls.payload import payload
from pytest_rdma.calls.record import Call, CValue, Handle, Readback, Resolved, Result
from pytest_rdma.calls.values import Scope, number, resolve
from pytest_rdma.catalogue.model import RETURNS_POINTER, Value, Verb, substitute
from pytest_rdma.ibv import binding, mirrors, rdmacm

_OWNERS: dict[tuple[int, str], str] = {}


def context_of(args: Mapping[str, Resolved]) -> int:
    """The ibv_context a call's first object argument belongs to (0 if none).

    Read before the call: a destroy verb frees the object it is given.
    """
    for value in args.values():
        if isinstance(value, Handle) and value.kind != "buffer":
            return value.address if value.kind == "context" else int(read_object(value).get("context") or 0)
    return 0


def op_owner(route: str, context: int) -> str:
    """Whose code a provider op ran: the file name of the shared object (dladdr), memoised per context.

    libibverbs fills the ops a provider lacks with its own defaults (EOPNOTSUPP), so "provider:<op>"
    alone cannot say whether the provider decided; this can.
    """
    op = route.split(":", 1)[1]
    if not context:
        return ""
    key = (context, op)
    if key not in _OWNERS:
        found = mirrors.op_owner(context, op) or ""
        _OWNERS[key] = found.rsplit("/", 1)[-1]
    return _OWNERS[key]


def decided_above(call: Call) -> str:
    """ "libibverbs" when a provider op's code is libibverbs' own (its default for a missing op), else ""."""
    return "libibverbs" if call.owner.startswith("libibverbs") else ""


def _count(value: Resolved) -> int:
    from pytest_rdma.calls.values import number

    return max(int(cast(int, number(value)) or 0), 0)  # a count parameter's value: a number (or None)


def _read_out(verb: Verb, name: str, obj: object, marshalled: Marshalled) -> Readback:
    """An out parameter as plain data; a `struct X **` naming an element of an array argument becomes its index."""
    ctype = parse_ctype(verb.param(name).ctype)
    if ctype.aggregate and ctype.pointers == 2:
        address = cast(ctypes.c_void_p, obj).value  # the cell marshal allocated for a `struct X **`
        index = marshalled.index_in(ctype.base, address)
        return {"index": index} if index is not None else ({"address": address} if address else None)
    return read_struct(obj)


def out_address(call: Call, param: str) -> int:
    """The pointer a `struct X **` out parameter received (0 for NULL), as _read_out recorded it."""
    written = call.outs.get(param) or {}
    # {"address": n} (or {"index": n}) as _read_out wrote it, or the number of a scalar out.
    return int(cast(int, written.get("address", 0))) if isinstance(written, Mapping) else int(cast(int, written))


def return_ctype(verb: Verb) -> str:
    """The C return type of the prototype: "struct ibv_cq *" of "struct ibv_cq *ibv_create_cq(...)"."""
    head = verb.prototype.split("(", 1)[0]
    name_at = head.rfind(verb.name)
    text = head[:name_at] if name_at >= 0 else head.rsplit(" ", 1)[0]
    return " ".join(text.replace("static inline", "").split())


def kind_of_ctype(ctype: str) -> str:
    """ "struct ibv_qp *" -> "qp"; "struct ibv_device **" -> "device_list"."""
    parsed = parse_ctype(ctype)
    base = parsed.base.removeprefix("ibv_")
    return f"{base}_list" if parsed.pointers > 1 else base


def flatten(value: Mapping[str, Value], prefix: str = "") -> dict[str, Value]:
    """{"cap": {"max_send_wr": 1}} -> {"cap.max_send_wr": 1}: one spelling for struct fields."""
    out: dict[str, Value] = {}
    for key, item in value.items():
        path = f"{prefix}{key}"
        if isinstance(item, Mapping):
            out.update(flatten(item, path + "."))
        else:
            out[path] = item
    return out


def arguments(verb: Verb, overrides: Mapping[str, Value], variables: Mapping[str, Value]) -> dict[str, Value]:
    """Each parameter's value: its default with `variables` put in, then `overrides` applied."""
    defaults = {**verb.tables.get("vars", {}), **variables}
    values: dict[str, Value] = {}
    for param in verb.params:
        default = substitute(param.default, defaults)
        values[param.name] = flatten(default) if isinstance(default, Mapping) else default
    names = {param.name for param in verb.params}
    for key, value in overrides.items():
        name, _, path = key.partition(".")
        if name not in names:
            raise LookupError(f"{verb.name} has no parameter {name!r} (given {key!r})")
        if not path:
            if isinstance(value, Mapping) and isinstance(values[name], Mapping):
                # A struct given in part: merged into the default (a Mapping: tested just above).
                values[name] = {**cast("Mapping[str, Value]", values[name]), **flatten(value)}
            else:
                values[name] = flatten(value) if isinstance(value, Mapping) else value
            continue
        fields = dict(cast("Mapping[str, Value]", values[name])) if isinstance(values[name], Mapping) else {}
        for existing in [k for k in fields if k == path or k.startswith(path + ".")]:
            del fields[existing]  # a whole sub-struct given replaces its fields
        fields.update(flatten(value, path + ".") if isinstance(value, Mapping) else {path: value})
        values[name] = fields
    return values


def _store(verb: Verb, resolved: Mapping[str, Resolved], path: str, value: Resolved) -> None:
    """Write one field of the object passed as a parameter (path "param.field")."""
    name, _, member = path.partition(".")
    handle = resolved.get(name)
    if not isinstance(handle, Handle) or not member or "." in member:
        raise LookupError(f"{verb.name}: {path!r} is not a field of an object argument")
    obj = struct_class(parse_ctype(handle.ctype).base).from_address(handle.address)
    setattr(obj, member, int(cast(int, number(value))))  # a field written before the call: a number


class Calls:
    """Makes and records a check's verb calls, and frees what they created."""

    def __init__(self, verbs: Mapping[str, Verb], scope: Scope) -> None:
        self.verbs = verbs
        self.scope = scope
        self.log: list[Call] = []
        self.owned: list[tuple[Handle, str]] = []  # (object, the verb that destroys it)
        self._counts: dict[str, int] = {}

    def name(self, kind: str) -> str:
        number = self._counts.get(kind, 0)
        self._counts[kind] = number + 1
        return f"{kind}{number}"

    def invoke(
        self,
        verb_name: str,
        args: Mapping[str, Value] | None = None,
        *,
        variables: Mapping[str, Value] | None = None,
        phase: str = "call",
        sets: Mapping[str, Value] | None = None,
    ) -> Call:
        """Call `verb_name`; `sets` ("param.field": value) are fields of an object argument written
        just before the call, as C writes qpx->wr_id before ibv_wr_send(qpx)."""
        verb = self.verbs[verb_name]
        values = arguments(verb, args or {}, variables or {})
        resolved = {name: resolve(value, self.scope) for name, value in values.items()}
        written = tuple((path, resolve(value, self.scope)) for path, value in (sets or {}).items())
        for path, value in written:
            _store(verb, resolved, path, value)
        counts = {p.name: _count(resolved.get(p.count)) for p in verb.params if p.count}
        marshalled = marshal([(p.name, p.ctype, p.direction, counts.get(p.name)) for p in verb.params], resolved)
        # Only a header inline (a mirror) calls through a provider op; its object may be freed by the call.
        context = context_of(resolved) if verb.name in binding.MIRRORS else 0
        raw = (rdmacm.call if verb.family == "rdmacm" else binding.call)(verb.name, *marshalled.cargs)
        judged = judge(verb.returns, raw.value, raw.errno)
        outs = {name: _read_out(verb, name, obj, marshalled) for name, obj in marshalled.outs.items()}
        result = self._result(verb, raw.value, judged.ok)
        owner = op_owner(raw.route, context) if raw.route.startswith("provider:") else ""
        call = Call(
            index=len(self.log),
            verb=verb.name,
            args=tuple(marshalled.shown),
            value=raw.value,
            result=result,
            errno=judged.errno if judged.ok is False else raw.errno,
            route=raw.route,
            ok=judged.ok,
            problem=judged.problem,
            outs=outs,
            phase=phase,
            owner=owner,
            sets=written,
        )
        self.log.append(call)
        if judged.ok:
            self._track(verb, call)
        return call

    def _result(self, verb: Verb, value: CValue, ok: bool | None) -> Result:
        if verb.returns != RETURNS_POINTER or not ok:
            return value
        ctype = return_ctype(verb)
        kind = kind_of_ctype(ctype)
        return Handle(self.name(kind), kind, ctype, int(cast(int, value)))  # a pointer verb's success: an address

    def _track(self, verb: Verb, call: Call) -> None:
        """Own what the call created; forget what it destroyed."""
        if isinstance(call.result, Handle) and verb.contract.destroyed_by:
            self.owned.append((call.result, verb.contract.destroyed_by))
        for destroyed in verb.contract.destroys:
            for name, shown in call.args:
                if name == destroyed.role and isinstance(shown, Handle):
                    shown.alive = False

    def adopt(self, handle: Handle, destroyed_by: str) -> None:
        self.owned.append((handle, destroyed_by))

    def buffer(self, size: int, seed: int | None = None) -> Handle:
        """Page-aligned memory (an anonymous mapping), zeroed or filled from `seed`, freed with the check."""
        memory = mmap.mmap(-1, max(size, 1))
        if seed is not None:
            memory[:size] = payload(seed, size)
        address = ctypes.addressof(ctypes.c_char.from_buffer(memory))
        return Handle(self.name("buf"), "buffer", "void *", address, size=size, keep=memory, seed=seed)

    def out_handle(self, call: Call, param: str, kind: str, ctype: str, destroyed_by: str = "") -> Handle:
        """An object a call returned through an out parameter (rdma_create_id's id), named as the C variable."""
        name = f"a{call.index}_{param}"
        handle = Handle(name, kind, ctype, out_address(call, param))
        call.named_outs[param] = name
        if destroyed_by:
            self.adopt(handle, destroyed_by)
        return handle

    def close(self, on_error: Callable[[Call], None] | None = None) -> None:
        """Destroy what the check still owns, newest first; each destroy is recorded (teardown)."""
        while self.owned:
            handle, destroyer = self.owned.pop()
            if not handle.alive:
                continue
            verb = self.verbs[destroyer]
            call = self.invoke(destroyer, {verb.params[0].name: handle}, phase="teardown")
            handle.alive = False
            if call.failed and on_error is not None:
                on_error(call)
