"""What a deviation observed, typed: each kind of fact a check can see, and everything done with it.

A `Deviation` (pytest_rdma.outcomes) carries one of these. Each type owns, in one place, the
things the suite does with an observation:

- `c_condition(site)`: the C condition that holds when the reproducer's decisive call shows it
  again ("" when a program cannot judge it; calls/render.py supplies the site);
- `replayed(call, named)`: the same judgement on the Python replay's call (None: not one a replay
  decides; pytest_rdma/replay.py);
- `as_dict()`: its JSON in the results (`observation`) and the keys a waiver's `observed` table
  matches (`matches`, expectations.py): the keys are the ones results files and waivers have always
  used, so neither changes;
- `text()`: how a report shows it;
- `same_as(other)`: whether another run observed the same (`pytest-rdma compare`), keys that say only how
  the check judged it (`JUDGED_BY`) aside.

`from_dict` reads one back from a results file or a reproducer script: the only place that looks
at keys. A provider that broke the return convention on the way (`Call.problem`) adds `problem`
to whatever was observed (kinds/check.py: Check.deviation).
"""

from __future__ import annotations

import errno as errno_module
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from dataclasses import field as dataclass_field
from typing import ClassVar, Protocol, Union

from pytest_rdma.calls.record import ArrayArg, Call, Readback
from pytest_rdma.catalogue.model import RETURNS_ERRNO, RETURNS_POINTER

# A value a check compares and a report shows: what kinds/check.py's plain() makes of a resolved or
# read-back value (a Sym or a Field -> its number, a Handle -> its name), or a device's names.
Observed = Union[Readback, tuple["Observed", ...], list[str]]

EVENT_WAIT_MS = 10000  # as long as a check waits for an event (kinds.traffic.TIMEOUT)
# As long as a check waits for a CQ's event once the completion it is due for is there (kinds.datapath.QUIET).
EVENT_AFTER_COMPLETION_MS = 1000


class CSite(Protocol):
    """Where a C reproducer judges an observation: its decisive call, as the program names things."""

    @property
    def call(self) -> Call:
        """The decisive call."""
        ...

    @property
    def calls(self) -> Sequence[Call]:
        """Every call the program makes, by index."""
        ...

    @property
    def steps(self) -> Mapping[str, int]:
        """A step's name -> the index of its call."""
        ...

    @property
    def returns(self) -> str:
        """The decisive verb's return convention (catalogue.model.RETURNS_*)."""
        ...

    def result(self) -> str:
        """The C variable holding what the decisive call returned."""
        ...

    def out(self, call: Call, path: str) -> str:
        """C for a field of what `call` wrote or returned ("attr.qp_state" -> a5_attr.qp_state)."""
        ...


class Observation:
    """The base of every observation type: JSON, matching, a dedup key, and no C or replay verdict."""

    problem: str  # every type's last field: how the decisive call broke its return convention ("" if not)

    # The keys of the type's JSON that identify it (from_dict tries a type only when one is present).
    KEYS: ClassVar[tuple[str, ...]] = ()
    # The keys that say how the check judged what it saw, not what the provider did; a newer version of a
    # type may add them to the JSON (FieldValue's `against` and `op`), which changes nothing observed.
    JUDGED_BY: ClassVar[tuple[str, ...]] = ()

    def items(self) -> list[tuple[str, object]]:
        """The type's own keys and values, in the order results have always written them (None: left out)."""
        return []

    def as_dict(self) -> dict[str, object]:
        """The results' `observation` object: the type's keys, then `problem` when the call had one."""
        out = dict(self.items())
        if self.problem:
            out["problem"] = self.problem
        return out

    def with_problem(self, problem: str) -> Observation:
        """The same observation, made by a call that also broke its return convention so."""
        return replace(self, problem=problem)  # type: ignore[type-var]  # every type is a dataclass with it

    @classmethod
    def read(cls, data: Mapping[str, object], problem: str) -> Observation | None:
        """The type from its JSON (as_dict), or None when `data` is not its shape."""
        return None

    def matches(self, observed: Mapping[str, object]) -> bool:
        """Whether a waiver's `observed` table holds: every key it records has the value seen (as text)."""
        mine = self.as_dict()
        return all(str(mine.get(key)) == str(value) for key, value in observed.items())

    def same_as(self, other: Observation) -> bool:
        """Whether `other` observed what this did, as two runs are compared: the same type, the same value
        for every key both write, and any key only one writes one of the type's JUDGED_BY (a results file
        written before the key was added is not a provider that changed)."""
        if type(other) is not type(self):
            return False
        mine, theirs = self.as_dict(), other.as_dict()
        if any(mine[key] != theirs[key] for key in mine.keys() & theirs.keys()):
            return False
        return all(key in self.JUDGED_BY for key in mine.keys() ^ theirs.keys())

    def c_condition(self, site: CSite) -> str:
        """C that holds when the reproducer's decisive call shows this again; "" when a program cannot say."""
        return ""

    def replayed(self, call: Call, named: Mapping[str, Call]) -> bool | None:
        """Whether the replay's decisive call shows this again; None when a replay cannot say."""
        return None

    def text(self) -> str:
        """As a report shows it: "errno = EINVAL"."""
        return ", ".join(f"{key} = {value}" for key, value in self.as_dict().items()) or "nothing recorded"

    @property
    def key(self) -> tuple[str, str]:
        """What makes two observations the same deviation: the type and its JSON."""
        return (type(self).__name__, repr(sorted(self.as_dict().items())))


def _given(*pairs: tuple[str, object]) -> list[tuple[str, object]]:
    """The pairs whose value is not None: the keys a type writes only when it has them."""
    return [(key, value) for key, value in pairs if value is not None]


def _text(value: object) -> str:
    return "" if value is None else str(value)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _names(value: object) -> tuple[str, ...]:
    return tuple(str(item) for item in value) if isinstance(value, (list, tuple)) else ()


@dataclass(frozen=True)
class Returned(Observation):
    """The call (or a `step` after it) succeeded where it must fail, or returned a `value` it must not."""

    value: Union[str, int] = "success"
    step: str = ""  # a step after the call: that verb succeeded
    problem: str = ""
    KEYS: ClassVar[tuple[str, ...]] = ("returned",)

    def items(self) -> list[tuple[str, object]]:
        return _given(("step", self.step or None), ("returned", self.value))

    @classmethod
    def read(cls, data: Mapping[str, object], problem: str) -> Observation | None:
        returned = data["returned"]
        value = returned if isinstance(returned, int) else str(returned)
        return cls(value, _text(data.get("step")), problem)

    def c_condition(self, site: CSite) -> str:
        if _int(self.value) is not None:
            return f"{site.result()} == {self.value}"  # a count that must never be this (a negative poll)
        return f"{site.result()} != NULL" if site.returns == RETURNS_POINTER else f"{site.result()} == 0"

    def replayed(self, call: Call, named: Mapping[str, Call]) -> bool | None:
        return bool(call.ok)


@dataclass(frozen=True)
class Errno(Observation):
    """The call failed with an errno the source does not allow, or failed where it must succeed."""

    errno: str
    step: str = ""  # a step after the call failed so
    verb: str = ""  # the verb that makes a resource the check needs failed so
    problem: str = ""
    KEYS: ClassVar[tuple[str, ...]] = ("errno",)

    def items(self) -> list[tuple[str, object]]:
        return _given(("step", self.step or None), ("verb", self.verb or None), ("errno", self.errno))

    @classmethod
    def read(cls, data: Mapping[str, object], problem: str) -> Observation | None:
        return cls(_text(data["errno"]), _text(data.get("step")), _text(data.get("verb")), problem)

    def c_condition(self, site: CSite) -> str:
        code = getattr(errno_module, self.errno, None)
        if code is None:
            return ""
        if site.returns == RETURNS_ERRNO:
            # A provider that returned the errno negated (the record's "problem") does so again.
            return f"{site.result()} == {-code if self.problem else code}"
        return f"e{site.call.index} == {code}"

    def replayed(self, call: Call, named: Mapping[str, Call]) -> bool | None:
        return call.ok is False and call.errno_name == self.errno


@dataclass(frozen=True)
class Problem(Observation):
    """The call broke its return convention (a negative errno, NULL without errno): `problem` says how."""

    problem: str = ""
    KEYS: ClassVar[tuple[str, ...]] = ("problem",)

    @classmethod
    def read(cls, data: Mapping[str, object], problem: str) -> Observation | None:
        return cls(problem)

    def c_condition(self, site: CSite) -> str:
        if site.returns == RETURNS_ERRNO:
            return f"{site.result()} < 0"
        return f"!{site.result()} && e{site.call.index} == 0"

    def replayed(self, call: Call, named: Mapping[str, Call]) -> bool | None:
        return bool(call.problem)


def _field_c(site: CSite, path: str, value: Observed) -> str:
    """C comparing a numeric field read back ("<step>.<path>" reads that step's call) with `value`."""
    if _int(value) is None and not isinstance(value, bool):
        return ""
    return f"(long long)({_field_expr(site, path)}) == {int(value)}"  # type: ignore[arg-type]  # an int: tested


def _field_expr(site: CSite, path: str) -> str:
    """C for a field read back ("<step>.<path>" reads that step's call, anything else the decisive one)."""
    root, _, rest = path.partition(".")
    holder, inner = (site.calls[site.steps[root]], rest) if root in site.steps else (site.call, path)
    return site.out(holder, inner)


def _field_replayed(call: Call, named: Mapping[str, Call], path: str, value: Observed) -> bool:
    return _replayed_value(call, named, path) == value


def _replayed_value(call: Call, named: Mapping[str, Call], path: str) -> Readback:
    """A field the replay read back ("<step>.<path>" reads that step's call)."""
    root, _, rest = path.partition(".")
    holder, inner = (named[root], rest) if root in named else (call, path)
    if inner == "ret":
        return holder.value
    top, _, below = inner.partition(".")
    data: Readback = holder.outs.get(top)
    for part in [p for p in below.split(".") if p]:
        if isinstance(data, Mapping):
            data = data.get(part)
        elif isinstance(data, Sequence) and not isinstance(data, (str, bytes)) and part.isdigit():
            data = data[int(part)] if int(part) < len(data) else None  # wc.0.status: the first completion
        else:
            data = None
    return data


# The comparisons a field can fail against another call's field, as C and as Python apply them.
NUMERIC_OPS: dict[str, Callable[[int, int], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
}


@dataclass(frozen=True)
class FieldValue(Observation):
    """A field read back had another value: "attr.qp_state", "wc.0.byte_len", "<step>.<path>", "ret".

    Where the field was to compare (`op`) with another call's field (`against`, "<step>.<path>"),
    the deviation is that comparison failing, not the value: ibv_query_qp's max_recv_wr of 7 is no
    deviation where ibv_create_qp also wrote back 7. So the reproducers judge the comparison."""

    field: str
    value: Observed
    against: str = ""
    op: str = ""
    problem: str = ""
    KEYS: ClassVar[tuple[str, ...]] = ("field",)
    JUDGED_BY: ClassVar[tuple[str, ...]] = ("against", "op")

    def items(self) -> list[tuple[str, object]]:
        compared = [("against", self.against), ("op", self.op)] if self.against else []
        return [("field", self.field), ("value", self.value), *compared]

    @classmethod
    def read(cls, data: Mapping[str, object], problem: str) -> Observation | None:
        value = data.get("value")
        return cls(_text(data["field"]), value, _text(data.get("against")), _text(data.get("op")), problem)  # type: ignore[arg-type]  # JSON data

    def c_condition(self, site: CSite) -> str:
        if not self.against:
            return _field_c(site, self.field, self.value)
        if self.op not in NUMERIC_OPS or self.against.partition(".")[0] not in site.steps:
            return ""
        left, right = (_field_expr(site, path) for path in (self.field, self.against))
        return f"!((long long)({left}) {self.op} (long long)({right}))"

    def replayed(self, call: Call, named: Mapping[str, Call]) -> bool | None:
        if not self.against:
            return _field_replayed(call, named, self.field, self.value)
        left, right = (_replayed_value(call, named, path) for path in (self.field, self.against))
        if self.op not in NUMERIC_OPS or _int(left) is None or _int(right) is None:
            return None
        return not NUMERIC_OPS[self.op](left, right)  # type: ignore[arg-type]  # ints: tested


@dataclass(frozen=True)
class CompletionStatus(Observation):
    """A completion's field (its status) read back: the number (`value`) and its name (`status`)."""

    field: str
    value: int
    status: str
    problem: str = ""
    KEYS: ClassVar[tuple[str, ...]] = ("status",)

    def items(self) -> list[tuple[str, object]]:
        return [("field", self.field), ("value", self.value), ("status", self.status)]

    @classmethod
    def read(cls, data: Mapping[str, object], problem: str) -> Observation | None:
        value = _int(data.get("value"))
        if "field" not in data or value is None:
            return None
        return cls(_text(data["field"]), value, _text(data["status"]), problem)

    def c_condition(self, site: CSite) -> str:
        return _field_c(site, self.field, self.value)

    def replayed(self, call: Call, named: Mapping[str, Call]) -> bool | None:
        return _field_replayed(call, named, self.field, self.value)


@dataclass(frozen=True)
class State(Observation):
    """A QP read back in another state than the one the call moved it to (the state's short name)."""

    state: str
    problem: str = ""
    KEYS: ClassVar[tuple[str, ...]] = ("state",)

    def items(self) -> list[tuple[str, object]]:
        return [("state", self.state)]

    @classmethod
    def read(cls, data: Mapping[str, object], problem: str) -> Observation | None:
        return cls(_text(data["state"]), problem)

    def c_condition(self, site: CSite) -> str:
        return f"{site.out(site.call, 'attr.qp_state')} == IBV_QPS_{self.state}"


@dataclass(frozen=True)
class Changed(Observation):
    """A call that must modify nothing changed these attributes (the queries before and after say)."""

    fields: tuple[str, ...]
    problem: str = ""
    KEYS: ClassVar[tuple[str, ...]] = ("changed",)

    def items(self) -> list[tuple[str, object]]:
        return [("changed", list(self.fields))]

    @classmethod
    def read(cls, data: Mapping[str, object], problem: str) -> Observation | None:
        return cls(_names(data["changed"]), problem)

    def c_condition(self, site: CSite) -> str:
        call = site.call
        before = next((c for c in reversed(site.calls[: call.index]) if c.verb == call.verb), None)
        if before is None:
            return ""
        return " || ".join(
            f"({site.out(call, 'attr.' + name)} != {site.out(before, 'attr.' + name)})"
            for name in self.fields
            if "." not in name or not name.endswith("dgid")
        )


@dataclass(frozen=True)
class Differ(Observation):
    """Attributes a successful call was given that the query then reports otherwise."""

    fields: tuple[str, ...]
    problem: str = ""
    KEYS: ClassVar[tuple[str, ...]] = ("differ",)

    def items(self) -> list[tuple[str, object]]:
        return [("differ", list(self.fields))]

    @classmethod
    def read(cls, data: Mapping[str, object], problem: str) -> Observation | None:
        return cls(_names(data["differ"]), problem)


@dataclass(frozen=True)
class Capacities(Observation):
    """The queue sizes a resize left (a device advertising IBV_DEVICE_RESIZE_MAX_WR grows them)."""

    cap: Mapping[str, Union[int, None]]
    problem: str = ""
    KEYS: ClassVar[tuple[str, ...]] = ("cap",)

    def items(self) -> list[tuple[str, object]]:
        return [("cap", dict(self.cap))]

    @classmethod
    def read(cls, data: Mapping[str, object], problem: str) -> Observation | None:
        cap = data["cap"]  # a results file holds it as text (report/record.py): that one stays Opaque
        return cls({str(k): _int(v) for k, v in cap.items()}, problem) if isinstance(cap, Mapping) else None


@dataclass(frozen=True)
class BadWr(Observation):
    """Where a refused post's `*bad_wr` pointed: the index of a WR of the list posted, or NULL (None)."""

    index: Union[int, None]
    problem: str = ""
    KEYS: ClassVar[tuple[str, ...]] = ("bad_wr",)

    def items(self) -> list[tuple[str, object]]:
        return [("bad_wr", "NULL" if self.index is None else self.index)]

    @classmethod
    def read(cls, data: Mapping[str, object], problem: str) -> Observation | None:
        return cls(_int(data["bad_wr"]), problem)

    def c_condition(self, site: CSite) -> str:
        call = site.call
        if self.index is None:
            return f"{site.out(call, 'bad_wr')} == NULL"
        listed = next((name for name, value in call.args if isinstance(value, ArrayArg)), None)
        if listed is None:
            return ""
        return f"{site.out(call, 'bad_wr')} == &{site.out(call, listed)}[{self.index}]"


@dataclass(frozen=True)
class Placed(Observation):
    """A refused or discarded operation wrote into `region`: byte `first` of its `length` changed."""

    first: int
    region: str
    length: int
    problem: str = ""
    KEYS: ClassVar[tuple[str, ...]] = ("data",)

    def items(self) -> list[tuple[str, object]]:
        return [("data", "placed"), ("first", self.first), ("region", self.region), ("length", self.length)]

    @classmethod
    def read(cls, data: Mapping[str, object], problem: str) -> Observation | None:
        if data["data"] != "placed":
            return None
        return cls(_int(data.get("first")) or 0, _text(data.get("region")), _int(data.get("length")) or 0, problem)

    def c_condition(self, site: CSite) -> str:
        return f"!all_zero((void *){self.region}->addr, {self.length})"


@dataclass(frozen=True)
class Differs(Observation):
    """The bytes that arrived in `region` (at `offset`) are not those of `source` (at `source_offset`)."""

    first: int
    region: str
    offset: int
    source: str
    length: int
    source_offset: Union[int, None] = None  # written by the checks that read from inside the source
    problem: str = ""
    KEYS: ClassVar[tuple[str, ...]] = ("data",)

    def items(self) -> list[tuple[str, object]]:
        return _given(
            ("data", "differs"),
            ("first", self.first),
            ("region", self.region),
            ("offset", self.offset),
            ("source", self.source),
            ("source_offset", self.source_offset),
            ("length", self.length),
        )

    @classmethod
    def read(cls, data: Mapping[str, object], problem: str) -> Observation | None:
        if data["data"] != "differs":
            return None
        number = {key: _int(data.get(key)) or 0 for key in ("first", "offset", "length")}
        source = (_text(data.get("region")), _text(data.get("source")))
        return cls(
            number["first"],
            source[0],
            number["offset"],
            source[1],
            number["length"],
            _int(data.get("source_offset")),
            problem,
        )

    def c_condition(self, site: CSite) -> str:
        source = f"{self.source}->addr"
        if self.source_offset:
            source = f"(char *){source} + {self.source_offset}"
        return f"memcmp((char *){self.region}->addr + {self.offset}, {source}, {self.length}) != 0"


@dataclass(frozen=True)
class MissingAsyncEvent(Observation):
    """The asynchronous event awaited never came: no event at all, or only the others `seen`."""

    seen: tuple[str, ...] = ()
    outstanding: Union[int, None] = None  # an SRQ's receives outstanding when none came
    problem: str = ""
    KEYS: ClassVar[tuple[str, ...]] = ("async_event", "async_events")

    def items(self) -> list[tuple[str, object]]:
        if self.seen:
            return [("async_events", ", ".join(self.seen))]
        return _given(("async_event", "none"), ("outstanding", self.outstanding))

    @classmethod
    def read(cls, data: Mapping[str, object], problem: str) -> Observation | None:
        seen = _text(data.get("async_events"))
        return cls(tuple(seen.split(", ")) if seen else (), _int(data.get("outstanding")), problem)

    def c_condition(self, site: CSite) -> str:
        # No asynchronous event on the context, waited for as long as the check waited.
        return "" if self.seen else f"!fd_ready(ctx->async_fd, {EVENT_WAIT_MS})"


@dataclass(frozen=True)
class CqEvent(Observation):
    """A completion event came where none may (`came`), or none came for a completion of `status`."""

    came: bool
    status: Union[int, None] = None
    problem: str = ""
    KEYS: ClassVar[tuple[str, ...]] = ("event",)

    def items(self) -> list[tuple[str, object]]:
        return _given(("event", self.came), ("status", self.status))

    @classmethod
    def read(cls, data: Mapping[str, object], problem: str) -> Observation | None:
        return cls(bool(data["event"]), _int(data.get("status")), problem)

    def c_condition(self, site: CSite) -> str:
        if self.came:
            return f"{site.result()} == 0"  # the decisive call took an event that should not have come
        # No event on the armed CQ's channel, waited for as long as the check waited: with the completion's status
        # known, the program has polled that completion already (the check's order), and waits as briefly.
        wait = EVENT_AFTER_COMPLETION_MS if self.status is not None else EVENT_WAIT_MS
        return f"!fd_ready({site.out(site.call, 'cq')}->channel->fd, {wait})"


@dataclass(frozen=True)
class EventCq(Observation):
    """The completion event named another CQ than the one armed (the address it named)."""

    cq: int
    problem: str = ""
    KEYS: ClassVar[tuple[str, ...]] = ("cq",)

    def items(self) -> list[tuple[str, object]]:
        return [("cq", self.cq)]

    @classmethod
    def read(cls, data: Mapping[str, object], problem: str) -> Observation | None:
        address = _int(data["cq"])
        return None if address is None else cls(address, problem)


@dataclass(frozen=True)
class Repeated(Observation):
    """Values that must be distinct among live results came again (the first few repeated)."""

    values: tuple[Observed, ...]
    problem: str = ""
    KEYS: ClassVar[tuple[str, ...]] = ("repeated",)

    def items(self) -> list[tuple[str, object]]:
        return [("repeated", list(self.values))]

    @classmethod
    def read(cls, data: Mapping[str, object], problem: str) -> Observation | None:
        values = data["repeated"]
        return cls(tuple(values), problem) if isinstance(values, (list, tuple)) else None  # JSON data


@dataclass(frozen=True)
class RelationBroken(Observation):
    """Two fields a query reports break the relation the page states between them."""

    left: str
    value: Observed
    right: str
    right_value: Observed
    # The relation (an op of NUMERIC_OPS) and where each side was read ("<step>.<path>"; "" for a number):
    # a reproducer judges the relation on what it reads, so a program can say whether it broke again.
    op: str = ""
    left_at: str = ""
    right_at: str = ""
    problem: str = ""
    KEYS: ClassVar[tuple[str, ...]] = ("left",)
    JUDGED_BY: ClassVar[tuple[str, ...]] = ("op", "left_at", "right_at")

    def items(self) -> list[tuple[str, object]]:
        where = [("op", self.op), ("left_at", self.left_at), ("right_at", self.right_at)] if self.op else []
        return [
            ("left", self.left),
            ("value", self.value),
            ("right", self.right),
            ("right_value", self.right_value),
            *where,
        ]

    @classmethod
    def read(cls, data: Mapping[str, object], problem: str) -> Observation | None:
        value, right_value = data.get("value"), data.get("right_value")
        where = (_text(data.get("op")), _text(data.get("left_at")), _text(data.get("right_at")))
        return cls(_text(data["left"]), value, _text(data.get("right")), right_value, *where, problem)  # type: ignore[arg-type]

    def c_condition(self, site: CSite) -> str:
        if not (self.left_at or self.right_at):
            return ""  # two numbers: nothing the device reports
        sides = []
        for at, value in ((self.left_at, self.value), (self.right_at, self.right_value)):
            if "&" in at:
                return ""  # flag bits of a field: no program of ours masks them
            if at and at.partition(".")[0] in site.steps:
                sides.append(_field_expr(site, at))
            elif not at and _int(value) is not None:
                sides.append(str(value))  # a number of the relation's own
            else:
                return ""
        if self.op not in NUMERIC_OPS:
            return ""
        return f"!((long long)({sides[0]}) {self.op} (long long)({sides[1]}))"

    def replayed(self, call: Call, named: Mapping[str, Call]) -> bool | None:
        if "&" in self.left_at + self.right_at:
            return None
        left = _replayed_value(call, named, self.left_at) if self.left_at else self.value
        right = _replayed_value(call, named, self.right_at) if self.right_at else self.right_value
        if (
            not (self.left_at or self.right_at)
            or self.op not in NUMERIC_OPS
            or _int(left) is None
            or _int(right) is None
        ):
            return None
        return not NUMERIC_OPS[self.op](left, right)  # type: ignore[arg-type]  # ints: tested


@dataclass(frozen=True)
class Produced(Observation):
    """A pure function of the library returned another value than its table gives."""

    value: Observed
    problem: str = ""
    KEYS: ClassVar[tuple[str, ...]] = ("value",)

    def items(self) -> list[tuple[str, object]]:
        return [("value", self.value)]

    @classmethod
    def read(cls, data: Mapping[str, object], problem: str) -> Observation | None:
        return cls(data["value"], problem)  # type: ignore[arg-type]  # JSON data


@dataclass(frozen=True)
class Crashed(Observation):
    """The process running the check died in it (a provider's segfault in the verb): xdist's controller saw
    its worker go. Nothing else is known, so a waiver of it records this alone (expectations.py)."""

    problem: str = ""
    KEYS: ClassVar[tuple[str, ...]] = ("crash",)

    def items(self) -> list[tuple[str, object]]:
        return [("crash", True)]

    @classmethod
    def read(cls, data: Mapping[str, object], problem: str) -> Observation | None:
        return cls(problem) if data.get("crash") is True else None


@dataclass(frozen=True)
class KernelFaulted(Observation):
    """The kernel faulted during the check: a WARNING, BUG, Oops, KASAN or lockdep report the kernel-log guard
    read (`kind` as guard/kmsg.py names it), or in the lab an Oops, panic or hang that ended the VM (lab/fault.py,
    with the kernel's report as `console`). A waiver of it records the kind alone (expectations.py)."""

    kind: str
    console: tuple[str, ...] = ()
    problem: str = ""
    KEYS: ClassVar[tuple[str, ...]] = ("kernel_fault",)

    def items(self) -> list[tuple[str, object]]:
        return [("kernel_fault", self.kind), *([("console", list(self.console))] if self.console else [])]

    @classmethod
    def read(cls, data: Mapping[str, object], problem: str) -> Observation | None:
        kind, console = data.get("kernel_fault"), data.get("console") or []
        if not isinstance(kind, str) or not isinstance(console, list):
            return None
        return cls(kind, tuple(str(line) for line in console), problem)


@dataclass(frozen=True)
class Opaque(Observation):
    """An observation read back that no type here recognises (a results file of another version)."""

    data: Mapping[str, object] = dataclass_field(default_factory=dict)
    problem: str = ""

    def as_dict(self) -> dict[str, object]:
        return dict(self.data)


# The types from_dict tries, most specific first: the first that reads a mapping back exactly wins.
TYPES: tuple[type[Observation], ...] = (
    CompletionStatus,
    FieldValue,
    RelationBroken,
    Errno,
    Returned,
    State,
    Changed,
    Differ,
    Capacities,
    BadWr,
    Placed,
    Differs,
    MissingAsyncEvent,
    CqEvent,
    EventCq,
    Repeated,
    Produced,
    Crashed,
    KernelFaulted,
    Problem,
)


def from_dict(data: Mapping[str, object]) -> Observation:
    """An observation as results and reproducer scripts write it (as_dict) -> its type, or Opaque.

    The one place that looks at keys: whatever it returns writes `data` back exactly (as_dict).
    """
    problem = _text(data.get("problem"))
    for kind in TYPES:
        if not any(key in data for key in kind.KEYS):
            continue
        found = kind.read(data, problem)
        if found is not None and found.as_dict() == dict(data):
            return found
    return Opaque(dict(data))


NOTHING = Opaque()  # what a Deviation raised without an observation carries
