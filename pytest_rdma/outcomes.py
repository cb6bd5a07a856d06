"""How a check ends, in the suite's vocabulary.

A check returns when the device conforms. Otherwise it raises one of these, which the
plugin turns into a pytest outcome and a classified result:

- `Deviation`: the device did not do what the page promises (a failed test);
- `Unsupported`: the device does not advertise what the claim needs (a skip, with the
  capability named, decided from what the device advertises, never from an errno);
- `Blocked`: the check cannot run on this system at all (no provider of its API family).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# The outcome names used in every report.
CONFORMS = "conforms"
DEVIATES = "deviates"
UNSUPPORTED = "unsupported"
WAIVED = "waived"
CRASH = "crash"
TIMEOUT = "timeout"
ERROR = "error"
OUTCOMES = (CONFORMS, DEVIATES, UNSUPPORTED, WAIVED, CRASH, TIMEOUT, ERROR)


@dataclass
class Deviation(AssertionError):
    """The page promises `expected`; the device did `observed`."""

    ref: str                     # e.g. "ibv_modify_qp(3) NOTES"
    expected: str
    observed: str
    details: dict[str, Any] = field(default_factory=dict)
    reproducer: str = ""

    def __post_init__(self) -> None:
        super().__init__(str(self))

    def __str__(self) -> str:
        lines = [f"deviation from {self.ref}", f"  expected: {self.expected}", f"  observed: {self.observed}"]
        for key, value in self.details.items():
            lines.append(f"  {key}: {value}")
        return "\n".join(lines)


class Unsupported(Exception):
    """The device does not advertise a capability the claim needs."""

    def __init__(self, capability: str) -> None:
        super().__init__(capability)
        self.capability = capability


class Blocked(Exception):
    """The check cannot run on this system; the reason says why."""
