"""JUnit XML for Jenkins and GitLab (--rdma-junit): valid against Jenkins' JUnit schema, one testsuite
per device, classname <driver>.<verb>, name claim and case, properties per testcase (issue 12).

The schema (tests/unit/data/junit-jenkins.xsd) states junit-10.xsd's constraints, the schema
Jenkins' xunit plugin validates JUnit reports with, plus the per-testcase properties Jenkins'
JUnit plugin reads; junitparser reads the file as a CI would.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from allure_records import find, record

from pytest_rdma.outcomes import CONFORMS, CRASH, DEVIATES, ERROR, NOT_EXERCISED, TIMEOUT, UNSUPPORTED, WAIVED
from pytest_rdma.report import junit

lxml_etree = pytest.importorskip("lxml.etree", reason="validating against the XSD needs lxml (pip install lxml)")
junitparser = pytest.importorskip("junitparser", reason="reading the file as a CI would needs junitparser")

SCHEMA = Path(__file__).with_name("data") / "junit-jenkins.xsd"
MODIFY = "test_ibv_modify_qp[forbidden-attrs-RC-RTR>RTS-with-PATH_MTU]"
OUTCOMES = (CONFORMS, DEVIATES, WAIVED, UNSUPPORTED, NOT_EXERCISED, CRASH, TIMEOUT, ERROR)


def validate(path: Path) -> list[str]:
    """The schema's complaints about the file at `path` (empty when it is valid)."""
    schema = lxml_etree.XMLSchema(lxml_etree.parse(str(SCHEMA)))
    schema.validate(lxml_etree.parse(str(path)))
    return [f"line {error.line}: {error.message}" for error in schema.error_log]


def every_outcome() -> list[dict]:
    """Each outcome on each device, each a different check of ibv_modify_qp, and one check of no device."""
    cases = [
        find(MODIFY),
        find("test_ibv_modify_qp[forbidden-attrs-RC-RESET>INIT-with-RQ_PSN]"),
        find("test_ibv_create_qp[cap-writeback-RC-max_send_wr-3]"),
    ]
    records = [
        record(cases[i % 3], device, outcome) for device in ("rxe0", "siw0") for i, outcome in enumerate(OUTCOMES)
    ]
    return records + [record(cases[0], "", UNSUPPORTED, reason="blocked: no DET provider", blocked=True)]


def written(tmp_path: Path, records: list[dict]) -> Path:
    identities = {r["device"]: r["identity"] for r in records if r.get("identity")}
    path = tmp_path / "junit.xml"
    junit.write(path, junit.document(records, identities))
    return path


def test_valid_against_jenkins_junit_schema(tmp_path: Path) -> None:
    assert validate(written(tmp_path, every_outcome())) == []


@pytest.mark.parametrize(
    ("change", "complaint"),
    [
        (lambda root: root.set("skipped", "1"), "skipped"),  # what the earlier writer put on <testsuites>
        (lambda root: ET.SubElement(root.find("testsuite"), "properties"), "properties"),  # an empty <properties>
        (lambda root: root.find("testsuite/testcase").attrib.pop("name"), "name"),
    ],
)
def test_the_schema_refuses_what_jenkins_refuses(tmp_path: Path, change, complaint: str) -> None:
    root = junit.document(every_outcome(), {})
    change(root)
    path = tmp_path / "junit.xml"
    junit.write(path, root)
    errors = validate(path)
    assert errors and complaint in " ".join(errors), errors


def test_one_suite_per_device_classname_driver_verb_name_claim_and_case(tmp_path: Path) -> None:
    root = ET.parse(written(tmp_path, every_outcome())).getroot()
    suites = {suite.get("name"): suite for suite in root.iter("testsuite")}
    assert list(suites) == ["rxe0 (rxe)", "siw0 (siw)", "no device"]
    rxe = suites["rxe0 (rxe)"]
    assert (rxe.get("tests"), rxe.get("failures"), rxe.get("errors"), rxe.get("skipped")) == ("8", "1", "3", "3")
    assert {p.get("name"): p.get("value") for p in rxe.find("properties")}["firmware"] == "0.0.0"
    case = next(c for c in rxe.iter("testcase") if c.find("failure") is not None)
    assert case.get("classname") == "rxe.ibv_modify_qp"
    assert case.get("name") == "forbidden-attrs[RC-RESET>INIT-with-RQ_PSN]"
    props = {p.get("name"): p.get("value") for p in case.find("properties")}
    assert props["driver"] == "rxe" and props["claim"] == "forbidden-attrs" and props["outcome"] == DEVIATES
    assert props["source"] == "ibv_modify_qp(3) NOTES"
    assert props["man_page"] == "https://man7.org/linux/man-pages/man3/ibv_modify_qp.3.html#NOTES"
    assert props["reproducer_c"].endswith(".c") and props["reproducer_python"].endswith(".py")
    assert case.find("failure").get("message") == (
        "deviates from ibv_modify_qp(3) NOTES: expected the call fails with EINVAL; observed returned 0"
    )
    waived = next(
        c for c in rxe.iter("testcase") if c.find("skipped") is not None and c.find("skipped").get("type") == "waived"
    )
    assert waived.find("skipped").get("message") == (
        "waived: rxe accepts it (a known provider bug) (https://bugzilla.kernel.org/show_bug.cgi?id=1)"
    )


def test_read_by_junitparser_as_a_ci_reads_it(tmp_path: Path) -> None:
    xml = junitparser.JUnitXml.fromfile(str(written(tmp_path, every_outcome())))
    suites = {suite.name: suite for suite in xml}
    assert set(suites) == {"rxe0 (rxe)", "siw0 (siw)", "no device"}
    kinds = {}
    for case in suites["siw0 (siw)"]:
        (outcome,) = [p.value for p in case.child(junitparser.Properties) if p.name == "outcome"]
        kinds[outcome] = type(case.result[0]).__name__ if case.result else "passed"
    assert kinds == {
        CONFORMS: "passed",
        DEVIATES: "Failure",
        WAIVED: "Skipped",
        UNSUPPORTED: "Skipped",
        NOT_EXERCISED: "Skipped",
        CRASH: "Error",
        TIMEOUT: "Error",
        ERROR: "Error",
    }
    assert all(case.classname.startswith("siw.") for case in suites["siw0 (siw)"])


def test_text_a_kernel_log_may_carry_stays_valid_xml(tmp_path: Path) -> None:
    bad = record(
        find(MODIFY),
        "rxe0",
        ERROR,
        reason="error: \x1b[31mred\x1b[0m \x00 nul",
        message="WARNING: CPU: 0 PID: 1 at \x07 /home/ci/drivers/x.c:1",
        kernel_log={"lines": ["\x1b[1m"]},
    )
    path = written(tmp_path, [bad])
    assert validate(path) == []
    assert "/home/ci" not in path.read_text()


def test_a_run_writes_valid_junit_with_a_crash_and_a_check_without_device(pytester: pytest.Pytester) -> None:
    from test_allure_results import CONFTEST, TESTS

    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_demo=TESTS)
    pytester.runpytest_subprocess("-n", "1", "-p", "no:cacheprovider", "--rdma-junit", "junit.xml")
    path = pytester.path / "junit.xml"
    assert validate(path) == []
    root = ET.parse(path).getroot()
    # Suites in the order their first check finished; one per device, and one for the check without a device.
    assert sorted(suite.get("name") for suite in root.iter("testsuite")) == ["no device", "rxe0 (rxe)", "siw0 (siw)"]
    crash = [
        case
        for case in root.iter("testcase")
        if case.find("error") is not None and case.find("error").get("type") == CRASH
    ]
    assert len(crash) == 1 and crash[0].get("classname") == "rxe.ibv_query_gid"
