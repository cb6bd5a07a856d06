"""What each device was required to support, and how it held: the run's profile.

A capability is required by `--rdma-require` (its ini setting or environment variable: for every
device) or by the `require` list of the driver's expectations file. A check unsupported for the
lack of a required capability fails (`failure`, where the check runs); at the end each device's
profile says, per required capability, where the requirement came from and whether it held (a
check that needs it was exercised), failed (checks unsupported for its lack: the attribute that
says so) or was not exercised by any check of this run (said, never passed over in silence).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypedDict

from pytest_rdma import capabilities
from pytest_rdma.catalogue.model import Cap
from pytest_rdma.expectations import Expectations
from pytest_rdma.outcomes import CONFORMS, CRASH, DEVIATES, TIMEOUT, WAIVED
from pytest_rdma.report.record import RequiredFailure

HELD = "held"
FAILED = "failed"
NOT_EXERCISED = "not exercised"
EXERCISED = (CONFORMS, DEVIATES, WAIVED, CRASH, TIMEOUT)  # the check reached the device's answer


class Requirement(TypedDict):
    """One required capability of one device, as the run found it."""

    capability: str
    attributes: str  # what advertises it (capabilities.Capability.attributes)
    source: str
    status: str  # held, failed or not exercised
    exercised: int  # checks that need it and reached the device's answer
    failed: int  # checks unsupported for its lack
    why: str  # for failed: the attribute and its value; for not exercised: what to do


class Requirements:
    """The capabilities each driver must advertise: from the settings and from its expectations files."""

    def __init__(self, required: Sequence[str], source: str, expectations: Expectations) -> None:
        self.required = tuple(required)
        self.source = source
        self.expectations = expectations

    def of(self, driver: str) -> dict[str, str]:
        """capability -> where it was required; the settings' first, then the driver's files'."""
        out = {name: self.source for name in self.required}
        for requirement in self.expectations.required.get(driver, ()):
            out.setdefault(requirement.name, requirement.where)
        return out

    def failure(self, driver: str, lacking: Cap | None, reason: str, related: Sequence[str]) -> RequiredFailure | None:
        """The required capability a check unsupported for lack of `lacking` fails for, if one is."""
        required = self.of(driver)
        names = capabilities.lacking(lacking, required, related)
        if not names:
            return None
        return {"capability": names[0], "source": required[names[0]], "advertised": reason}


def failure_text(failure: RequiredFailure) -> str:
    """The one line a failing check says: "required, not advertised: attr.max_srq = 0 (srq, ...)"."""
    return (
        f"required, not advertised: {failure['advertised']} ({failure['capability']}, required by {failure['source']})"
    )


def profile(records: Sequence[Mapping[str, object]], requirements: Requirements) -> dict[str, list[Requirement]]:
    """device -> its requirements and how each held, for the devices of `records` that had any."""
    by_device: dict[str, list[Mapping[str, object]]] = {}
    drivers: dict[str, str] = {}
    for record in records:
        device = str(record.get("device") or "")
        if device:
            by_device.setdefault(device, []).append(record)
            drivers[device] = drivers.get(device) or str(record.get("driver") or "")
    out: dict[str, list[Requirement]] = {}
    for device, group in by_device.items():
        required = requirements.of(drivers[device])
        if required:
            out[device] = [_requirement(name, source, group) for name, source in required.items()]
    return out


def _requirement(name: str, source: str, group: Sequence[Mapping[str, object]]) -> Requirement:
    def failure(record: Mapping[str, object]) -> Mapping[str, str]:
        found = record.get("required")
        return found if isinstance(found, Mapping) else {}

    def needs(record: Mapping[str, object]) -> bool:
        related = record.get("capabilities")
        return isinstance(related, (list, tuple)) and name in related

    failing = [r for r in group if failure(r).get("capability") == name]
    related = [r for r in group if needs(r)]
    exercised = sum(1 for r in related if r.get("outcome") in EXERCISED)
    if failing:
        status, why = FAILED, str(failure(failing[0]).get("advertised", ""))
    elif exercised:
        status, why = HELD, ""
    elif related:
        status, why = (
            NOT_EXERCISED,
            (f"none of its {len(related)} checks here reached the device's answer (unsupported or not exercised)"),
        )
    else:
        status, why = NOT_EXERCISED, "no check of this run needs it: run its checks (e.g. without -k) to judge it"
    return {
        "capability": name,
        "attributes": capabilities.lookup(name).attributes,
        "source": source,
        "status": status,
        "exercised": exercised,
        "failed": len(failing),
        "why": why,
    }


def profile_lines(device: str, requirements: Sequence[Mapping[str, object]]) -> list[str]:
    """The terminal's lines for a device's profile."""
    lines = [f"{device}: required capabilities:"]
    for entry in requirements:
        status = str(entry.get("status", ""))
        if status == FAILED:
            told = f"FAILS: {entry.get('failed')} checks unsupported: required, not advertised: {entry.get('why')}"
        elif status == HELD:
            told = f"held: advertised, {entry.get('exercised')} checks exercised it"
        else:
            told = f"not exercised: {entry.get('why')}"
        lines.append(f"  {entry.get('capability'):<13} {told} [{entry.get('source')}]")
    return lines
