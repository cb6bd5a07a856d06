"""JUnit XML for CI dashboards (Jenkins, GitLab), written from the records: --rdma-junit PATH.

One <testsuite> per device, named "<device> (<driver>)", with the device's identity as
properties; one <testcase> per check with classname "<driver>.<verb>" (dashboards group by
it: driver, then verb) and name "<claim>[<case>]"; a deviation is a <failure> with what was
expected and observed (its verb calls as the text); a crash, timeout or error is an <error>;
waived, unsupported and not exercised checks are <skipped> with the reason (a waiver's with
its link); properties per testcase give driver, device, verb, claim, outcome, the cited
section and its man page URL, and the reproducers' paths.

The document follows the schema of Jenkins' JUnit reports (the xunit plugin's junit-10.xsd:
no `skipped` count on <testsuites>, only its attributes), plus the per-testcase <properties>
that Jenkins' JUnit plugin reads (tests/unit/data/junit-jenkins.xsd, checked in
tests/unit/test_junit.py). Text is made XML-safe (a kernel log may carry control characters).
The file is written once, at the end, to a temporary name and renamed.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_rdma.guard.findings import leak_text
from pytest_rdma.outcomes import CRASH, DEVIATES, ERROR, NOT_EXERCISED, TIMEOUT, UNSUPPORTED, WAIVED
from pytest_rdma.report import links
from pytest_rdma.report.profile import Requirement, failure_text
from pytest_rdma.report.record import Identity, Phase, Record
from pytest_rdma.report.redact import redact
from pytest_rdma.report.results import Results

if TYPE_CHECKING:
    from pytest_rdma.report.terminal import Summary

FAILURE = (DEVIATES,)
ERRORS = (CRASH, TIMEOUT, ERROR)
SKIPPED = (WAIVED, UNSUPPORTED, NOT_EXERCISED)
# Characters XML 1.0 cannot hold at all, even escaped.
NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def xml_text(value: object) -> str:
    return NOT_XML.sub("\ufffd", redact(str(value)))


def case_name(record: Record) -> str:
    """The check's claim and case: "required-attrs[RC-RESET>INIT-without-STATE]"."""
    if record.get("claim"):
        return f"{record['claim']}[{record['variant']}]" if record.get("variant") else str(record["claim"])
    # A test of the user's own has no claim: its node's name keeps its parametrizations apart.
    own = str(record.get("nodeid") or record.get("test") or "").rsplit("::", 1)[-1]
    return own or str(record.get("stable_id") or "")


def case_properties(record: Record) -> list[tuple[str, str]]:
    reproducer = record.get("reproducer") or {}
    pair = reproducer.get("pair") or {"receiver": "", "sender": ""}
    waiver = record.get("waiver") or {}
    cited = links.once(str(record.get("deviation_ref") or record.get("ref") or ""))
    pairs = [
        ("driver", record.get("driver") or "no-device"),
        ("device", record.get("device", "")),
        ("verb", record.get("verb", "")),
        ("claim", record.get("claim", "")),
        ("claim_text", record.get("claim_text", "")),
        ("outcome", record["outcome"]),
        ("source", cited),
        ("man_page", links.text_link(cited).url if cited else ""),
        ("decided_by", record.get("decided_by") or record.get("layer", "")),
        ("stable_id", record.get("stable_id", "")),
        ("reproducer_c", reproducer.get("c", "")),
        ("reproducer_python", reproducer.get("python", "")),
        # Between two hosts the reproducer is a pair: the receiving side's program, then the sending side's.
        ("reproducer_receiver", pair["receiver"]),
        ("reproducer_sender", pair["sender"]),
        ("reproduced_in_c", (reproducer.get("confirmed") or {}).get("verdict", "")),
        ("waiver", waiver.get("status", "")),
        ("waiver_reason", waiver.get("reason", "")),
        ("waiver_link", waiver.get("link", "")),
        ("required", failure_text(record["required"]) if record.get("required") else ""),
    ]
    pairs += finding_properties(record)
    # A two-device check names both ends: dut_host, dut_kernel, ..., peer_host, peer_driver, ...
    pairs += [
        (f"{end}_{key}", value) for end, facts in (record.get("ends") or {}).items() for key, value in facts.items()
    ]
    return [(key, str(value)) for key, value in pairs if value]


def finding_properties(record: Phase) -> list[tuple[str, str]]:
    """What the guards found (a leak, a kernel fault), whatever the outcome: in report mode it is all there is."""
    props = []
    if record.get("leak"):
        props.append(("leak", leak_text(record["leak"])))  # type: ignore[arg-type]  # not None: tested above
    kernel = record.get("kernel_log")
    if kernel:
        origin = " (written from user space)" if kernel.get("from_user_space") else ""
        # Every line: a kernel WARNING's own message (what identifies it) follows the WARNING line.
        lines = "; ".join(kernel.get("lines", ()))[:2000]
        props.append(("kernel_log", f"{'/'.join(kernel.get('kinds', ()))}{origin}: {lines}"))
    return props


def testcase(record: Record) -> ET.Element:
    driver = record.get("driver") or "no-device"
    case = ET.Element(
        "testcase",
        classname=f"{driver}.{record.get('verb') or record['test']}",
        name=xml_text(case_name(record)),
        time=f"{float(record.get('duration') or 0):.6f}",
    )
    pairs = case_properties(record)
    if pairs:
        props = ET.SubElement(case, "properties")
        for key, value in pairs:
            ET.SubElement(props, "property", name=key, value=xml_text(value))
    outcome = record["outcome"]
    if record.get("required"):  # unsupported, for the lack of a capability the run requires
        ET.SubElement(case, "failure", type="required", message=xml_text(failure_text(record["required"])))
    elif outcome in FAILURE:
        element = ET.SubElement(
            case,
            "failure",
            type="deviation",
            message=xml_text(
                f"deviates from {links.once(str(record.get('deviation_ref') or record.get('ref') or ''))}: "
                f"expected {record.get('expected', '')}; observed {record.get('observed', '')}"
            ),
        )
        element.text = xml_text("\n".join(record.get("steps", ())) or record.get("message", ""))
    elif outcome in ERRORS:
        element = ET.SubElement(case, "error", type=outcome, message=xml_text(record.get("reason", "") or outcome))
        element.text = xml_text(record.get("message", ""))
    elif outcome in SKIPPED:
        waiver = record.get("waiver") or {}
        why = (
            f"{waiver.get('reason', '')} ({waiver.get('link', '')})"
            if outcome == WAIVED and waiver
            else record.get("reason", "")
        )
        ET.SubElement(case, "skipped", type=outcome.replace(" ", "-"), message=xml_text(f"{outcome}: {why}"))
    return case


def failed(record: Record) -> bool:
    return record["outcome"] in FAILURE or bool(record.get("required"))


def profile_properties(requirements: Sequence[Requirement]) -> list[tuple[str, str]]:
    """A device's required capabilities, as its testsuite's properties: require.srq = "held (siw.toml:4)"."""
    pairs = []
    for entry in requirements:
        why = f": {entry['why']}" if entry["status"] == "failed" else ""
        pairs.append((f"require.{entry['capability']}", f"{entry['status']}{why} ({entry['source']})"))
    return pairs


def document(
    records: Sequence[Record],
    identities: Mapping[str, Identity],
    profile: Mapping[str, Sequence[Requirement]] | None = None,
) -> ET.Element:
    root = ET.Element("testsuites", name="pytest-rdma")
    groups: dict[str, list[Record]] = {}
    for record in records:
        groups.setdefault(record.get("device") or "", []).append(record)
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for device, group in groups.items():
        identity = identities.get(device, {})
        driver = identity.get("driver") or next((r.get("driver") for r in group if r.get("driver")), "")
        counts = {
            "tests": len(group),
            "failures": sum(1 for r in group if failed(r)),
            "errors": sum(1 for r in group if r["outcome"] in ERRORS),
            "skipped": sum(1 for r in group if r["outcome"] in SKIPPED and not failed(r)),
        }
        suite = ET.SubElement(
            root,
            "testsuite",
            name=f"{device} ({driver})" if device else "no device",
            time=f"{sum(float(r.get('duration') or 0) for r in group):.3f}",
            # The counts go to **extra (strings); mypy also matches a ** argument against attrib.
            **{k: str(v) for k, v in counts.items()},  # type: ignore[arg-type]
        )
        pairs = sorted(identity.items()) + profile_properties((profile or {}).get(device, ()))
        if pairs:  # junit-10.xsd: <properties> holds at least one <property>
            props = ET.SubElement(suite, "properties")
            for key, value in pairs:
                ET.SubElement(props, "property", name=key, value=xml_text(value))
        for record in group:
            suite.append(testcase(record))
        for key in totals:
            totals[key] += counts[key]
    for key in ("tests", "failures", "errors"):  # junit-10.xsd: <testsuites> has no skipped count
        root.set(key, str(totals[key]))
    return root


def write(path: Path, root: ET.Element) -> None:
    """Write to a temporary name and rename (a half-written temporary file, on a full disk, is removed)."""
    ET.indent(root)
    temporary = path.with_name(path.name + f".tmp{os.getpid()}")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        ET.ElementTree(root).write(temporary, encoding="utf-8", xml_declaration=True)
        temporary.replace(path)
    except OSError:
        temporary.unlink(missing_ok=True)
        raise


class JunitFile:
    def __init__(self, path: Path, results: Results, summary: Summary | None = None) -> None:
        self.path = path
        self.results = results
        self.summary = summary  # its profile: the devices' required capabilities (after its sessionfinish)
        self.records: list[Record] = []

    def pytest_rdma_record(self, record: Record) -> None:
        self.records.append(record)

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        # Written only at the end: a run killed before it must not leave an earlier run's file behind.
        try:
            self.path.unlink(missing_ok=True)
        except OSError as error:
            self.results.output_failures.failed("--rdma-junit", self.path, error, "an earlier run's file may be there")

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.results.finish_pending()
        profile = self.summary.profile if self.summary is not None else None
        try:
            write(self.path, document(self.records, self.results.identities, profile))
        except OSError as error:
            self.results.output_failures.failed(
                "--rdma-junit",
                self.path,
                error,
                "the other outputs hold the results (--rdma-json, the terminal)",
                at_end=True,
            )
