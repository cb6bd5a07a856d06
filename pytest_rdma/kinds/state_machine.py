"""A resource's state machine, read from its mover's tables: the same code walks a QP, an SRQ or a WQ.

The mover is the verb whose `tables["walk"]` (catalogue.model.Walk) says how it moves its
object: the parameters that take the object, its attributes and the mask; the path a fresh
object passes; the mask flag that sets the state (`state_flag`), the attribute field that holds
it (`state_field`) and the C enum of its states (`state_enum`); per object type, the flags each step
requires; per flag, valid attribute values. Nothing here names a QP: ibv_modify_qp's table does.

A walk calls the mover through a `Modifier` (kinds/check.py's Check), which owns the call layer
and the object a call is modifying.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from pytest_rdma.calls.record import Call, Handle, Sym
from pytest_rdma.calls.values import Unresolved, flag_expr, number
from pytest_rdma.catalogue.index import Catalogue
from pytest_rdma.catalogue.model import Axes, Value, Verb, Walk, substitute
from pytest_rdma.ibv.enums import ENUMS
from pytest_rdma.outcomes import NotExercised


@dataclass(frozen=True)
class StateMachine:
    """The states of one kind of resource and the verb that moves it between them."""

    mover: Verb

    @classmethod
    def of(cls, catalogue: Catalogue, kind: str) -> StateMachine:
        """The machine of resources of `kind` ("qp"): its mover is the verb whose contract moves it."""
        return cls(catalogue.mover(kind))

    @property
    def name(self) -> str:
        return self.mover.name

    @property
    def walk(self) -> Walk:
        return self.mover.tables["walk"]

    @property
    def state_flag(self) -> str:
        """The mask flag that sets the state alone ("IBV_QP_STATE")."""
        return self.walk["state_flag"]

    @property
    def state_field(self) -> str:
        """The attribute field that holds the state, as a query reads it back ("qp_state")."""
        return self.walk["state_field"]

    @property
    def states(self) -> Mapping[str, int]:
        """The enum of the states, by member name ({"IBV_QPS_RESET": 0, ...})."""
        return ENUMS[self.walk["state_enum"]]

    @property
    def prefix(self) -> str:
        """What the members' names share before the state's short name ("IBV_QPS_")."""
        common = os.path.commonprefix(list(self.states))
        return common[: common.rfind("_") + 1]

    def state(self, short: str) -> str:
        """A state's enum member: "RTS" -> "IBV_QPS_RTS"."""
        return f"{self.prefix}{short}"

    def state_name(self, value: object) -> str:
        """A state read back (the enum's number) as its short name: 3 -> "RTS"; unknown numbers as they are."""
        names = {number: name.removeprefix(self.prefix) for name, number in self.states.items()}
        return names.get(value, str(value)) if isinstance(value, int) else str(value)

    def attr_values(self, flags: Sequence[str], before: str, after: str) -> dict[str, Value]:
        """Valid attribute fields for `flags` on the move `before`>`after` (Walk.values, states filled in)."""
        out: dict[str, Value] = {}
        moves = {"from": self.state(before), "to": self.state(after)}
        for flag in flags:
            values = substitute(self.walk["values"][flag], moves)  # a mapping of fields, as the table's
            if not isinstance(values, Mapping):
                raise TypeError(f"{self.name}: tables['walk']['values'][{flag!r}] is not a mapping of fields")
            out.update(values)
        return out

    def arguments(
        self,
        handle: Handle,
        before: str,
        after: str,
        flags: Sequence[str],
        fields: Mapping[str, Value] | None = None,
        extra_bits: int = 0,
    ) -> dict[str, Value]:
        """The mover's arguments for one move: the object, valid values for `flags` (`fields` overriding), the mask."""
        values = self.attr_values(flags, before, after)
        values.update(fields or {})
        mask = Sym(sum(number(flag_expr(flag)) for flag in set(flags)) | extra_bits, _mask_text(flags, extra_bits))
        walk = self.walk
        return {walk["object_param"]: handle, walk["attr_param"]: values, walk["mask_param"]: mask}

    def path_to(self, target: str, variables: Axes) -> Iterator[tuple[str, str, tuple[str, ...]]]:
        """The moves from a fresh object to `target`: (before, after, the flags that move requires)."""
        walk = self.walk
        path: Sequence[str] = walk["path"]
        through = walk.get("through", {}).get(target, target)  # ERR is reached from RTS
        for before, after in zip(path, path[1:]):
            if path.index(before) >= path.index(through):
                break
            required = walk["required"][_type_key(walk["required"], variables.get(walk["type_var"]))]
            yield before, after, tuple(required[f"{before}>{after}"])
        if through != target:
            yield through, target, (self.state_flag,)


class Modifier(Protocol):
    """What calls a mover on an object (kinds/check.py: Check.modify)."""

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
    ) -> Call: ...


def move(
    modifier: Modifier,
    handle: Handle,
    machine: StateMachine,
    before: str,
    after: str,
    flags: Sequence[str],
    *,
    target: str,
    fields: Mapping[str, Value] | None = None,
) -> Call:
    """One move of a walk to `target`, in the setup: not exercised if the device refuses it."""
    call = modifier.modify(handle, machine, before, after, flags, fields=fields, phase="setup")
    if not call.ok:
        raise NotExercised(
            f"could not reach {target}: {machine.name} {before}>{after} with its required attributes failed "
            f"(errno {call.errno_name})"
        )
    return call


def walk(modifier: Modifier, handle: Handle, machine: StateMachine, target: str, variables: Axes) -> None:
    """Move a fresh object to `target` along its mover's path, with the minimal attributes per step."""
    for before, after, flags in machine.path_to(target, variables):
        move(modifier, handle, machine, before, after, flags, target=target)


def _mask_text(flags: Sequence[str], extra_bits: int) -> str:
    parts = list(flags) + ([hex(extra_bits)] if extra_bits else [])
    return " | ".join(parts) or "0"


def _type_key(table: Mapping[str, object], value: Value) -> str:
    """The key of a per-type table for the object's type variable: "IBV_QPT_RC" -> "RC"."""
    text = str(value if value is not None else "")
    if text in table:
        return text
    short = text.split("_")[-1]
    for key in table:
        if text.endswith(key) or key == short:
            return key
    raise Unresolved(f"no state table for {text!r} (has {', '.join(table)})")
