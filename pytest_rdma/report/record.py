"""One result record per check: what was tested, on which driver, and how it ended.

Records are plain JSON-able dicts (documented in docs/results-schema.md) because they travel
on `report.__dict__` from xdist workers to the controller, which serialises only plain data.

A check runs in three phases (setup, call, teardown); each phase report carries a *phase*
record, and the controller merges them (`merge`) into the check's record: the most severe
phase outcome wins, so a setup error is an error and a deviation stays a deviation even if
teardown also failed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from pytest_rdma.guard.findings import KERNEL_LOG_FIELD, LEAK_FIELD
from pytest_rdma.outcomes import CONFORMS, CRASH, DEVIATES, ERROR, TIMEOUT, UNSUPPORTED, WAIVED, Deviation

SCHEMA_VERSION = 1
REPORT_KEY = "rdma_result"  # the attribute on TestReport.__dict__ that carries a phase record

# Most severe first: the merged outcome of a check is the most severe of its phases.
SEVERITY = (CRASH, TIMEOUT, DEVIATES, ERROR, WAIVED, UNSUPPORTED, CONFORMS)
# Skip reasons the suite uses (generate.run_case, fixtures): "unsupported: ..." / "blocked: ...".
UNSUPPORTED_PREFIX = "unsupported:"
BLOCKED_PREFIX = "blocked:"
TIMEOUT_MARK = "from pytest-timeout"
CRASH_MARK = "crashed while running"
MESSAGE_LIMIT = 4000
# Guard findings: the report field the guards set at teardown -> the record field it becomes.
FINDING_FIELDS = {LEAK_FIELD: "leak", KERNEL_LOG_FIELD: "kernel_log"}


def severity(outcome: str) -> int:
    return SEVERITY.index(outcome) if outcome in SEVERITY else len(SEVERITY)


def case_of(item: pytest.Item) -> Any:
    callspec = getattr(item, "callspec", None)
    return callspec.params.get("rdma_case") if callspec is not None else None


def device_of(item: pytest.Item) -> str:
    callspec = getattr(item, "callspec", None)
    value = callspec.params.get("rdma_dut") if callspec is not None else None
    return value if isinstance(value, str) else ""


def is_rdma_item(item: pytest.Item) -> bool:
    """Checks of the suite and any test that uses a device get a record; other tests do not."""
    return (case_of(item) is not None or bool(device_of(item))
            or item.get_closest_marker("rdma_verb") is not None
            or "rdma_dut" in getattr(item, "fixturenames", ()))


def stable_id(item: pytest.Item) -> str:
    """The id a waiver names: test function and case, without file path or device.

    Device-independent so that one expectations file serves every device of a driver.
    """
    case = case_of(item)
    name = getattr(item, "originalname", None) or item.name.split("[", 1)[0]
    if case is not None:
        return f"{name}[{case.id}]"
    device = device_of(item)
    if "[" not in item.name or not device:
        return item.name
    params = item.name[len(name) + 1:-1]
    if params == device:
        params = ""
    elif params.startswith(device + "-"):
        params = params[len(device) + 1:]
    elif params.endswith("-" + device):
        params = params[: -len(device) - 1]
    return f"{name}[{params}]" if params else name


def claim_facts(verb_name: str, claim_id: str) -> dict[str, str]:
    """Page reference and paraphrase of a claim, from the catalogue (pure data)."""
    from pytest_rdma.verbs import CATALOGUE

    for verb in CATALOGUE:
        if verb.name == verb_name:
            for claim in verb.claims:
                if claim.id == claim_id:
                    return {"ref": f"{verb.man} {claim.section}".strip(), "says": claim.says}
            return {"ref": verb.man, "says": ""}
    return {"ref": "", "says": ""}


def claim_of_case_id(verb_name: str, case_id: str) -> str:
    """The claim a case id belongs to (case ids are "<claim>-<variant>")."""
    from pytest_rdma.verbs import CATALOGUE

    best = ""
    for verb in CATALOGUE:
        if verb.name == verb_name:
            for claim in verb.claims:
                if (case_id == claim.id or case_id.startswith(claim.id + "-")) and len(claim.id) > len(best):
                    best = claim.id
    return best


def unknown_identity(device: str) -> dict[str, str]:
    return {"name": device, "driver": "unknown"}


def identity_of_item(item: pytest.Item) -> dict[str, str] | None:
    """The device's identity: from the live `rdma_dut` fixture when set up, else from the system."""
    device = device_of(item)
    dut = getattr(item, "funcargs", {}).get("rdma_dut")
    identity = getattr(dut, "identity", None)
    if identity is not None:
        return dict(identity.as_dict())
    if not device:
        return None
    return identity_of_device(device)


def identity_of_device(device: str) -> dict[str, str]:
    try:
        from pytest_rdma.provider.describe import describe

        return dict(describe(device).as_dict())
    except Exception:  # noqa: BLE001 - a device that cannot be opened still gets a record
        return unknown_identity(device)


def item_info(item: pytest.Item) -> dict[str, Any]:
    """What a check is about; the same for each of its phases."""
    case = case_of(item)
    identity = identity_of_item(item)
    marker = item.get_closest_marker("rdma_verb")
    verb = case.verb if case is not None else (str(marker.args[0]) if marker and marker.args else "")
    claim = case.claim if case is not None else ""
    facts = claim_facts(verb, claim) if verb and claim else {"ref": "", "says": ""}
    return {
        "nodeid": item.nodeid,
        "stable_id": stable_id(item),
        "test": getattr(item, "originalname", None) or item.name,
        "device": device_of(item) or (identity or {}).get("name", ""),
        "driver": (identity or {}).get("driver", ""),
        "identity": identity,
        "verb": verb,
        "claim": claim,
        "claim_text": facts["says"],
        "ref": facts["ref"],
        "kind": case.kind if case is not None else "",
        "variant": case.variant if case is not None else "",
        "case_id": case.id if case is not None else "",
        "params": {str(k): repr(v) for k, v in (case.params.items() if case is not None else ())},
    }


def skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr or "")
    return text[len("Skipped: "):] if text.startswith("Skipped: ") else text


def pytest_outcome(report: pytest.TestReport) -> str:
    if hasattr(report, "wasxfail"):
        return "xfailed" if report.skipped else "xpassed" if report.passed else "failed"
    if report.failed and report.when != "call":
        return "error"
    return report.outcome


def classify(report: pytest.TestReport, exc: BaseException | None, waiver: Mapping[str, Any] | None,
             default_reproducer: str = "") -> dict[str, Any]:
    """The outcome of one phase, with the evidence for it."""
    phase: dict[str, Any] = {"when": report.when, "pytest_outcome": pytest_outcome(report),
                             "duration": round(float(getattr(report, "duration", 0.0) or 0.0), 6),
                             "reason": "", "expected": "", "observed": "", "details": {},
                             "reproducer": "", "message": "", "waiver": None, "blocked": False}
    # The guards' findings, whatever the outcome: in report mode they are all there is to see.
    phase.update({field: report.__dict__[name] for name, field in FINDING_FIELDS.items()
                  if report.__dict__.get(name)})
    text = report.longreprtext if report.failed else ""
    if report.passed:
        phase["outcome"] = CONFORMS
        if hasattr(report, "wasxfail") and waiver:
            phase["waiver"] = {**waiver, "status": "fixed"}
        return phase
    if report.skipped:
        if hasattr(report, "wasxfail"):
            phase["outcome"] = WAIVED
            phase["reason"] = report.wasxfail
            phase["waiver"] = {**waiver, "status": "applied"} if waiver else None
            _evidence(phase, exc, default_reproducer)
            return phase
        reason = skip_reason(report)
        phase["outcome"] = UNSUPPORTED
        phase["reason"] = reason
        phase["blocked"] = reason.startswith(BLOCKED_PREFIX)
        return phase
    phase["message"] = text[-MESSAGE_LIMIT:]
    if CRASH_MARK in text:
        phase["outcome"] = CRASH
        phase["reason"] = _first_line(None, text)
    elif TIMEOUT_MARK in text or (exc is not None and str(exc).startswith("Timeout")):
        phase["outcome"] = TIMEOUT
        phase["reason"] = _first_line(exc, text)
    elif exc is None and text.startswith("[XPASS(strict)]"):
        # A waived check that now conforms: the device is fine, the waiver is stale.
        phase["outcome"] = CONFORMS
        phase["waiver"] = {**waiver, "status": "fixed"} if waiver else None
    elif report.when != "call":
        phase["outcome"] = ERROR
        phase["reason"] = _first_line(exc, text)
    elif isinstance(exc, AssertionError):
        # A Deviation, or a plain assert in a hand-written device test: both say the device
        # did something other than what was promised.
        phase["outcome"] = DEVIATES
        _evidence(phase, exc, default_reproducer)
    else:
        phase["outcome"] = ERROR
        phase["reason"] = _first_line(exc, text)
    return phase


def _evidence(phase: dict[str, Any], exc: BaseException | None, default_reproducer: str) -> None:
    if isinstance(exc, Deviation):
        phase["expected"] = exc.expected
        phase["observed"] = exc.observed
        phase["details"] = {str(k): str(v) for k, v in exc.details.items()}
        phase["reproducer"] = exc.reproducer or default_reproducer
        phase["ref"] = exc.ref
    elif exc is not None:
        phase["observed"] = _first_line(exc, "")
        phase["reproducer"] = default_reproducer


def _first_line(exc: BaseException | None, text: str) -> str:
    if exc is not None:
        line = f"{type(exc).__name__}: {exc}".splitlines()[0]
        return line[:500]
    lines = [line for line in text.splitlines() if line.strip()]
    return (lines[-1] if lines else "")[:500]


def default_reproducer(nodeid: str, device: str) -> str:
    """Rerunning the one check is a reproducer when the check gave no script of its own."""
    dev = f" --rdma-dev {device}" if device else ""
    return f"python -m pytest -p no:xdist '{nodeid}'{dev}"


def merge(info: Mapping[str, Any], phases: list[Mapping[str, Any]], worker: str) -> dict[str, Any]:
    """The record of one check from its phase records."""
    decisive = min(phases, key=lambda phase: severity(phase["outcome"]))
    record: dict[str, Any] = dict(info)
    record.update({
        "outcome": decisive["outcome"],
        "pytest_outcome": _combined_pytest_outcome(phases),
        "when": decisive["when"],
        "reason": decisive.get("reason", ""),
        "blocked": bool(decisive.get("blocked")),
        "expected": decisive.get("expected", ""),
        "observed": decisive.get("observed", ""),
        "details": decisive.get("details", {}),
        "reproducer": decisive.get("reproducer", ""),
        "message": decisive.get("message", ""),
        "waiver": next((p["waiver"] for p in phases if p.get("waiver")), None),
        "duration": round(sum(float(p.get("duration", 0.0)) for p in phases), 6),
        "worker": worker,
    })
    for field in FINDING_FIELDS.values():
        record[field] = next((p[field] for p in phases if p.get(field)), None)
    if decisive.get("ref"):
        record["ref"] = decisive["ref"]
    return record


def _combined_pytest_outcome(phases: list[Mapping[str, Any]]) -> str:
    outcomes = [p["pytest_outcome"] for p in phases]
    for name in ("error", "failed", "xpassed", "xfailed", "skipped"):
        if name in outcomes:
            return name
    return "passed"


def parse_nodeid(nodeid: str, devices: list[str]) -> dict[str, Any]:
    """Best-effort record facts from a node id alone (a crashed worker sends nothing else)."""
    name = nodeid.rsplit("::", 1)[-1]
    test, _, params = name.partition("[")
    params = params[:-1] if params.endswith("]") else params
    device = ""
    for candidate in sorted(devices, key=len, reverse=True):
        if params == candidate or params.startswith(candidate + "-"):
            device, params = candidate, params[len(candidate) + 1:]
            break
    verb = test[len("test_"):] if test.startswith("test_") else ""
    claim = claim_of_case_id(verb, params) if verb else ""
    if not claim:
        verb = "" if not claim_facts(verb, "")["ref"] else verb
    facts = claim_facts(verb, claim) if claim else {"ref": "", "says": ""}
    return {
        "nodeid": nodeid, "stable_id": f"{test}[{params}]" if params else test, "test": test,
        "device": device, "driver": "", "identity": None, "verb": verb, "claim": claim,
        "claim_text": facts["says"], "ref": facts["ref"], "kind": "",
        "variant": params[len(claim) + 1:] if claim and params.startswith(claim + "-") else "",
        "case_id": params, "params": {},
    }
