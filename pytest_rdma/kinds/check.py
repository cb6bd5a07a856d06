"""One case's run on the device: its calls, its resources, and how a kind states a verdict.

`Check` is the `Scope` the call layer resolves values against. Resources are made the one
way the catalogue gives for their kind (the producing verb, its parameters' defaults) and,
when a state is asked for, moved there with the verb that moves that kind, step by step with
the attributes its table requires. Kinds call the case's verb through `call()`, compare
results through `expect()`, and raise the outcomes of pytest_rdma.outcomes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TypeVar, cast

from pytest_rdma.calls.invoke import Calls
from pytest_rdma.calls.readback import made, number
from pytest_rdma.calls.record import Call, Field, Handle, Readback, Sym
from pytest_rdma.calls.values import Unresolved, read_path
from pytest_rdma.cases import Axes, Case, Spec
from pytest_rdma.catalogue.index import Catalogue
from pytest_rdma.catalogue.model import Arg, Cap, Expect, Need, Ref, Step, Value
from pytest_rdma.catalogue.params import read_params
from pytest_rdma.kinds.state_machine import StateMachine, walk
from pytest_rdma.observations import NUMERIC_OPS, Errno, FieldValue, Observation, Observed
from pytest_rdma.outcomes import Deviation, NotExercised, Unsupported
from pytest_rdma.provider.device import Device, DeviceUnderTest

P = TypeVar("P")

# An expectation's operator: Python's own comparison of what was read with what is expected.
Compare = Callable[[Observed, Observed], bool]


def _implies_zero(left: Observed, right: Observed) -> bool:
    return bool(left) or not right


# The operands' types are paired by the catalogue (numbers with numbers, a name with a tuple of names),
# which no signature over Observed can say: the operators are Python's own, as they stand.
COMPARE = cast(
    "dict[str, Compare]",
    {
        **NUMERIC_OPS,  # the six comparisons, as a reproducer's C applies them too (observations.py)
        "0=>0": _implies_zero,
        "in": lambda left, right: (
            right[0] <= left < right[1] if isinstance(right, tuple) and len(right) == 2 else left in right
        ),
        "has-once": lambda left, right: list(left).count(right) == 1,
        "distinct": lambda left, _right: len(set(left)) == len(left),
        "nonzero": lambda left, _right: bool(left),
        "zero": lambda left, _right: not left,
        # An enum's members (a tuple), or a flag set's documented bits (a mask): catalogue/derived.py.
        "inside": lambda left, right: left in right if isinstance(right, tuple) else not left & ~right,
    },
)
OP_TEXT = {
    "0=>0": "is 0 only if also",
    "in": "in",
    "has-once": "holds exactly once",
    "distinct": "has no repeated element",
    "nonzero": "is nonzero",
    "zero": "is 0",
    "inside": "lies inside",
}


def plain(value: object) -> Observed:
    """A resolved value as data to compare and show: Sym -> int, Handle -> its name."""
    if isinstance(value, (Sym, Field)):
        return value.value
    if isinstance(value, Handle):
        return value.name
    if isinstance(value, tuple):
        return tuple(plain(item) for item in value)  # a set of flag names an "in" compares with
    return cast(Observed, value)  # a number, bytes, a name or read-back data: as it is


class Check:
    """The context of one case's run: implements calls.values.Scope."""

    def __init__(self, case: Case, dut: DeviceUnderTest, catalogue: Catalogue, peer: Device | None = None) -> None:
        self.case = case
        self.dut = dut
        self.peer = peer  # the second device (--rdma-peer), for a check whose receiver is there
        self.side = "dut"  # whose context new resources and bare facts come from: "dut" or "peer" (on())
        self.context_label = ""  # "" the session's context; else a second context of the device (in_context())
        self.catalogue = catalogue
        self.verb = catalogue[case.verb]
        self.spec: Spec = case.spec
        self.calls = Calls(catalogue.by_name, self)
        if peer is not None:
            self.calls.attach(peer.end)  # its objects live there: this process, or the peer host's
        self.steps: dict[str, Call] = {}
        self.made: dict[tuple[str, str, tuple[tuple[str, str], ...], str, str, str], Handle] = {}  # resource() key
        self.subject: Handle | None = None  # the object a state walk is modifying (Ref("self"))

    def params(self, schema: type[P]) -> P:
        """The claim's data, its axis values put in, as the kind's declared schema (catalogue/params.py).

        Data that does not fit (a value of another type once the axes are put in) is the catalogue's
        error: ValueError naming the claim and the field."""
        try:
            return read_params(schema, self.spec.get("params", {}))
        except ValueError as exc:
            raise ValueError(f"{self.case.verb}: claim {self.case.claim!r}: {exc}") from None

    def expects(self) -> tuple[Expect, ...]:
        """The claim's expectations (a state-table case's `expect` is its verdict, not expectations)."""
        expect = self.spec.get("expect", ())
        return () if isinstance(expect, str) else expect

    def number(self, path: str) -> int:
        """A device fact that is a number (an attribute's maximum, a table's length, an enum's value)."""
        return number(self.fact(path), path)

    # -- the two devices of a two-device check ------------------------------------------------
    @contextmanager
    def on(self, side: str) -> Iterator[None]:
        """Within: resources are made on `side`'s device ("peer": the receiver's end of a two-device pair),
        and a bare fact ("gid", "port.lid") is that device's. "dut.gid" and "peer.gid" name one explicitly."""
        self.device(side)  # not exercised here without a peer
        before, self.side = self.side, side
        try:
            yield
        finally:
            self.side = before

    def device(self, side: str | None = None) -> Device:
        """The device under test, or the peer; a check that needs a peer and has none is not exercised."""
        if (side or self.side) != "peer":
            return self.dut
        if self.peer is None:
            raise NotExercised("no peer device: give --rdma-peer NAME, a second device this one reaches")
        return self.peer

    @contextmanager
    def in_context(self, label: str) -> Iterator[None]:
        """Within: resources are made in a second context of the device under test (one per `label`), opened
        by its own ibv_open_device the first time and closed in teardown after what was made in it. Every
        object whose defaults lead to Need("context") is then that context's: its PD, its CQs, its regions."""
        if self.side != "dut":
            raise ValueError("a second context is opened on the device under test, not inside check.on('peer')")
        before, self.context_label = self.context_label, label
        try:
            yield
        finally:
            self.context_label = before

    def at(self) -> str:
        """Where new objects of the current side live: "" this process, or the peer host's process."""
        return self.device().end.at if self.side == "peer" else ""

    # -- Scope ---------------------------------------------------------------------------
    def fact(self, path: str) -> Readback:
        side, _, rest = path.partition(".")
        if side in ("dut", "peer") and rest:
            return self.device(side).fact(rest)
        return self.device().fact(path)

    def buffer(self, size: int, seed: int | None = None) -> Handle:
        return self.calls.buffer(size, seed, at=self.at())

    def struct(self, handle: Handle) -> Readback:
        return self.calls.struct(handle)

    def step(self, name: str) -> Call:
        if name == "self" and self.subject is not None:
            return Call(-1, "", (), self.subject.address, self.subject, 0, "", True)
        try:
            return self.steps[name]
        except KeyError:
            raise Unresolved(f"{self.case.verb}: no step named {name!r} before this call") from None

    def resource(self, need: Need) -> Handle:
        if need.kind == "context" and self.context_label:
            return self._second_context()
        if need.kind in ("context", "device"):
            return self.device().resource(need)
        spec = tuple(sorted((k, repr(v)) for k, v in need.spec.items()))
        # The peer's PD is not the device's, nor a second context's PD the session context's.
        key = (need.kind, need.state, spec, need.label, self.side, self.context_label)
        if key not in self.made:
            self.made[key] = self._make(need)
        return self.made[key]

    def _second_context(self) -> Handle:
        """The context in_context() names: opened once per check and label, owned by the check's calls
        (closed in teardown, newest first, so after its objects), counted by the leak guard as any object."""
        key = ("context", "", (), self.context_label, self.side, self.context_label)
        if key not in self.made:
            opened = self.calls.invoke("ibv_open_device", {"device": Need("device")}, phase="setup")
            if not opened.ok:
                raise self.deviation(
                    "ibv_open_device opens a second context of the device, which this check needs",
                    f"ibv_open_device failed: errno {opened.errno_name}",
                    Errno(opened.errno_name, verb="ibv_open_device"),
                    opened,
                    ref="ibv_open_device(3) DESCRIPTION",
                )
            self.made[key] = made(opened)
        return self.made[key]

    # -- resources, the one way --------------------------------------------------------------
    def _make(self, need: Need) -> Handle:
        producer = self.catalogue.producer(need.kind)
        names = {param.name for param in producer.params}
        overrides = {k: v for k, v in need.spec.items() if k.split(".")[0] in names}
        variables = {**producer.tables.get("vars", {})}
        variables.update({k: v for k, v in need.spec.items() if k not in overrides})
        self.require_vars(producer.name, variables)
        call = self.calls.invoke(producer.name, overrides, variables=variables, phase="setup", at=self.at())
        why = producer.tables.get("not_supported", {}).get(call.errno_name) if not call.ok else None
        if why:
            raise Unsupported(f"{producer.name} answered {call.errno_name}: {why}")
        if not call.ok:
            shown = ", ".join(f"{k} {v}" for k, v in variables.items())
            raise self.deviation(
                f"{producer.name} makes the {need.kind} this check needs ({shown}), which the device advertises",
                f"{producer.name} failed: errno {call.errno_name}",
                Errno(call.errno_name, verb=producer.name),
                call,
                ref=f"{producer.man} RETURN VALUE",
            )
        handle = made(call)  # it succeeded (call.ok)
        if need.state:
            walk(self, handle, StateMachine.of(self.catalogue, need.kind), need.state, variables)
        return handle

    def modify(
        self,
        handle: Handle,
        machine: StateMachine,
        before: str,
        after: str,
        flags: Sequence[str],
        *,
        fields: Mapping[str, Value] | None = None,
        extra_bits: int = 0,
        phase: str = "call",
    ) -> Call:
        """One call of the machine's mover on `handle` (kinds/state_machine.py), which Ref("self") names meanwhile."""
        self.subject = handle
        try:
            arguments = machine.arguments(handle, before, after, flags, fields, extra_bits)
            return self.calls.invoke(machine.name, arguments, phase=phase)
        finally:
            self.subject = None

    # -- what kinds use ------------------------------------------------------------------------
    def require(self, caps: Sequence[Cap]) -> None:
        """Unsupported unless the device advertises every capability (naming the one it lacks)."""
        for cap in caps:
            why = self.dut.missing(cap)
            if why:
                raise Unsupported(why, cap)

    def require_process(self, caps: Sequence[Cap]) -> None:
        """Not exercised unless the process running the check is what the claim needs (unprivileged, ...)."""
        for cap in caps:
            why = self.dut.missing(cap)
            if why:
                raise NotExercised(
                    f"{why} in this process: the claim is about one where it holds (the lab runs it unprivileged)"
                )

    def require_transport(self) -> None:
        transports = self.case.transports
        if self.dut.transport not in transports:
            rule = ", ".join(transports)
            raise Unsupported(f"transport = {self.dut.transport}: this rule applies to {rule} ({self.case.ref})")

    def run_steps(self, steps: Sequence[Step], phase: str = "step") -> None:
        for step in steps:
            call = self.calls.invoke(step.verb, step.args, variables=self.spec.get("vars", {}), phase=phase)
            if step.name:
                self.steps[step.name] = call
            if step.expect == "ok" and call.failed:
                why = self.catalogue[step.verb].tables.get("not_supported", {}).get(call.errno_name)
                if why:
                    raise Unsupported(f"{step.verb} answered {call.errno_name}: {why}")
                raise NotExercised(f"{step.verb} failed (errno {call.errno_name}) before the check proper")
            if step.expect == "fails" and call.ok:
                raise NotExercised(f"{step.verb} succeeded where the check needs it to fail")

    def call(self, overrides: Mapping[str, Value] | None = None, *, verb: str = "", name: str = "call") -> Call:
        """The case's own call: its verb with the claim's arguments (and `overrides`)."""
        args = {**self.spec.get("call", {}), **(overrides or {})}
        variables = self.spec.get("vars", {})
        self.require_vars(verb or self.case.verb, variables)
        call = self.calls.invoke(verb or self.case.verb, args, variables=variables)
        self.steps[name] = call
        return call

    def require_vars(self, verb: str, variables: Axes) -> None:
        """Unsupported where a variable picks something the device does not advertise (a QP type)."""
        needs = self.catalogue[verb].tables.get("needs", {})
        for name, value in variables.items():
            # Only variables with a needs table, whose values name enum members (others may hold structs).
            if name in needs and isinstance(value, str):
                self.require(needs[name].get(value, ()))

    def read(self, call: Call, left: str) -> Observed:
        """A path into a call's results: "ret", "ret.cqe", "<param>.<field>", "<step>.<path>".

        "<param>.<field>" of an object handle (not a struct argument) reads the object's struct as it
        stands after the call: "qp.state" after ibv_modify_qp.
        """
        root, _, rest = left.partition(".")
        if root == "ret":
            data: object = call.result
            if isinstance(data, bytes) and not rest:
                return data.decode(errors="replace")  # a C string the verb returned, as text
            if isinstance(data, Handle) and data.kind == "device_list" and rest == "names":
                return self.device_names(data)
            if isinstance(data, Handle) and rest:
                data = self.calls.struct(data)
            return plain(read_path(data, rest)) if rest else plain(data)
        if root == "errno":
            return call.errno_name
        if root in call.outs:
            return plain(read_path(call.outs[root], rest))
        for name, shown in call.args:
            if name == root:
                if rest and isinstance(shown, Handle) and shown.kind != "buffer":
                    # A field of an object the call was given, read after the call: "qp.state".
                    return plain(read_path(self.calls.struct(shown), rest))
                return plain(read_path(shown, rest)) if rest else plain(shown)
        if root in self.steps and self.steps[root] is not call:
            return self.read(self.steps[root], rest or "ret")
        raise Unresolved(f"{left}: not a result of {call.verb}")

    def device_names(self, listed: Handle) -> list[str]:
        """The names of a NULL-terminated device list, each read with ibv_get_device_name."""
        import ctypes

        names: list[str] = []
        index = 0
        while True:
            address = ctypes.c_void_p.from_address(listed.address + index * ctypes.sizeof(ctypes.c_void_p)).value
            if not address:
                return names
            device = Handle(f"{listed.name}[{index}]", "device", "struct ibv_device *", address)
            call = self.calls.invoke("ibv_get_device_name", {"device": device}, phase="readback")
            name = call.value  # a const char *
            names.append(name.decode() if isinstance(name, bytes) else "")
            index += 1

    def value_of(self, call: Call, right: Value, *, address: bool = False) -> Observed:
        """What an expectation compares with; with `address`, an object as its address (a pointer field)."""
        if isinstance(right, Arg):
            return self.argument(call, right.path, address=address)
        if isinstance(right, Ref):
            result = self.steps[right.step].result
            if address and not right.path and isinstance(result, Handle):
                return result.address
            return self.read(self.steps[right.step], right.path or "ret")
        from pytest_rdma.calls.values import resolve

        resolved = resolve(right, self)
        if address and isinstance(resolved, Handle):
            return resolved.address
        return plain(resolved)

    def argument(self, call: Call, path: str, *, address: bool = False) -> Observed:
        """What `call` was given at `path` (a parameter, or a field of a struct parameter)."""
        name, _, field = path.partition(".")
        for param, shown in call.args:
            if param != name:
                continue
            fields = dict(getattr(shown, "fields", ()))
            if field and field not in fields:
                break
            value = fields[field] if field else shown
            return value.address if address and isinstance(value, Handle) else plain(value)
        raise Unresolved(f"{call.verb} was not given {path}")

    def expect(self, call: Call, expects: Sequence[Expect], ref: str = "") -> None:
        """Every expectation holds, or a Deviation naming the first that does not."""
        for item in expects:
            if self.dut.transport not in item.transports:
                continue
            left = self.read(call, item.left)
            # A pointer field (an int) compared with an object the check holds compares addresses.
            pointer = isinstance(left, int) and not isinstance(left, bool)
            right = self.value_of(call, item.right, address=pointer) if item.right is not None else None
            if not COMPARE[item.op](left, right):
                shown = OP_TEXT.get(item.op, item.op)
                target = f" {_show(item.right, right)}" if item.op not in ("nonzero", "zero") else ""
                raise self.deviation(
                    f"{item.left} {shown}{target}",
                    f"{item.left} = {_show(None, left)}" + (f" against {_show(item.right, right)}" if target else ""),
                    self.field_value(item, left),
                    call,
                    ref=ref,
                )

    @staticmethod
    def field_value(item: Expect, left: Observed) -> FieldValue:
        """The observation of a failed expectation: against another call's field, the comparison failed."""
        numeric = isinstance(left, int) and not isinstance(left, bool)
        if isinstance(item.right, Ref) and item.right.path and item.op in NUMERIC_OPS and numeric:
            return FieldValue(item.left, left, f"{item.right.step}.{item.right.path}", item.op)
        return FieldValue(item.left, left)

    def deviation(
        self,
        expected: str,
        observed: str,
        observation: Observation,
        call: Call | None = None,
        *,
        ref: str = "",
        **details: object,
    ) -> Deviation:
        if call is not None and call.problem:
            observed = f"{observed} ({call.problem})"
            observation = observation.with_problem(call.problem)
        return Deviation(expected, observed, observation, ref, details, call.index if call else None)

    def failure(self, call: Call, expected: str, ref: str = "") -> Deviation:
        """The call failed where it must succeed."""
        return self.deviation(
            expected, f"{call.verb} failed: errno {call.errno_name}", Errno(call.errno_name), call, ref=ref
        )

    def close(self) -> list[Call]:
        """Free everything the check made; the teardown calls that failed."""
        failed: list[Call] = []
        self.calls.close(failed.append)
        return failed


def _show(spec: Value, value: Observed) -> str:
    """A compared value as a person reads it, saying where a reference came from."""
    shown = value.hex() if isinstance(value, bytes) else repr(value) if isinstance(value, str) else str(value)
    if isinstance(spec, Arg):
        return f"{shown} (the {spec.path} given)"
    if isinstance(spec, Ref):
        return f"{shown} ({spec.step}.{spec.path})" if spec.path else f"{shown} ({spec.step})"
    if isinstance(spec, str) and spec != shown and "IBV_" in spec:
        return f"{spec} ({shown})"
    return shown
