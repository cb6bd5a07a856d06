"""`Calls`: the recorder every verb call of a check goes through.

`invoke(verb, args)` takes the verb's entry from the catalogue: its parameters' defaults are
the call's base, `args` override them (a whole parameter by name, or one struct field by
"param.field.path"), and `vars` fill the axes a default leaves open (Var). The result is a
`Call` record, appended to `log` in the order the calls were made.

Objects a call creates are owned here and destroyed, newest first, by `close()` with the
verb the catalogue names as their destructor, unless the check destroyed them itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import cast

from pytest_rdma.calls.ends import LOCAL, End, EndLost
from pytest_rdma.calls.marshal import parse_ctype
from pytest_rdma.calls.record import Call, CValue, Handle, Readback, Result
from pytest_rdma.calls.values import Scope, resolve
from pytest_rdma.catalogue.model import RETURNS_POINTER, Array, Value, Verb, substitute


def decided_above(call: Call) -> str:
    """ "libibverbs" when a provider op's code is libibverbs' own (its default for a missing op), else ""."""
    return "libibverbs" if call.owner.startswith("libibverbs") else ""


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


def handles_in(value: object) -> list[Handle]:
    """Every object or buffer in a resolved value (through struct fields and arrays)."""
    if isinstance(value, Handle):
        return [value]
    if isinstance(value, Mapping):
        return [found for item in value.values() for found in handles_in(item)]
    if isinstance(value, (tuple, list)):
        return [found for item in value for found in handles_in(item)]
    if isinstance(value, Array) and isinstance(value.items, tuple):
        return handles_in(value.items)
    return []


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


class Calls:
    """Makes and records a check's verb calls, and frees what they created."""

    def __init__(self, verbs: Mapping[str, Verb], scope: Scope) -> None:
        self.verbs = verbs
        self.scope = scope
        self.log: list[Call] = []
        self.owned: list[tuple[Handle, str]] = []  # (object, the verb that destroys it)
        self._counts: dict[str, int] = {}
        self.ends: dict[str, End] = {LOCAL.at: LOCAL}  # by Handle.at: this process, and a peer host's

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
        at: str | None = None,
    ) -> Call:
        """Call `verb_name`; `sets` ("param.field": value) are fields of an object argument written
        just before the call, as C writes qpx->wr_id before ibv_wr_send(qpx). The call is made where
        its objects live; `at` says where for a call given none (rdma_create_event_channel)."""
        verb = self.verbs[verb_name]
        values = arguments(verb, args or {}, variables or {})
        resolved = {name: resolve(value, self.scope) for name, value in values.items()}
        written = tuple((path, resolve(value, self.scope)) for path, value in (sets or {}).items())
        end = self.end_of(verb.name, (resolved, written), at)
        done = end.perform(verb, resolved, written)
        call = Call(
            index=len(self.log),
            verb=verb.name,
            args=tuple(done.shown),
            value=done.value,
            result=self._result(verb, done.value, done.ok, end.at),
            errno=done.errno,
            route=done.route,
            ok=done.ok,
            problem=done.problem,
            outs=done.outs,
            phase=phase,
            owner=done.owner,
            sets=written,
            at=end.at,
        )
        self.log.append(call)
        if done.ok:
            self._track(verb, call)
        return call

    def end_of(self, verb: str, given: object, at: str | None) -> End:
        """The end that holds the objects `given` to a call (`at` for a call given none; by default this process)."""
        found = {handle.at for handle in handles_in(given)}
        if len(found) > 1:
            shown = ", ".join(repr(where) for where in sorted(found))
            raise LookupError(f"{verb} was given objects of two processes ({shown}): a kind's mistake")
        where = found.pop() if found else (at or "")
        if where not in self.ends:
            raise LookupError(f"{verb}: no end {where!r} attached to this check")
        return self.ends[where]

    def attach(self, end: End) -> None:
        """Make calls on `end` too: the peer host's process for a two-device check (--rdma-peer-host)."""
        self.ends[end.at] = end

    def struct(self, handle: Handle) -> Readback:
        """The C struct `handle` points to, read where it lives."""
        return self.ends[handle.at].struct(handle)

    def content(self, handle: Handle, length: int, offset: int = 0) -> bytes:
        """Bytes of a registered region (its addr) or a buffer, read where it lives."""
        return self.ends[handle.at].content(handle, offset, length)

    def readable(self, channel: Handle, timeout: float) -> bool:
        """Whether an event channel's fd has an event within `timeout`, waited for where the channel lives."""
        return self.ends[channel.at].readable(channel, timeout)

    def _result(self, verb: Verb, value: CValue, ok: bool | None, at: str) -> Result:
        if verb.returns != RETURNS_POINTER or not ok:
            return value
        ctype = return_ctype(verb)
        kind = kind_of_ctype(ctype)
        return Handle(self.name(kind), kind, ctype, int(cast(int, value)), at=at)  # a pointer verb's success

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

    def buffer(self, size: int, seed: int | None = None, at: str = "") -> Handle:
        """Page-aligned memory on end `at`, zeroed or filled from `seed`, freed with the check."""
        return self.ends[at].buffer(self.name("buf"), size, seed)

    def out_handle(self, call: Call, param: str, kind: str, ctype: str, destroyed_by: str = "") -> Handle:
        """An object a call returned through an out parameter (rdma_create_id's id), named as the C variable."""
        name = f"a{call.index}_{param}"
        handle = Handle(name, kind, ctype, out_address(call, param), at=call.at)
        call.named_outs[param] = name
        if destroyed_by:
            self.adopt(handle, destroyed_by)
        return handle

    def close(self, on_error: Callable[[Call], None] | None = None) -> None:
        """Destroy what the check still owns, newest first; each destroy is recorded (teardown)."""
        lost: EndLost | None = None
        while self.owned:
            handle, destroyer = self.owned.pop()
            if not handle.alive:
                continue
            verb = self.verbs[destroyer]
            try:
                call = self.invoke(destroyer, {verb.params[0].name: handle}, phase="teardown")
            except EndLost as exc:  # its process is gone, and its objects with it: the rest is still freed
                lost = exc
                continue
            finally:
                handle.alive = False
            if call.failed and on_error is not None:
                on_error(call)
        for end in self.ends.values():
            try:
                end.release()
            except EndLost as exc:
                lost = exc
        if lost is not None:
            raise lost
