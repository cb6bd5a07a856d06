"""JUnit XML: the drivers under test as testsuite properties, and what only the controller knows.

Per-test properties (driver, verb, claim, ...) are added where the check runs (recorder.py).
Two kinds of per-test facts exist only where results are written, and are added here:
- a crashed check: xdist makes its report in the controller, so no worker set its properties;
  they come from the check's record, rebuilt from its node id and the session's device facts
  (the same for a check whose teardown Ctrl-C cut short: junitxml copies properties at teardown);
- guard findings (a leak, a kernel fault): they arrive on the teardown report (guard/summary.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_rdma.guard.findings import KERNEL_LOG_FIELD, LEAK_FIELD, leak_text
from pytest_rdma.report.results import Results


def _log_xml(config: pytest.Config) -> Any:
    try:
        from _pytest.junitxml import xml_key
    except ImportError:  # pragma: no cover - pytest moved it; the worker-side properties remain
        return None
    return config.stash.get(xml_key, None)


def finding_properties(report: pytest.TestReport) -> list[tuple[str, str]]:
    """JUnit properties for what the guards attached to a teardown report."""
    props: list[tuple[str, str]] = []
    leak = report.__dict__.get(LEAK_FIELD)
    if leak:
        props.append(("rdma.leak", leak_text(leak)))
    kernel = report.__dict__.get(KERNEL_LOG_FIELD)
    if kernel:
        origin = " (written from user space)" if kernel.get("from_user_space") else ""
        # Every line: a kernel WARNING's own message (with what identifies it) follows the WARNING line.
        props.append(("rdma.kernel_log", f"{'/'.join(kernel['kinds'])}{origin}: {'; '.join(kernel['lines'])}"))
    return props


def _drop_unnamed_testcases(xml: Any) -> None:
    """A check cut short (Ctrl-C) after a passing setup has no outcome, but junitxml opened a testcase
    for it (to count its setup's time) and would write it with no name and no result. Dropped:
    the file then holds the finished checks, as pytest's counts and the JSON results do."""
    ordered = getattr(xml, "node_reporters_ordered", None)
    if ordered is not None:
        ordered[:] = [reporter for reporter in ordered if "name" in getattr(reporter, "attrs", {"name": ""})]


class JunitProperties:
    def __init__(self, results: Results) -> None:
        self.results = results

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        # junitxml writes its file only at the end: a run killed before it would leave an earlier
        # run's file in place, to be read as this one's. No file is the honest state until then.
        xml = _log_xml(session.config)
        if xml is not None:
            Path(xml.logfile).unlink(missing_ok=True)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # Before junitxml, which copies a teardown report's user_properties into the testcase.
        if report.when == "teardown":
            found = finding_properties(report)
            if found:
                # A new list: in a serial run this one is the item's own.
                report.user_properties = [*report.user_properties, *found]

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        # Before junitxml's own sessionfinish, which writes the file.
        xml = _log_xml(session.config)
        if xml is None:
            return
        self._unclosed_checks(xml)
        _drop_unnamed_testcases(xml)
        for device, identity in sorted(self.results.identities.items()):
            for key, value in identity.items():
                if key != "name":
                    xml.add_global_property(f"rdma.{device}.{key}", str(value))
        drivers = sorted({identity.get("driver", "") for identity in self.results.identities.values()})
        xml.add_global_property("rdma.drivers", ",".join(d for d in drivers if d))

    def _unclosed_checks(self, xml: Any) -> None:
        """The per-test properties of finished checks that never reached teardown, from their records.

        junitxml copies a check's properties at its teardown report and keeps the testcase open
        until then. Two kinds of finished check have none: a crashed one (see the module
        docstring) and one whose teardown Ctrl-C cut short (its outcome was reported).
        """
        from pytest_rdma.report.recorder import junit_properties

        self.results.finish_pending()  # idempotent; both sessionfinish hooks are tryfirst, in no set order
        finished = {record["nodeid"]: record for record in self.results.records}
        for (nodeid, _worker), reporter in list(xml.node_reporters.items()):
            record = finished.get(str(nodeid))  # pytest 9 keys them by a NodeId, printed as the node id
            if record is None or any(name == "rdma.device" for name, _ in reporter.properties):
                continue
            for name, value in junit_properties(record):
                reporter.add_property(name, value)
