"""One result record per check: what was tested, on which driver, how it ended, and the evidence.

Records are plain JSON-able dicts (docs/results-schema.md) because they travel on
`report.__dict__` from xdist workers to the controller, which serialises only plain data.
What a check is about comes from its frozen Case; how it ended from the run's verdict (kept
on the item, see pytest_rdma/running.py) and pytest's report; nothing is parsed back from an
id or a message. Those are read where the check ran (phase.py); this module is the records'
shapes and what the controller does with them, so it imports no case, run, call or kind.

A check runs in three phases (setup, call, teardown); each phase report carries a phase
record, and the controller merges them (`merge`): the most severe phase outcome wins.
"""

from __future__ import annotations

from typing import Literal, TypedDict

import pytest

from pytest_rdma.guard.findings import KERNEL_LOG_FIELD, LEAK_FIELD, KernelLogFinding, Leak
from pytest_rdma.outcomes import (
    CONFORMS,
    CRASH,
    DEVIATES,
    ERROR,
    NOT_EXERCISED,
    TIMEOUT,
    UNSUPPORTED,
    WAIVED,
)
from pytest_rdma.report.confirm import Confirmation
from pytest_rdma.report.redact import redact
from pytest_rdma.shapes import JsonObject

SCHEMA_VERSION = 2
REPORT_KEY = "rdma_result"  # the attribute on TestReport.__dict__ that carries a phase record

# Most severe first: the merged outcome of a check is the most severe of its phases.
SEVERITY = (CRASH, TIMEOUT, DEVIATES, ERROR, WAIVED, NOT_EXERCISED, UNSUPPORTED, CONFORMS)
TIMEOUT_MARK = "Timeout"  # pytest-timeout's failure starts with it
CRASH_MARK = "crashed while running"  # xdist's text for a worker that died during a check
MESSAGE_LIMIT = 4000
# Guard findings: the report field the guards set at teardown -> the record field it becomes.
FINDING_FIELDS: dict[str, Literal["leak", "kernel_log"]] = {LEAK_FIELD: "leak", KERNEL_LOG_FIELD: "kernel_log"}

# The record's parts, as docs/results-schema.md gives them. Every part may lack keys: a record read
# back from a results file, or one rebuilt for a crashed check, has only what was known.

# A device's identity (schema: Identity): field -> text.
Identity = dict[str, str]


class WaiverRecord(TypedDict, total=False):
    """A waiver as records and the results' `waivers` hold it (Waiver.as_dict), with its status or why."""

    pattern: str
    reason: str
    link: str
    observed: dict[str, object]
    file: str
    line: int
    scopes: dict[str, str]
    intermittent: bool  # seen in some runs only (expectations.py): a conforming run leaves it "unseen"
    status: str  # in a record: applied, fixed, unseen (an intermittent one's check conformed) or mismatch
    why: str  # in the results' stale and refused lists


class RequiredFailure(TypedDict):
    """On a record: the required capability whose lack made the check unsupported, and so failing."""

    capability: str
    source: str  # where it was required: "command line --rdma-require", "siw.toml:4"
    advertised: str  # the attribute and its value: "attr.max_srq = 0"


class Source(TypedDict):
    """One source a claim cites."""

    kind: str
    ref: str
    section: str


class PairFiles(TypedDict):
    """A two-host check's reproducer: the receiving and the sending side's programs and the command of each."""

    receiver: str  # the file, relative to the reproducers directory
    sender: str
    commands: dict[str, str]  # "receiver" (run on the peer's host first), "sender" (on the device's)


class Reproducer(TypedDict, total=False):
    """A deviation's reproducer files (paths relative to `dir`), the C text and, confirmed, its verdict."""

    dir: str
    c: str
    python: str
    decisive_call: int | None
    c_text: str
    pair: PairFiles
    confirmed: Confirmation


class CaseFacts(TypedDict, total=False):
    """What a record says about the check itself: the same for every device and phase."""

    stable_id: str
    test: str
    verb: str
    claim: str
    claim_text: str
    title: str
    ref: str
    sources: list[Source]
    transports: list[str]
    layer: str
    kind: str
    variant: str
    case_id: str
    params: dict[str, str]
    family: str
    capabilities: list[str]  # the vocabulary's names this check needs (pytest_rdma.capabilities)


class CheckInfo(CaseFacts, total=False):
    """What a check is about, on every phase record: the case's facts and the device it ran on."""

    nodeid: str
    device: str
    driver: str
    identity: Identity | None


class Evidence(TypedDict, total=False):
    """The calls a check made, where they answered, and who decided (see `evidence`)."""

    steps: list[str]
    routes: list[str]
    decided_by: str
    teardown_failures: list[str]
    peer: str  # a two-device check's second device (--rdma-peer)
    ends: dict[str, dict[str, str]]  # its two ends ("dut", "peer"): host, device, driver, kernel, rdma_core


class Phase(Evidence, total=False):
    """How one phase (setup, call, teardown) ended, with the evidence for it."""

    when: str
    pytest_outcome: str
    outcome: str
    duration: float
    stop: float  # when the phase ended (seconds since the epoch): Allure's timeline, written after the run
    reason: str
    expected: str
    observed: str
    observation: JsonObject
    details: dict[str, str]
    message: str
    waiver: WaiverRecord | None
    blocked: bool
    decisive_call: int | None
    deviation_ref: str
    reproducer: Reproducer
    reproducer_error: str  # the reproducers could not be written (a full disk): the path and the error
    rerun: str
    leak: Leak | None
    kernel_log: KernelLogFinding | None
    required: RequiredFailure  # unsupported for the lack of a required capability: the check fails


class Record(CheckInfo, Phase, total=False):
    """One check's record (`results[]` of the results file): its phases merged."""

    worker: str


class PhaseReport(TypedDict, total=False):
    """What a phase report carries on `report.__dict__[REPORT_KEY]` (recorder.py) to results.py."""

    info: CheckInfo
    phase: Phase
    # Under xdist, on a teardown: what the worker's next check is, so that the controller can write that
    # check's record if it kills its worker before its setup is reported (results.py).
    next: CheckInfo


# A waiver's status in a record, said in one place: applied, mismatch, and fixed or unseen (unneeded).
def applied(waiver: WaiverRecord) -> WaiverRecord:
    """A waiver that held: its check deviated, faulted or crashed as it records."""
    return {**waiver, "status": "applied"}


def mismatched(waiver: WaiverRecord) -> WaiverRecord:
    """A waiver whose check deviated or faulted otherwise than it records: nothing was waived."""
    return {**waiver, "status": "mismatch"}


def unneeded(waiver: WaiverRecord) -> WaiverRecord:
    """A waiver whose check conformed: "fixed" (remove it), or "unseen" for one recorded as intermittent,
    which a run without its deviation does not make stale (expectations.py)."""
    return {**waiver, "status": "unseen" if waiver.get("intermittent") else "fixed"}


def severity(outcome: str) -> int:
    return SEVERITY.index(outcome) if outcome in SEVERITY else len(SEVERITY)


def pytest_outcome(report: pytest.TestReport) -> str:
    if hasattr(report, "wasxfail"):
        return "xfailed" if report.skipped else "xpassed" if report.passed else "failed"
    if report.failed and report.when != "call":
        return "error"
    return report.outcome


def blank_phase(report: pytest.TestReport) -> Phase:
    phase: Phase = {
        "when": report.when,
        "pytest_outcome": pytest_outcome(report),
        "duration": round(float(getattr(report, "duration", 0.0) or 0.0), 6),
        "stop": round(float(getattr(report, "stop", 0.0) or 0.0), 3),
        "reason": "",
        "expected": "",
        "observed": "",
        "observation": {},
        "details": {},
        "message": "",
        "waiver": None,
        "blocked": False,
    }
    # The guards' findings, whatever the outcome: in report mode they are all there is to see.
    # Set one by one, not through a dict made per phase: most phases have none.
    fields = report.__dict__
    for name, field in FINDING_FIELDS.items():
        found = fields.get(name)
        if found:
            phase[field] = found  # the guards set these to a Leak and a KernelLogFinding (guard/findings.py)
    return phase


def last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return (lines[-1] if lines else "")[:500]


def crash_phase(report: pytest.TestReport) -> Phase:
    """The phase an xdist worker died in: its report, the controller's, carries no phase record of the
    worker's, only xdist's words, whose last line says which worker and what signal."""
    phase = blank_phase(report)
    text = report.longreprtext
    phase["outcome"] = CRASH
    phase["message"] = redact(text[-MESSAGE_LIMIT:])
    phase["reason"] = redact(last_line(text))
    return phase


def crash_waived(reason: str, waiver: WaiverRecord) -> Phase:
    """What a waiver of a crash (observed = { crash = true }) makes of a check whose process died (pure): the xdist
    worker's, judged where results are written (results.py), and the lab's record of one (report/resume.py)."""
    return {
        "outcome": WAIVED,
        "waiver": applied(waiver),
        "observed": f"the check's process died: {reason}",
        "observation": {"crash": True},  # Crashed().as_dict(), as JSON
    }


# The evidence a record takes from the first phase that has it (merge).
EVIDENCE_FIELDS = (
    "steps",
    "routes",
    "decided_by",
    "teardown_failures",
    "peer",
    "ends",
    "reproducer",
    "reproducer_error",
    "deviation_ref",
    "decisive_call",
    "rerun",
    "required",
)


def merge(info: CheckInfo, phases: list[Phase], worker: str) -> Record:
    """The record of one check from its phase records."""
    decisive = min(phases, key=lambda phase: severity(phase["outcome"]))
    record: Record = {**info}
    for key in ("outcome", "when", "reason", "expected", "observed", "observation", "details", "message"):
        # The default is the field's own type: "" for a text, {} for observation and details.
        record[key] = decisive.get(key, "" if key not in ("observation", "details") else {})  # type: ignore[typeddict-item]
    record["blocked"] = bool(decisive.get("blocked"))
    record["pytest_outcome"] = _combined_pytest_outcome(phases)
    # The decisive phase's waiver first: a setup that passed says "fixed", the call that deviated "applied".
    record["waiver"] = decisive.get("waiver") or next((p["waiver"] for p in phases if p.get("waiver")), None)
    record["duration"] = round(sum(float(p.get("duration", 0.0)) for p in phases), 6)
    stops = [float(p["stop"]) for p in phases if p.get("stop")]
    if stops:
        record["stop"] = max(stops)
    record["worker"] = worker
    # Plain loops, not a next() over a generator per field: this runs for every check, and the generators
    # (fourteen per record) were most of its time.
    for name in EVIDENCE_FIELDS:
        for phase in phases:
            found = phase.get(name)
            # Call 0 is a decisive call like any other: only absence (or an empty list) is no evidence.
            if found or found == 0:
                record[name] = found  # type: ignore[literal-required]
                break
    for field in FINDING_FIELDS.values():
        record[field] = None
        for phase in phases:
            if phase.get(field):
                record[field] = phase[field]
                break
    return record


def _combined_pytest_outcome(phases: list[Phase]) -> str:
    outcomes = [p["pytest_outcome"] for p in phases]
    for name in ("error", "failed", "xpassed", "xfailed", "skipped"):
        if name in outcomes:
            return name
    return "passed"
