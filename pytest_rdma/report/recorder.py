"""Where checks run (an xdist worker, or the only process): a phase record on every report.

The phase record goes on `report.__dict__[REPORT_KEY]` in an outermost makereport wrapper, so
it sees the final outcome (after pytest's xfail handling) and survives xdist's report
serialisation; the controller (results.py) reads it back. Waivers become pytest xfail marks
once the device's driver is known (after setup), so pytest itself reports them as xfail and,
in strict mode, a waived check that passes as a failure. A deviation's reproducers (C and
Python) are written here, from the check's recorded calls, and named in its record.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from typing import TYPE_CHECKING, TypeVar

import pytest

from pytest_rdma.expectations import Expectations, Waiver
from pytest_rdma.explore.execute import EXPLORE, EXPLORED
from pytest_rdma.guard.findings import KERNEL_LOG_SCANNED_KEY, WAIVED_FAULT_KEY
from pytest_rdma.outcomes import DEVIATES, UNSUPPORTED, WAIVED, Deviation
from pytest_rdma.provider.identity import DeviceIdentity, record_fields
from pytest_rdma.report import reproducers
from pytest_rdma.report.confirm_pair import confirm_run
from pytest_rdma.report.junit import finding_properties
from pytest_rdma.report.phase import case_of, classify, evidence, is_rdma_item, item_info
from pytest_rdma.report.profile import Requirements, failure_text
from pytest_rdma.report.record import REPORT_KEY, CheckInfo, Phase, PhaseReport, applied, mismatched, unneeded
from pytest_rdma.running import RUN
from pytest_rdma.settings import Settings
from pytest_rdma.user_claims import skipped_as

if TYPE_CHECKING:
    import pluggy

    from pytest_rdma.provider.device import DeviceUnderTest

INFO_KEY = pytest.StashKey[CheckInfo]()
NEXT_KEY = pytest.StashKey["pytest.Item | None"]()
WAIVER_KEY = pytest.StashKey[Waiver]()
FAULT_WAIVER_KEY = pytest.StashKey[Waiver]()  # a waiver of a kernel fault during the check (kernel_fault_phase)
# Identity facts recorded per test as JUnit properties (for pytest's own --junitxml).
JUNIT_IDENTITY_FIELDS = ("driver", "node_type", "transport", "firmware", "vendor_id", "vendor_part_id")
T = TypeVar("T")


def stashed(item: pytest.Item, key: pytest.StashKey[T]) -> T | None:
    """item.stash.get(key, None) for a key most items lack (a waiver; the info until the setup has made it):
    Stash.get raises and catches a KeyError for a missing key, several times per check."""
    stash = item.stash
    return stash[key] if key in stash else None


class Recorder:
    def __init__(self, settings: Settings, expectations: Expectations, requirements: Requirements) -> None:
        self.settings = settings
        self.expectations = expectations
        self.requirements = requirements

    @staticmethod
    def identity_dict(identity: object) -> dict[str, str]:
        """A device's identity as a record holds it: the session's device fixture gives every check of a device the
        same frozen DeviceIdentity, whose dict is made once (record_fields)."""
        if not isinstance(identity, DeviceIdentity):  # a test's stand-in, perhaps mutable: asked each time
            return identity.as_dict()  # type: ignore[attr-defined]
        return record_fields(identity)

    def info(self, item: pytest.Item) -> CheckInfo | None:
        info = stashed(item, INFO_KEY)
        if info is None and is_rdma_item(item):
            dut: DeviceUnderTest | None = getattr(item, "funcargs", {}).get("rdma_dut")  # the fixture's value
            found = getattr(dut, "identity", None) if dut is not None else None
            identity = self.identity_dict(found) if found is not None else None
            info = item_info(item, identity)
            if identity is not None:  # complete once the device is open
                item.stash[INFO_KEY] = info
        return info

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, object, None]:
        yield
        # After setup the device fixture is live, so its identity (and driver) is known.
        info = self.info(item)
        if info is None:
            return
        waiver = self.expectations.find(info) if info["driver"] else None
        if waiver is not None and waiver.waived_kernel_fault:
            # Not the check's own deviation: the kernel-log guard's finding of that kind, judged at teardown.
            item.stash[FAULT_WAIVER_KEY] = waiver
            item.stash[WAIVED_FAULT_KEY] = waiver.waived_kernel_fault
        elif waiver is not None:
            item.stash[WAIVER_KEY] = waiver
            # pytest's own xfail machinery does the rest: a Deviation is XFAIL; a pass is XPASS,
            # which strict turns into a failure. Only a Deviation is waived, never an error.
            item.add_marker(
                pytest.mark.xfail(
                    reason=f"waived: {waiver.reason}",
                    raises=Deviation,
                    # An intermittent deviation's absence is no news: strict fails a run for a stale waiver only.
                    strict=self.settings.strict and not waiver.intermittent,
                )
            )
        if self.settings.pytest_junit:
            item.user_properties.extend(junit_properties(info))

    def pytest_runtest_teardown(self, item: pytest.Item, nextitem: pytest.Item | None) -> None:
        item.stash[NEXT_KEY] = nextitem  # for the teardown's record (below)

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pluggy.Result[pytest.TestReport], None]:
        outcome = yield
        report: pytest.TestReport = outcome.get_result()
        info = self.info(item)
        if info is None:
            return
        exc = call.excinfo.value if call.excinfo is not None else None
        run = item.stash.get(RUN, None)
        waiver = stashed(item, WAIVER_KEY)
        phase = classify(report, exc, run, waiver.as_dict() if waiver else None)
        # A test of the user's own (no catalogue case): the plugin's word on why it skipped.
        own_test = run is None and case_of(item) is None
        own = skipped_as(item) if report.skipped and own_test and not hasattr(report, "wasxfail") else None
        if own is not None:  # a test of the user's own that the plugin knows why it skipped (user_claims.py)
            phase["outcome"] = own[0]
            phase["reason"] = own[1] or phase["reason"]
        if report.when == "call":
            if waiver is not None and isinstance(exc, Deviation) and not waiver.matches_observation(exc.observation):
                # The waiver records another observation: what is seen now is a new deviation.
                phase = _unwaive(report, phase, waiver, exc)
            if phase["outcome"] == UNSUPPORTED and run is not None and not run.blocked:
                failure = self.requirements.failure(
                    info.get("driver", ""), run.lacking, run.reason, info.get("capabilities", ())
                )
                if failure is not None:
                    # Unsupported it stays (the device's answer); the run fails for it, saying which and why.
                    report.outcome = "failed"
                    report.longrepr = failure_text(failure)
                    phase = {**phase, "pytest_outcome": "failed", "required": failure}
            phase.update(evidence(run, exc))
            # An exploration's finding (explore/items.py) has its sequence's reproducer whatever decides it: the
            # guards decide a leak or a kernel warning after the call phase, a crash or a hang ends it.
            finding = run is not None and run.case.kind == EXPLORE and run.case.claim != EXPLORED
            if (phase["outcome"] in (DEVIATES, WAIVED) or finding) and run is not None and case_of(item) is not None:
                try:
                    phase["reproducer"] = reproducers.write(self.settings, info, run, exc)
                except OSError as error:
                    # A full disk or a removed directory: the verdict stands; where results are written says so.
                    # Relative to the reproducers directory: no machine's path in a result (redact.py).
                    written = os.path.relpath(error.filename, self.settings.reproducers) if error.filename else "?"
                    phase["reproducer_error"] = f"cannot write {written} ({error.strerror or error})"
                if self.settings.confirm and "reproducer" in phase:
                    reproducer = phase["reproducer"]
                    reproducer["confirmed"] = confirm_run(run, self.settings.reproducers, reproducer)
        fault_waiver = stashed(item, FAULT_WAIVER_KEY)
        if fault_waiver is not None and report.when == "teardown" and item.stash.get(KERNEL_LOG_SCANNED_KEY, False):
            phase = kernel_fault_phase(phase, fault_waiver)
        if self.settings.pytest_junit and report.when == "teardown":
            # The guards' findings in pytest's own --junitxml too (the teardown report carries them).
            report.user_properties.extend((f"rdma.{key}", text) for key, text in finding_properties(phase))
        data: PhaseReport = {"phase": phase}
        if report.when == "setup" or not hasattr(item.config, "workerinput"):
            # An xdist worker sends what the check is about once, with its setup: the controller keeps it for the
            # check's other phases (results.py), and each report is serialised, sent and read back one fewer time.
            data["info"] = info
        upcoming = item.stash.get(NEXT_KEY, None) if report.when == "teardown" else None
        if upcoming is not None and hasattr(item.config, "workerinput") and is_rdma_item(upcoming):
            # A worker that dies in its next check's setup sends no record of it: the controller has this.
            data["next"] = item_info(upcoming, None)
        report.__dict__[REPORT_KEY] = data


def _unwaive(report: pytest.TestReport, phase: Phase, waiver: Waiver, exc: Deviation) -> Phase:
    """A waived check whose observation differs from the waiver's: a failure, saying both."""
    report.outcome = "failed"
    if hasattr(report, "wasxfail"):
        del report.wasxfail
    text = (
        f"waived {waiver.observed_text()}, observed {exc.observation.as_dict()} ({waiver.where}): the waiver holds "
        "only for what it records"
    )
    report.longrepr = f"{text}\n{exc}"
    return {
        **phase,
        "outcome": DEVIATES,
        "pytest_outcome": "failed",
        "waiver": mismatched(waiver.as_dict()),
        "reason": text,
    }


def kernel_fault_phase(phase: Phase, waiver: Waiver) -> Phase:
    """The teardown's phase of a check whose driver has a waiver of a kernel fault (pure): the guard's finding of
    exactly that kind is waived ("applied"); no finding, the fault is gone ("fixed", so the review calls the
    waiver stale; "unseen" for an intermittent waiver: record.unneeded); a finding of another kind failed the
    teardown already ("mismatch")."""
    kind = waiver.waived_kernel_fault
    finding = phase.get("kernel_log")
    if not finding:
        return {**phase, "waiver": unneeded(waiver.as_dict())}
    if set(finding["kinds"]) != {kind}:
        return {**phase, "waiver": mismatched(waiver.as_dict())}
    return {
        **phase,
        "outcome": WAIVED,
        "reason": f"waived: {waiver.reason}",
        "expected": "the check ends and the kernel logs no fault",
        "observed": finding["lines"][0] if finding["lines"] else kind,
        "observation": {"kernel_fault": kind},
        "waiver": applied(waiver.as_dict()),
    }


def junit_properties(info: CheckInfo) -> list[tuple[str, str]]:
    identity = info.get("identity") or {}
    props = [("rdma.device", info["device"])]
    props += [(f"rdma.{key}", str(identity[key])) for key in JUNIT_IDENTITY_FIELDS if key in identity]
    props += [(f"rdma.{key}", info[key]) for key in ("verb", "claim", "case_id", "ref") if info.get(key)]
    return props
