"""Where a check runs (an xdist worker, or the only process): attach a record to each report.

The phase record goes on `report.__dict__[REPORT_KEY]` in an outermost makereport wrapper, so
it sees the final outcome (after pytest's xfail handling) and survives xdist's report
serialisation; the controller (results.py) reads it back. Waivers become pytest xfail marks
once the device's driver is known (after setup), so pytest itself reports them as xfail and,
in strict mode, a waived check that passes as a failure.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from pytest_rdma.expectations import Expectations, Waiver
from pytest_rdma.outcomes import DEVIATES, WAIVED, Deviation
from pytest_rdma.report import allure_labels
from pytest_rdma.report.options import Settings
from pytest_rdma.report.record import REPORT_KEY, classify, default_reproducer, is_rdma_item, item_info

INFO_KEY = pytest.StashKey[dict]()
WAIVER_KEY = pytest.StashKey[Waiver]()
# Identity facts recorded per test in JUnit XML (testsuite-level ones are in junit.py).
JUNIT_IDENTITY_FIELDS = ("driver", "node_type", "transport", "firmware", "vendor_id", "vendor_part_id")


class Recorder:
    def __init__(self, settings: Settings, expectations: Expectations) -> None:
        self.settings = settings
        self.expectations = expectations

    def info(self, item: pytest.Item) -> dict[str, Any] | None:
        info = item.stash.get(INFO_KEY, None)
        if info is None and is_rdma_item(item):
            info = item.stash[INFO_KEY] = item_info(item)
        return info

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, Any, None]:
        yield
        # After setup the device fixture is live, so its identity (and driver) is known.
        info = self.info(item)
        if info is None:
            return
        waiver = self.expectations.find(info["driver"], info["stable_id"]) if info["driver"] else None
        if waiver is not None:
            item.stash[WAIVER_KEY] = waiver
            # pytest's own xfail machinery does the rest: a Deviation is XFAIL; a pass is XPASS,
            # which strict turns into a failure. Only a Deviation is waived, never an error.
            item.add_marker(pytest.mark.xfail(reason=waiver_reason(waiver), raises=Deviation,
                                              strict=self.settings.strict))
        if self.settings.junit:
            item.user_properties.extend(junit_properties(info))
        if self.settings.allure_dir is not None:
            allure_labels.label_test(info)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, Any, None]:
        info = item.stash.get(INFO_KEY, None)
        if info is None or self.settings.allure_dir is None:
            yield
            return
        step = allure_labels.CheckStep(info)
        outcome = yield
        step.finish(outcome.excinfo[1] if outcome.excinfo else None)

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_makereport(self, item: pytest.Item,
                                  call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
        outcome = yield
        report: pytest.TestReport = outcome.get_result()
        info = self.info(item)
        if info is None:
            return
        exc = call.excinfo.value if call.excinfo is not None else None
        waiver = item.stash.get(WAIVER_KEY, None)
        phase = classify(report, exc, waiver.as_dict() if waiver else None,
                         default_reproducer(item.nodeid, info["device"]))
        if phase["waiver"] and phase["waiver"]["status"] == "fixed" and report.failed:
            report.longrepr = fixed_message(waiver, info)
        if phase["outcome"] in (DEVIATES, WAIVED) and phase["reproducer"]:
            _print_with_failure(report, "rdma reproducer", phase["reproducer"])
        report.__dict__[REPORT_KEY] = {"info": info, "phase": phase}


def waiver_reason(waiver: Waiver) -> str:
    return f"waived: {waiver.reason} [{waiver.link}] ({waiver.where})"


def fixed_message(waiver: Waiver | None, info: dict[str, Any]) -> str:
    where = f" at {waiver.where}" if waiver else ""
    pattern = f" {waiver.pattern!r}" if waiver else ""
    return (f"fixed: remove the waiver{pattern}{where}: {info['stable_id']} now conforms on "
            f"{info['device']} (driver {info['driver']})")


def junit_properties(info: dict[str, Any]) -> list[tuple[str, str]]:
    identity = info.get("identity") or {}
    props = [("rdma.device", info["device"])]
    props += [(f"rdma.{key}", str(identity[key])) for key in JUNIT_IDENTITY_FIELDS if key in identity]
    props += [(f"rdma.{key}", info[key]) for key in ("verb", "claim", "case_id", "ref") if info.get(key)]
    return props


def _print_with_failure(report: pytest.TestReport, title: str, text: str) -> None:
    # Inside the failure's own representation, so it is printed with it (and travels with it
    # under xdist, and lands in JUnit's failure text), whatever --show-capture says.
    longrepr = report.longrepr
    if hasattr(longrepr, "addsection"):
        longrepr.addsection(title, text)
    else:
        report.sections.append((title, text))
