"""JUnit XML for CI dashboards (Jenkins, GitLab), written from the records: --rdma-junit PATH.

One <testsuite> per device, named "<device> (<driver>)", with the device's identity as
properties; one <testcase> per check with classname "<driver>.<verb>" (dashboards group by
it: driver, then verb) and name "<claim>[<variant>]"; a deviation, crash, timeout or error is a
<failure> or <error> with the observation; waived, unsupported and not exercised checks are
<skipped> with the reason; properties per testcase give driver, claim, outcome, source, the
reproducer's path and the guards' findings. The file is written once, at the end, to a
temporary name and renamed.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_rdma.guard.findings import leak_text
from pytest_rdma.outcomes import CRASH, DEVIATES, ERROR, NOT_EXERCISED, TIMEOUT, UNSUPPORTED, WAIVED
from pytest_rdma.report.results import Results

FAILURE = (DEVIATES,)
ERRORS = (CRASH, TIMEOUT, ERROR)
SKIPPED = (WAIVED, UNSUPPORTED, NOT_EXERCISED)


def finding_properties(record: Mapping[str, Any]) -> list[tuple[str, str]]:
    """What the guards found (a leak, a kernel fault), whatever the outcome: in report mode it is all there is."""
    props = []
    if record.get("leak"):
        props.append(("leak", leak_text(record["leak"])))
    kernel = record.get("kernel_log")
    if kernel:
        origin = " (written from user space)" if kernel.get("from_user_space") else ""
        # Every line: a kernel WARNING's own message (what identifies it) follows the WARNING line.
        props.append(("kernel_log", f"{'/'.join(kernel['kinds'])}{origin}: {'; '.join(kernel['lines'])}"))
    return props


def testcase(record: Mapping[str, Any]) -> ET.Element:
    driver = record.get("driver") or "no-device"
    # A test of the user's own has no claim: its node's name keeps its parametrizations apart.
    own = str(record.get("nodeid") or record.get("test") or "").rsplit("::", 1)[-1]
    name = f"{record['claim']}[{record['variant']}]" if record.get("variant") else record.get("claim") or own
    case = ET.Element("testcase", classname=f"{driver}.{record.get('verb') or record['test']}", name=name,
                      time=f"{float(record.get('duration') or 0):.6f}")
    props = ET.SubElement(case, "properties")
    reproducer = record.get("reproducer") or {}
    for key, value in (("driver", driver), ("device", record.get("device", "")), ("verb", record.get("verb", "")),
                       ("claim", record.get("claim", "")), ("claim_text", record.get("claim_text", "")),
                       ("outcome", record["outcome"]), ("source", record.get("ref", "")),
                       ("layer", record.get("layer", "")), ("stable_id", record["stable_id"]),
                       ("reproducer_c", reproducer.get("c", "")), ("reproducer_python", reproducer.get("python", "")),
                       ("reproduced_in_c", (reproducer.get("confirmed") or {}).get("verdict", "")),
                       *finding_properties(record)):
        if value:
            ET.SubElement(props, "property", name=key, value=str(value))
    outcome = record["outcome"]
    if outcome in FAILURE:
        message = f"expected: {record.get('expected', '')}; observed: {record.get('observed', '')}"
        element = ET.SubElement(case, "failure", type="deviation", message=message)
        element.text = "\n".join(record.get("steps", ())) or record.get("message", "")
    elif outcome in ERRORS:
        element = ET.SubElement(case, "error", type=outcome, message=record.get("reason", "") or outcome)
        element.text = record.get("message", "")
    elif outcome in SKIPPED:
        ET.SubElement(case, "skipped", type=outcome.replace(" ", "-"),
                      message=f"{outcome}: {record.get('reason', '')}")
    return case


def document(records: Sequence[Mapping[str, Any]], identities: Mapping[str, Mapping[str, Any]]) -> ET.Element:
    root = ET.Element("testsuites", name="pytest-rdma")
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for record in records:
        groups.setdefault(record.get("device") or "", []).append(record)
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for device, group in groups.items():
        identity = identities.get(device, {})
        driver = identity.get("driver") or next((r.get("driver") for r in group if r.get("driver")), "")
        counts = {
            "tests": len(group),
            "failures": sum(1 for r in group if r["outcome"] in FAILURE),
            "errors": sum(1 for r in group if r["outcome"] in ERRORS),
            "skipped": sum(1 for r in group if r["outcome"] in SKIPPED),
        }
        suite = ET.SubElement(root, "testsuite", name=f"{device} ({driver})" if device else "no device",
                              time=f"{sum(float(r.get('duration') or 0) for r in group):.3f}",
                              **{k: str(v) for k, v in counts.items()})
        props = ET.SubElement(suite, "properties")
        for key, value in sorted(identity.items()):
            ET.SubElement(props, "property", name=key, value=str(value))
        for record in group:
            suite.append(testcase(record))
        for key in totals:
            totals[key] += counts[key]
    for key, value in totals.items():
        root.set(key, str(value))
    return root


def write(path: Path, root: ET.Element) -> None:
    ET.indent(root)
    temporary = path.with_name(path.name + f".tmp{os.getpid()}")
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(root).write(temporary, encoding="utf-8", xml_declaration=True)
    temporary.replace(path)


class JunitFile:
    def __init__(self, path: Path, results: Results) -> None:
        self.path = path
        self.results = results

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        # Written only at the end: a run killed before it must not leave an earlier run's file behind.
        self.path.unlink(missing_ok=True)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.results.finish_pending()
        write(self.path, document(self.results.records, self.results.identities))
