"""One result record per check: what was tested, on which driver, how it ended, and the evidence.

Records are plain JSON-able dicts (docs/results-schema.md) because they travel on
`report.__dict__` from xdist workers to the controller, which serialises only plain data.
What a check is about comes from its frozen Case; how it ended from the run's verdict (kept
on the item, see pytest_rdma/running.py) and pytest's report; nothing is parsed back from an
id or a message.

A check runs in three phases (setup, call, teardown); each phase report carries a phase
record, and the controller merges them (`merge`): the most severe phase outcome wins.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, TypedDict, cast

import pytest

from pytest_rdma import capabilities
from pytest_rdma.calls.invoke import decided_above
from pytest_rdma.calls.render import step_line
from pytest_rdma.cases import Case
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
    CheckTimeout,
    Deviation,
)
from pytest_rdma.report.confirm import Confirmation
from pytest_rdma.report.redact import redact
from pytest_rdma.running import Run
from pytest_rdma.shapes import Json, JsonObject
from pytest_rdma.user_claims import claim_of

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
    status: str  # in a record: applied, fixed or mismatch
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


class Reproducer(TypedDict, total=False):
    """A deviation's reproducer files (paths relative to `dir`), the C text and, confirmed, its verdict."""

    dir: str
    c: str
    python: str
    decisive_call: int | None
    c_text: str
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


def severity(outcome: str) -> int:
    return SEVERITY.index(outcome) if outcome in SEVERITY else len(SEVERITY)


def case_of(item: pytest.Item) -> Case | None:
    callspec = getattr(item, "callspec", None)
    value = callspec.params.get("rdma_case") if callspec is not None else None
    return value if isinstance(value, Case) else None


def device_of(item: pytest.Item) -> str:
    callspec = getattr(item, "callspec", None)
    value = callspec.params.get("rdma_dut") if callspec is not None else None
    return value if isinstance(value, str) else ""


def is_rdma_item(item: pytest.Item) -> bool:
    """Checks of the suite and any test that uses a device get a record; other tests do not."""
    return case_of(item) is not None or bool(device_of(item)) or "rdma_dut" in getattr(item, "fixturenames", ())


def case_facts(case: Case) -> CaseFacts:
    """What a record says about the check itself: the same for every device and phase."""
    return {
        "stable_id": case.stable_id,
        "test": f"test_{case.verb}",
        "verb": case.verb,
        "claim": case.claim,
        "claim_text": case.says,
        "title": case.title,
        "ref": case.ref,
        "sources": [{"kind": s.kind, "ref": s.ref, "section": s.section} for s in case.sources],
        "transports": list(case.transports),
        "layer": case.layer,
        "kind": case.kind,
        "variant": case.variant,
        "case_id": case.id,
        "params": dict(case.axes),
        "family": case.family,
        "capabilities": list(capabilities.of_spec(case.spec)),
    }


def item_info(item: pytest.Item, identity: Mapping[str, str] | None) -> CheckInfo:
    """What a check is about, for every phase record."""
    case = case_of(item)
    device = device_of(item) or (identity or {}).get("name", "")
    info: CheckInfo = {
        "nodeid": item.nodeid,
        "device": device,
        "driver": (identity or {}).get("driver", ""),
        "identity": dict(identity) if identity else None,
    }
    if case is not None:
        info.update(case_facts(case))
    else:
        info.update(own_test_facts(item, device))
    return info


def own_test_facts(item: pytest.Item, device: str) -> CaseFacts:
    """A user's own test: named by its function and parameters (without the device); with an
    rdma_claim marker, the claim it checks (user_claims.py)."""
    name = getattr(item, "originalname", None) or item.name
    callspec = getattr(item, "callspec", None)
    params = {key: str(value) for key, value in (callspec.params if callspec else {}).items() if key != "rdma_dut"}
    variant = "-".join(part for part in (callspec.id.split("-") if callspec else []) if part and part != device)
    claim = claim_of(item)
    return {
        "stable_id": f"{name}[{variant}]" if variant else name,
        "test": name,
        "verb": claim.verb if claim else "",
        "claim": name if claim else "",
        "claim_text": claim.says if claim else "",
        "title": claim.says or name if claim else name,
        "ref": claim.ref if claim else "",
        "sources": [{"kind": "man", "ref": claim.page, "section": claim.section}] if claim else [],
        "transports": [],
        "layer": "provider" if claim else "",
        "kind": "own test" if claim else "",
        "variant": variant,
        "case_id": f"{name}-{variant}" if variant else name,
        "params": params,
        "family": "ibv" if claim else "",
        "capabilities": [],  # a marker's `needs` is an attribute, not a capability name (capabilities.py)
    }


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
    # cast: the guards set these report fields to a Leak and a KernelLogFinding (guard/findings.py).
    phase.update(
        cast(
            Phase, {field: report.__dict__[name] for name, field in FINDING_FIELDS.items() if report.__dict__.get(name)}
        )
    )
    return phase


def classify(
    report: pytest.TestReport, exc: BaseException | None, run: Run | None, waiver: WaiverRecord | None
) -> Phase:
    """The outcome of one phase, with the evidence for it; its texts name no path of this machine."""
    phase = _classify(report, exc, run, waiver)
    for key in ("reason", "observed", "message"):
        phase[key] = redact(phase[key])
    return phase


def _classify(
    report: pytest.TestReport, exc: BaseException | None, run: Run | None, waiver: WaiverRecord | None
) -> Phase:
    phase = blank_phase(report)
    if report.passed:
        phase["outcome"] = CONFORMS
        if waiver and report.when == "call":  # a setup or teardown that passed says nothing of the waiver
            phase["waiver"] = {**waiver, "status": "fixed"}
        return phase
    if report.skipped:
        if hasattr(report, "wasxfail"):
            phase["outcome"] = WAIVED
            phase["reason"] = report.wasxfail
            phase["waiver"] = {**waiver, "status": "applied"} if waiver else None
            _deviation(phase, exc)
            return phase
        if run is not None and run.skipped_as:
            phase["outcome"] = run.skipped_as
            phase["reason"] = run.reason
            phase["blocked"] = run.blocked
        else:  # a user's own test that skipped
            phase["outcome"] = UNSUPPORTED
            phase["reason"] = str(report.longrepr[2]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
        return phase
    text = report.longreprtext
    phase["message"] = text[-MESSAGE_LIMIT:]
    if CRASH_MARK in text:
        phase["outcome"] = CRASH
        phase["reason"] = _last_line(text)
    elif isinstance(exc, CheckTimeout) or (
        exc is not None and type(exc).__name__ == "Failed" and str(exc).startswith(TIMEOUT_MARK)
    ):
        phase["outcome"] = TIMEOUT
        phase["reason"] = _first_line(exc)
    elif exc is None and text.startswith("[XPASS(strict)]"):
        # A waived check that now conforms: the device is fine, the waiver is stale.
        phase["outcome"] = CONFORMS
        phase["waiver"] = {**waiver, "status": "fixed"} if waiver else None
    elif report.when != "call":
        phase["outcome"] = ERROR
        phase["reason"] = _first_line(exc) if exc is not None else _last_line(text)
    elif isinstance(exc, AssertionError):
        # A Deviation, or a plain assert in a hand-written device test: both say the device did
        # something other than what was promised.
        phase["outcome"] = DEVIATES
        _deviation(phase, exc)
    else:
        phase["outcome"] = ERROR
        phase["reason"] = _first_line(exc) if exc is not None else _last_line(text)
    return phase


def _deviation(phase: Phase, exc: BaseException | None) -> None:
    if isinstance(exc, Deviation):
        phase["expected"] = exc.expected
        phase["observed"] = exc.observed
        phase["observation"] = {str(k): _plain(v) for k, v in exc.observation.as_dict().items()}
        phase["details"] = {str(k): str(v) for k, v in exc.details.items()}
        phase["decisive_call"] = exc.call
        if exc.ref:
            phase["deviation_ref"] = exc.ref
    elif exc is not None:
        phase["observed"] = _first_line(exc)


def _plain(value: object) -> Json:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


def evidence(run: Run | None, exc: BaseException | None) -> Evidence:
    """The calls the check made, as step lines (in the order made), where they answered, and who decided.

    The layer that decided is the case's (where the claim is known to be decided above the
    provider), unless the decisive call ran libibverbs' own code for a provider op: then
    libibverbs decided, whatever the claim expected.
    """
    if run is None:
        return {}
    index = exc.call if isinstance(exc, Deviation) else None
    own = [call for call in run.calls if call.phase == "call"]
    decisive = run.calls[index] if index is not None and 0 <= index < len(run.calls) else (own[-1] if own else None)
    decided_by = (decided_above(decisive) if decisive is not None else "") or run.case.layer
    found: Evidence = {
        "steps": [f"[{call.index}] {call.phase}: {step_line(call)}" for call in run.calls],
        "routes": sorted({f"{c.route} ({c.owner})" if c.owner else c.route for c in own if c.route}),
        "decided_by": decided_by,
        "teardown_failures": [step_line(call) for call in run.teardown_failures],
    }
    if run.peer:
        found["peer"] = run.peer
    if run.ends:
        found["ends"] = run.ends
    return found


def _first_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".splitlines()[0][:500]


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return (lines[-1] if lines else "")[:500]


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
    record["worker"] = worker
    for name in (
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
    ):
        # Call 0 is a decisive call like any other: only absence (or an empty list) is no evidence.
        found = next((p[name] for p in phases if p.get(name) or p.get(name) == 0), None)
        if found is not None:
            record[name] = found
    for field in FINDING_FIELDS.values():
        record[field] = next((p[field] for p in phases if p.get(field)), None)
    return record


def _combined_pytest_outcome(phases: list[Phase]) -> str:
    outcomes = [p["pytest_outcome"] for p in phases]
    for name in ("error", "failed", "xpassed", "xfailed", "skipped"):
        if name in outcomes:
            return name
    return "passed"
