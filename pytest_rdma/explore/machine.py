"""A Hypothesis RuleBasedStateMachine built from the catalogue's rules (rules.py).

One Bundle per resource kind holds the objects made so far (as the index of the step that made each);
a make rule adds to its kind's bundle, a destroy rule consumes from it (and puts the object back when the
provider refused to free it), a use rule draws from the bundles, and a move rule, enabled by a
precondition only while some object is in the state it moves from, draws one of those. The invariant is
the return convention of every call; teardown frees everything and reads the guards. Whatever breaks
raises `Found`, which Hypothesis shrinks to the shortest sequence that still raises it.

What runs a step is a `Performer` (execute.py on a device); the machine itself only generates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import ClassVar, Protocol, Union, cast

from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    MultipleResults,
    RuleBasedStateMachine,
    consumes,
    invariant,
    multiple,
    precondition,
    rule,
)

from pytest_rdma.explore.rules import DESTROY, MAKE, MOVE, Rule, kinds_of
from pytest_rdma.explore.sequence import CONVENTION, Step


@dataclass(frozen=True)
class Done:
    """What a step did: whether it succeeded, and a breach of its return convention (or "")."""

    ok: bool | None
    problem: str = ""


class Performer(Protocol):
    """Runs the steps of one sequence after another; `finish` frees what is left and says what the guards saw."""

    def start(self) -> None: ...

    def perform(self, step: Step, state: str) -> Done: ...

    def finish(self) -> list[tuple[str, str]]: ...  # (finding class, what was seen)

    def failing(self, found: Found) -> None: ...  # a sequence failed (Hypothesis may be shrinking it)


class Found(Exception):
    """A finding: its class, what was seen, and the sequence that showed it (as Hypothesis ran it)."""

    def __init__(self, cls: str, detail: str, steps: tuple[Step, ...]) -> None:
        super().__init__(f"{cls}: {detail}")
        self.cls = cls
        self.detail = detail
        self.steps = steps


# What a rule draws: an object of a bundle (the index of the step that made it), an index into a domain
# (0: the default), a variable's value.
Strategies = dict[str, "st.SearchStrategy[object]"]
Drawn = Mapping[str, object]
Made = Union[int, "MultipleResults[int]"]
# hypothesis.stateful.rule, as these rules call it: with the strategies of a generated rule as one mapping,
# which its overloads (each naming target= apart from the strategies) cannot tell from a target.
Decorator = Callable[[Callable[..., object]], Callable[..., object]]
_rule_of = cast(Callable[..., Decorator], rule)


class Explorer(RuleBasedStateMachine):
    """The base of every generated machine: the sequence so far and the states of its objects."""

    performer: ClassVar[Performer]
    initial: ClassVar[Mapping[str, str]] = {}  # kind -> the state a fresh object is in (its walk's first)

    def __init__(self) -> None:
        super().__init__()
        self.steps: list[Step] = []
        self.states: dict[int, tuple[str, str]] = {}  # step index -> (kind, state), for kinds with a mover
        self.problems: list[str] = []
        self.found = False
        self.performer.start()

    def perform(self, step: Step, state: str = "") -> Done:
        self.steps.append(step)
        done = self.performer.perform(step, state)
        if done.problem:
            self.problems.append(f"{step.verb}: {done.problem}")
        return done

    def in_state(self, kind: str, state: str) -> list[int]:
        return sorted(index for index, (k, s) in self.states.items() if k == kind and state in (s, "any"))

    @invariant()
    def return_convention(self) -> None:
        if self.problems:
            self.found = True
            self.fail(Found(CONVENTION, self.problems[0], tuple(self.steps)))

    def teardown(self) -> None:
        seen = self.performer.finish()
        if seen and not self.found:
            cls, detail = seen[0]
            self.fail(Found(cls, detail, tuple(self.steps)))

    def fail(self, found: Found) -> None:
        self.performer.failing(found)  # known before shrinking ends: a run cut short keeps what it had
        raise found


def machine(found: tuple[Rule, ...], initial: Mapping[str, str]) -> type[Explorer]:
    """A machine class with a bundle per kind the rules touch and one Hypothesis rule per catalogue rule."""
    bundles: dict[str, Bundle[int]] = {kind: Bundle(kind) for kind in kinds_of(found)}
    namespace: dict[str, object] = {f"objects_{kind}": bundle for kind, bundle in bundles.items()}
    namespace["initial"] = dict(initial)
    for item in found:
        namespace[item.name] = _rule(item, bundles)
    return type("CatalogueExplorer", (Explorer,), namespace)


def _draws(item: Rule) -> Strategies:
    """The values a rule's step draws: index 0 is the argument's default (what shrinking goes back to)."""
    draws: Strategies = {"case": st.integers(min_value=0, max_value=len(item.cases))} if item.cases else {}
    for number, (_, values) in enumerate(item.domains):
        draws[f"v{number}"] = st.integers(min_value=0, max_value=len(values))
    for number, (_, choices) in enumerate(item.variables):
        draws[f"x{number}"] = st.sampled_from(choices)
    return draws


def _step(item: Rule, drawn: Drawn, uses: tuple[tuple[str, int], ...], move: tuple[str, str]) -> Step:
    picked = {n: cast(int, drawn[f"v{n}"]) for n in range(len(item.domains))}  # each an integers() draw
    args = tuple((path, values[picked[n] - 1]) for n, (path, values) in enumerate(item.domains) if picked[n])
    variables = tuple((name, str(drawn[f"x{n}"])) for n, (name, _) in enumerate(item.variables))
    case = item.cases[cast(int, drawn["case"]) - 1] if drawn.get("case") else ""
    return Step(item.verb, uses, args, variables, move, case)


def _uses(inputs: Mapping[str, tuple[str, str]], drawn: Drawn) -> tuple[tuple[str, int], ...]:
    return tuple((path, cast(int, drawn[name])) for name, (path, _) in inputs.items())  # a bundle's step index


def _rule(item: Rule, bundles: Mapping[str, Bundle[int]]) -> Callable[..., object]:
    inputs = {f"o{n}": (path, kind) for n, (path, kind) in enumerate(item.inputs)}
    draws = _draws(item)
    if item.role == MAKE:
        strategies: Strategies = {name: bundles[kind] for name, (_, kind) in inputs.items()}

        def make(self: Explorer, **drawn: object) -> Made:
            index = len(self.steps)
            if not self.perform(_step(item, drawn, _uses(inputs, drawn), ("", ""))).ok:
                return multiple()
            if item.makes in self.initial:
                self.states[index] = (item.makes, self.initial[item.makes])
            return index

        return _rule_of(target=bundles[item.makes], **strategies, **draws)(make)
    if item.role == DESTROY:
        kind = dict(item.inputs)[item.destroys]
        strategies = {
            name: consumes(bundles[k]) if path == item.destroys else bundles[k] for name, (path, k) in inputs.items()
        }
        freed = next(name for name, (path, _) in inputs.items() if path == item.destroys)

        def destroy(self: Explorer, **drawn: object) -> Made:
            index = cast(int, drawn[freed])  # a step index, consumed from its bundle
            if self.perform(_step(item, drawn, _uses(inputs, drawn), ("", ""))).ok:
                self.states.pop(index, None)
                return multiple()
            return index  # refused (EBUSY: still in use): the object is still there

        return _rule_of(target=bundles[kind], **strategies, **draws)(destroy)
    if item.role == MOVE:
        moved_path, moved_kind = item.inputs[0]
        before, after = item.move

        def move(self: Explorer, data: st.DataObject, **drawn: object) -> None:
            index = data.draw(st.sampled_from(self.in_state(moved_kind, before)))
            state = self.states[index][1]
            if self.perform(_step(item, drawn, ((moved_path, index),), (state, after)), state).ok:
                self.states[index] = (moved_kind, after)

        enabled = precondition(lambda self: bool(self.in_state(moved_kind, before)))
        return enabled(_rule_of(data=st.data(), **draws)(move))
    strategies = {name: bundles[kind] for name, (_, kind) in inputs.items()}

    def use(self: Explorer, **drawn: object) -> None:
        self.perform(_step(item, drawn, _uses(inputs, drawn), ("", "")))

    return _rule_of(**strategies, **draws)(use)
