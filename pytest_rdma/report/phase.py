"""A check's phase record, made where the check ran (an xdist worker, or the only process).

From the pytest item (its Case, its device), the run's verdict and evidence (running.Run, its recorded
calls) and pytest's report, the recorder (recorder.py) makes each phase's record; the record travels on
the report to wherever results are written (results.py), which needs none of these and merges the
phases with record.py alone. So this is the one module of the records that knows cases, runs and calls.
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from pytest_rdma import capabilities
from pytest_rdma.calls.invoke import decided_above
from pytest_rdma.calls.render import step_line
from pytest_rdma.cases import Case
from pytest_rdma.outcomes import CONFORMS, CRASH, DEVIATES, ERROR, TIMEOUT, UNSUPPORTED, WAIVED, CheckTimeout, Deviation
from pytest_rdma.report.record import (
    CRASH_MARK,
    MESSAGE_LIMIT,
    TIMEOUT_MARK,
    CaseFacts,
    CheckInfo,
    Evidence,
    Phase,
    WaiverRecord,
    applied,
    blank_phase,
    last_line,
    unneeded,
)
from pytest_rdma.report.redact import redact
from pytest_rdma.running import Run
from pytest_rdma.shapes import Json
from pytest_rdma.user_claims import claim_of


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


# An item's case facts, made once: see facts_of.
CASE_FACTS_KEY = pytest.StashKey[CaseFacts]()


def facts_of(item: pytest.Item, case: Case) -> CaseFacts:
    """case_facts(case), made once per item: a check's own setup asks (recorder.py), and so does, before it, an
    xdist worker's announcement of it as its next check and the lab's running file (resume.py); each was a
    walk of the case's spec and a dozen texts, per ask. Read only: item_info copies it into each CheckInfo."""
    stash = item.stash
    if CASE_FACTS_KEY in stash:  # not stash.get: a missing key there costs a KeyError raised and caught
        return stash[CASE_FACTS_KEY]
    facts = stash[CASE_FACTS_KEY] = case_facts(case)
    return facts


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
        info.update(facts_of(item, case))
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
            phase["waiver"] = unneeded(waiver)
        return phase
    if report.skipped:
        if hasattr(report, "wasxfail"):
            phase["outcome"] = WAIVED
            phase["reason"] = report.wasxfail
            phase["waiver"] = applied(waiver) if waiver else None
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
        phase["reason"] = last_line(text)
    elif isinstance(exc, CheckTimeout) or (
        exc is not None and type(exc).__name__ == "Failed" and str(exc).startswith(TIMEOUT_MARK)
    ):
        phase["outcome"] = TIMEOUT
        phase["reason"] = _first_line(exc)
    elif exc is None and text.startswith("[XPASS(strict)]"):
        # A waived check that now conforms: the device is fine, the waiver is stale.
        phase["outcome"] = CONFORMS
        phase["waiver"] = unneeded(waiver) if waiver else None
    elif report.when != "call":
        phase["outcome"] = ERROR
        phase["reason"] = _first_line(exc) if exc is not None else last_line(text)
    elif isinstance(exc, AssertionError):
        # A Deviation, or a plain assert in a hand-written device test: both say the device did
        # something other than what was promised.
        phase["outcome"] = DEVIATES
        _deviation(phase, exc)
    else:
        phase["outcome"] = ERROR
        phase["reason"] = _first_line(exc) if exc is not None else last_line(text)
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
