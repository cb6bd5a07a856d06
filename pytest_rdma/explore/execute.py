"""A generated sequence run through the suite's one call layer, on a check's context.

Each step is a `Calls.invoke` of its verb, so a sequence has the recorded calls every check has: the
evidence, the report's steps and the C reproducer (calls/render.py). Objects a step made are named by
the step's index; a mover's step gets its walk's arguments for the move (kinds/state_machine.py), with
the drawn values over them. What the check made is freed by its close(), newest first.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import cast

from pytest_rdma.calls.record import Call, Handle
from pytest_rdma.calls.values import Unresolved
from pytest_rdma.cases import Case, Spec
from pytest_rdma.catalogue.index import Catalogue
from pytest_rdma.catalogue.model import TRANSPORTS, Value
from pytest_rdma.explore.sequence import Step
from pytest_rdma.generate import expand
from pytest_rdma.ibv.enums import ENUMS, name_of
from pytest_rdma.kinds.check import Check
from pytest_rdma.kinds.state_machine import StateMachine
from pytest_rdma.outcomes import Blocked, Deviation, NotExercised, Unsupported
from pytest_rdma.provider.device import DeviceUnderTest

EXPLORE = "explore"  # the finding checks' test name (test_explore) and kind
EXPLORED = "explored"  # the claim of the check that records the exploration itself

# A step the call layer could not make (a device fact it lacks, a default it cannot make here): not run,
# and not a finding. The same step is not run again when the sequence is replayed.
NOT_RUN = (Unresolved, LookupError, Unsupported, NotExercised, Deviation, Blocked)


def explore_case(cls: str = "", variant: str = "", says: str = "", axes: tuple[tuple[str, str], ...] = ()) -> Case:
    """The case of `test_explore[explored]` (no class), or of a finding: its class and its sequence's verbs."""
    return Case(
        verb=EXPLORE,
        claim=cls or EXPLORED,
        kind=EXPLORE,
        variant=variant,
        says=says or "sequences of verb calls generated from the catalogue's contracts keep every guard quiet",
        sources=(),
        transports=TRANSPORTS,
        layer="provider",
        axes=axes,
    )


def check_for(case: Case, dut: DeviceUnderTest, catalogue: Catalogue, first_verb: str) -> Check:
    """A Check for a sequence: Check reads its case's verb from the catalogue, which has no verb "explore";
    the sequence's first verb stands in for it there, and the case itself is kept for the record."""
    check = Check(dataclasses.replace(case, verb=first_verb), dut, catalogue)
    check.case = case
    return check


class Sequence:
    """The objects of one sequence being run, by the index of the step that made them."""

    def __init__(self, check: Check) -> None:
        self.check = check
        self.catalogue = check.catalogue
        self.objects: dict[int, Handle] = {}
        self.count = 0

    def perform(self, step: Step) -> Call | None:
        """Run `step`; its call, or None when the call layer could not make it (NOT_RUN)."""
        index = self.count
        self.count += 1
        try:
            call = self._invoke(step)
        except NOT_RUN:
            return None
        if call.ok and isinstance(call.result, Handle):
            self.objects[index] = call.result
        return call

    def _invoke(self, step: Step) -> Call:
        drawn: dict[str, Value] = {path: self.objects[index] for path, index in step.uses}
        if any(step.move):
            return self._move(step, drawn)
        args: dict[str, Value] = {}
        variables: dict[str, Value] = {}
        if step.case:
            spec = self._case(step.verb, step.case)
            args.update(spec.get("call", {}))
            variables.update(spec.get("vars", {}))
        args.update(drawn)  # the objects of the sequence, over the check's own (a Need it would make)
        args.update(dict(step.args))
        variables.update(dict(step.variables))
        return self.check.calls.invoke(step.verb, args, variables=variables)

    def _case(self, verb: str, case_id: str) -> Spec:
        for case in expand(self.catalogue[verb]):
            if case.id == case_id:
                return case.spec
        raise LookupError(f"{verb} has no check {case_id!r} in this catalogue")

    def _move(self, step: Step, args: Mapping[str, Value]) -> Call:
        verb = self.catalogue[step.verb]
        walk = verb.tables["walk"]
        handle = cast(Handle, args[walk["object_param"]])  # the mover's object: drawn from its bundle
        machine = StateMachine(verb)
        before, after = step.move
        flags = self._required(machine, handle, before, after)
        self.check.subject = handle  # Ref("self") in the walk's values names the object being moved
        try:
            arguments = machine.arguments(handle, before, after, flags)
            return self.check.calls.invoke(step.verb, {**arguments, **dict(step.args)})
        finally:
            self.check.subject = None

    def _required(self, machine: StateMachine, handle: Handle, before: str, after: str) -> tuple[str, ...]:
        """The flags the walk table requires for before>after on this object's type; the state flag alone
        for a move the table does not list (to RESET or ERR)."""
        walk = machine.walk
        type_var = walk["type_var"]
        raw = self.check.struct(handle)
        number = raw.get(type_var) if isinstance(raw, Mapping) else None
        enum = f"ibv_{type_var}"
        type_name = name_of(enum, number) if enum in ENUMS and isinstance(number, int) else str(number)
        for key, moves in walk["required"].items():
            if type_name == key or type_name.endswith(f"_{key}"):
                return tuple(moves.get(f"{before}>{after}", (machine.state_flag,)))
        return (machine.state_flag,)
