"""A generated sequence's steps and what the explorer found, as plain data.

A step names the verb, the earlier steps whose objects it passes (by index: the object a step made),
the argument values drawn for it and, for a mover, the move. Plain data crosses the explorer's process
boundary (JSON lines), becomes a finding check's case, and is run again by that check.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pytest_rdma.catalogue.model import Dev

# A drawn argument value: a number, flag names ("IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ"), NULL,
# or a fact of the device (Dev: a limit, or a limit plus one).
Drawn = object

# The classes of finding, each a word of the finding's stable id.
CRASH, HANG, LEAK, KERNEL, CONVENTION = "crash", "hang", "leak", "kernel-warning", "convention"
CLASSES = (CRASH, HANG, LEAK, KERNEL, CONVENTION)


@dataclass(frozen=True)
class Step:
    verb: str
    uses: tuple[tuple[str, int], ...] = ()  # argument path -> the step whose object it passes
    args: tuple[tuple[str, Drawn], ...] = ()  # argument path -> the value drawn (defaults are left out)
    variables: tuple[tuple[str, str], ...] = ()  # the verb's variables drawn (qp_type)
    move: tuple[str, str] = ("", "")  # a mover's step: before, after ("any" before: from whatever state)
    case: str = ""  # the id of the verb's check whose arguments the step takes (calls: its spec's call)

    def as_dict(self) -> dict[str, object]:
        return {
            "verb": self.verb,
            "uses": [list(use) for use in self.uses],
            "args": [[path, _dump(value)] for path, value in self.args],
            "variables": [list(pair) for pair in self.variables],
            "move": list(self.move),
            "case": self.case,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Step:
        uses = _pairs(data.get("uses"))
        args = _pairs(data.get("args"))
        move = data.get("move") or ["", ""]
        return cls(
            verb=str(data["verb"]),
            uses=tuple((str(path), int(str(index))) for path, index in uses),
            args=tuple((str(path), _load(value)) for path, value in args),
            variables=tuple((str(name), str(value)) for name, value in _pairs(data.get("variables"))),
            move=(str(list(move)[0]), str(list(move)[1])) if isinstance(move, list) else ("", ""),
            case=str(data.get("case", "")),
        )

    def text(self) -> str:
        """One line a person reads: "s2 = ibv_create_qp(pd=s0, qp_init_attr.cap.max_send_wr=0)"."""
        shown = [f"{path}=s{index}" for path, index in self.uses]
        shown += [f"{path}={_show(value)}" for path, value in self.args]
        shown += [f"{name}={value}" for name, value in self.variables]
        if any(self.move):
            shown.append(f"{self.move[0]}>{self.move[1]}")
        taken = f"[{self.case}]" if self.case else ""
        return f"{self.verb}{taken}({', '.join(shown)})"


@dataclass(frozen=True)
class Finding:
    """What a shrunk sequence showed: its class, what was seen, and the sequence."""

    cls: str  # one of CLASSES
    detail: str
    steps: tuple[Step, ...]
    device: str = ""

    @property
    def variant(self) -> str:
        """The verbs of the sequence in order: with the class, the finding's stable id."""
        return "-".join(step.verb for step in self.steps) or "empty"

    @property
    def case_id(self) -> str:
        return f"{self.cls}-{self.variant}"

    def as_dict(self) -> dict[str, object]:
        return {
            "class": self.cls,
            "detail": self.detail,
            "device": self.device,
            "steps": [step.as_dict() for step in self.steps],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Finding:
        steps = data.get("steps")
        return cls(
            cls=str(data["class"]),
            detail=str(data.get("detail", "")),
            steps=tuple(Step.from_dict(step) for step in (steps if isinstance(steps, list) else [])),
            device=str(data.get("device", "")),
        )


def _pairs(value: object) -> list[tuple[object, object]]:
    return (
        [(item[0], item[1]) for item in value if isinstance(item, list) and len(item) == 2]
        if isinstance(value, list)
        else []
    )


def _dump(value: Drawn) -> object:
    if isinstance(value, Dev):
        return {"dev": value.path, "plus": value.plus, "times": value.times}
    return value


def _load(value: object) -> Drawn:
    if isinstance(value, Mapping) and "dev" in value:
        return Dev(str(value["dev"]), int(value.get("plus", 0)), int(value.get("times", 1)))
    return value


def _show(value: Drawn) -> str:
    if isinstance(value, Dev):
        shown = value.path + (f"*{value.times}" if value.times != 1 else "")
        return shown + (f"+{value.plus}" if value.plus else "")
    return "NULL" if value is None else str(value)
