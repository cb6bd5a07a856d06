"""The explorer's rules, read from the catalogue: each verb's contract and its parameters' domains.

A verb whose contract produces a resource (with the verb that destroys it) is a *make* rule: its result
goes into that kind's bundle. A verb whose contract destroys one is a *destroy* rule, which takes an object
out of the bundle; a verb whose contract moves one between states is a *move* rule per transition (its
mover's walk table gives the attributes each move requires); any other verb whose contract requires
resources is a *use* rule. The objects a contract's `requires` names are drawn from the bundles; every
other argument is its default, or the arguments of one of the verb's own checks taken whole (a limit, a
limit plus one, flags beyond the documented ones, a mask with the fields it names: coherent, as the
catalogue wrote them), and an enum parameter is drawn from its enum's members and one value beyond them.
Pure: no device, no Hypothesis.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pytest_rdma.calls.marshal import parse_ctype
from pytest_rdma.catalogue.index import Catalogue
from pytest_rdma.catalogue.model import Arg, Param, Ref, Var, Verb
from pytest_rdma.generate import expand
from pytest_rdma.ibv.enums import ENUMS

MAKE, USE, DESTROY, MOVE = "make", "use", "destroy", "move"

# Verbs the explorer never calls, and why: each would stop the sequence rather than exercise the provider.
LEFT_OUT: Mapping[str, str] = {
    "ibv_get_async_event": "blocks until the device reports an event",
    "ibv_get_cq_event": "blocks until a completion event arrives",
    "ibv_ack_async_event": "acknowledges an event only ibv_get_async_event returns",
    # Acknowledging events never received makes ibv_destroy_cq wait for them for ever (libibverbs counts the
    # acknowledged against the reported): a hang of the caller's making, the first exploration's only finding.
    "ibv_ack_cq_events": "acknowledges only events ibv_get_cq_event returned",
    "ibv_fork_init": "changes the whole process, not one object",
}
# Kinds of the session, not of a sequence: the device list, the device and its opened context.
SESSION_KINDS = ("device_list", "device", "context", "async_event")


@dataclass(frozen=True)
class Rule:
    verb: str
    role: str  # MAKE, USE, DESTROY or MOVE
    inputs: tuple[tuple[str, str], ...]  # argument path -> the resource kind drawn from its bundle
    makes: str = ""  # MAKE: the kind its result is
    destroys: str = ""  # DESTROY: the argument path of the object it frees
    cases: tuple[str, ...] = ()  # the verb's checks whose arguments a step may take instead of the defaults
    domains: tuple[tuple[str, tuple[object, ...]], ...] = ()  # an enum parameter -> values beside its default
    variables: tuple[tuple[str, tuple[str, ...]], ...] = ()  # the verb's variables -> the values to draw
    move: tuple[str, str] = ("", "")  # MOVE: before, after ("any": from every state)

    @property
    def name(self) -> str:
        suffix = f"_{self.move[0]}_{self.move[1]}" if self.role == MOVE else ""
        return f"{self.role}_{self.verb}{suffix}".replace("-", "_")


def rules(catalogue: Catalogue) -> tuple[Rule, ...]:
    """Every rule the catalogue's contracts give, in the catalogue's order (the same on every host)."""
    verbs = [verb for verb in catalogue.verbs if _eligible(verb)]
    made = {kind for verb in verbs for kind in _made(verb)}
    # A destroy rule frees what a make rule made: ibv_unimport_pd forgets an imported PD, it frees no PD of ours.
    destroyers = {verb.contract.destroyed_by for verb in verbs if _made(verb) and _inputs(verb, made) is not None}
    out: list[Rule] = []
    for verb in verbs:
        inputs = _inputs(verb, made)
        if inputs is None:
            continue
        contract = verb.contract
        domains = _domains(verb, {path for path, _ in inputs})
        cases = _cases(verb)
        variables = _variables(verb)
        kinds = _made(verb)
        if kinds:
            out.append(Rule(verb.name, MAKE, inputs, makes=kinds[0], cases=cases, domains=domains, variables=variables))
        elif contract.destroys:
            gone = contract.destroys[0]
            if (
                verb.name not in destroyers
                or gone.kind not in made
                or parse_ctype(verb.param(gone.role).ctype).base != f"ibv_{gone.kind}"
            ):
                continue
            inputs = tuple(dict([*inputs, (gone.role, gone.kind)]).items())  # the object it frees, drawn
            out.append(Rule(verb.name, DESTROY, inputs, destroys=gone.role))
        elif contract.moves:
            if "walk" not in verb.tables:
                continue
            for moved in contract.moves:
                if moved.resource in made:
                    out.append(Rule(verb.name, MOVE, inputs, domains=domains, move=(moved.before, moved.after)))
        elif inputs:
            out.append(Rule(verb.name, USE, inputs, cases=cases, domains=domains))
    return tuple(out)


def kinds_of(found: Iterable[Rule]) -> tuple[str, ...]:
    """The resource kinds the rules make or draw, each once, in order: one bundle each."""
    seen: dict[str, None] = {}
    for rule in found:
        if rule.makes:
            seen[rule.makes] = None
        for _, kind in rule.inputs:
            seen[kind] = None
    return tuple(seen)


def _eligible(verb: Verb) -> bool:
    if verb.family != "ibv" or verb.name in LEFT_OUT:
        return False
    contract = verb.contract
    touched = [r.kind for r in (*contract.requires, *contract.produces, *contract.destroys)]
    if any(kind in SESSION_KINDS for kind in touched if kind != "context"):
        return False
    return not any(r.kind == "context" for r in (*contract.produces, *contract.destroys))


def _made(verb: Verb) -> tuple[str, ...]:
    """The kinds the verb produces, when the catalogue says how to free them (a sequence frees what it made)."""
    contract = verb.contract
    if not contract.destroyed_by:
        return ()
    return tuple(r.kind for r in contract.produces if r.kind not in SESSION_KINDS)


def _inputs(verb: Verb, made: set[str]) -> tuple[tuple[str, str], ...] | None:
    """The arguments drawn from bundles, or None when the verb needs an object no rule makes.

    An object is drawn only for an argument of its own type: a parameter `struct ibv_<kind> *`, or a struct
    field named for the kind (qp_init_attr.send_cq); the others keep their defaults (a Need the check makes).
    """
    out: list[tuple[str, str]] = []
    for required in verb.contract.requires:
        if required.kind == "context":
            continue
        if required.kind not in made:
            return None
        path = required.role
        name, _, rest = path.partition(".")
        try:
            param = verb.param(name)
        except KeyError:
            continue  # "cq->channel": an object reached through another, made with it
        if rest:
            if rest.rsplit(".", 1)[-1].endswith(required.kind):
                out.append((path, required.kind))
        elif parse_ctype(param.ctype).base == f"ibv_{required.kind}":
            out.append((path, required.kind))
    drawn = {path.split(".")[0] for path, _ in out}
    # A default that refers to an earlier step (Ref) has no step in a sequence: such a verb must draw it.
    if any(isinstance(param.default, Ref) and param.name not in drawn for param in verb.params):
        return None
    return tuple(out)


def _domains(verb: Verb, drawn: set[str]) -> tuple[tuple[str, tuple[object, ...]], ...]:
    """Per scalar parameter with an enum, the values a step may give it instead of its default."""
    out = []
    for param in verb.params:
        if param.direction == "out" or param.name in drawn:
            continue
        values = _enum_values(param)
        if values:
            out.append((param.name, values))
    return tuple(out)


def _cases(verb: Verb) -> tuple[str, ...]:
    """The verb's checks whose arguments a step can take whole (by case id): each a coherent set, the
    catalogue's own (a mask with the fields it names set, a limit and the field it limits). Arguments that
    refer to a check's earlier steps cannot be taken."""
    return tuple(case.id for case in expand(verb) if case.spec.get("call") and _standalone(case.spec["call"]))


def _standalone(value: object) -> bool:
    if isinstance(value, (Ref, Arg, Var)):
        return False
    if isinstance(value, Mapping):
        return all("{" not in str(key) and _standalone(item) for key, item in value.items())
    if isinstance(value, tuple):
        return all(_standalone(item) for item in value)
    return True


def _enum_values(param: Param) -> tuple[object, ...]:
    """An enum parameter's members and one value beyond them (a bit above a mask's highest, or max + 1)."""
    members = ENUMS.get(param.flags or "")
    if not members or "*" in param.ctype:
        return ()
    numbers = [value for value in members.values() if value > 0]
    if not numbers:
        return tuple(members)
    masks = all(value & (value - 1) == 0 for value in numbers) and len(numbers) > 2
    beyond = max(numbers) << 1 if masks else max(numbers) + 1
    return (*members, beyond)


def _variables(verb: Verb) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The verb's variables a needs table lists values for (qp_type: RC, UC, UD, RAW_PACKET), default first."""
    defaults = verb.tables.get("vars", {})
    out = []
    for name, by_value in verb.tables.get("needs", {}).items():
        default = defaults.get(name)
        listed = [str(default)] if isinstance(default, str) else []
        listed += [value for value in by_value if value not in listed]
        out.append((name, tuple(listed)))
    return tuple(out)
