"""How a check ends, in the suite's vocabulary, with the evidence that decided it.

A check returns when the device conforms: the calls it recorded are the evidence. Otherwise
it raises one of these, which the plugin turns into a pytest outcome and a classified result:

- `Deviation`: the device did not do what the source promises; `observation` is the
  typed fact (an errno, a value read back; pytest_rdma.observations) that a waiver must match to hold;
- `Unsupported`: the device's attributes say it lacks what the claim needs; `capability`
  names the attribute and the value it reports;
- `NotExercised`: this setup could not reach the claim's precondition; never a pass;
- `Blocked`: no check of this API family can run on this system at all;
- `CheckTimeout`: a completion or an event never came within the check's own deadline.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pytest_rdma.catalogue.model import Cap
from pytest_rdma.observations import NOTHING, Observation

# The outcome names used in every report.
CONFORMS = "conforms"
DEVIATES = "deviates"
UNSUPPORTED = "unsupported"
NOT_EXERCISED = "not exercised"
WAIVED = "waived"
CRASH = "crash"
TIMEOUT = "timeout"
ERROR = "error"
OUTCOMES = (CONFORMS, DEVIATES, UNSUPPORTED, NOT_EXERCISED, WAIVED, CRASH, TIMEOUT, ERROR)


@dataclass
class Deviation(AssertionError):
    """The source promises `expected`; the device did `observed`."""

    expected: str
    observed: str
    observation: Observation = NOTHING  # what was seen, typed (pytest_rdma.observations): Errno("EINVAL"), ...
    ref: str = ""  # the source, when it is not the case's own (a precondition's page)
    details: Mapping[str, object] = field(default_factory=dict)
    call: int | None = None  # index of the decisive call in the check's log

    def __post_init__(self) -> None:
        super().__init__(str(self))

    def __str__(self) -> str:
        lines = [f"expected: {self.expected}", f"observed: {self.observed}"]
        lines += [f"{key}: {value}" for key, value in self.details.items()]
        return "\n".join(lines)


class Unsupported(Exception):
    """The device does not advertise what the claim needs: `capability` says which attribute and value.

    `cap` is that attribute as the catalogue names it, when an attribute (not an answer) decided:
    a required capability (pytest_rdma.capabilities) is matched against it.
    """

    def __init__(self, capability: str, cap: Cap | None = None) -> None:
        super().__init__(capability)
        self.capability = capability
        self.cap = cap


class NotExercised(Exception):
    """The claim's precondition could not be reached here; `reason` says what failed."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Blocked(Exception):
    """The check cannot run on this system; the reason says why."""


class CheckTimeout(Exception):
    """The device never completed what the check waited for, within the check's deadline: "timeout"."""
