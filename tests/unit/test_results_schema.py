"""Results files are checked against docs/results-schema.md by every command that reads them.

The schema's tables live twice, in the document and in pytest_rdma/report/schema.py: the first tests
hold them equal. The rest edit one record of a good file the way a hand or another tool might, and
each command that reads it must refuse it in one line naming the file, the record and what to give
(exit 2), where before `compare` passed it and `waivers` wrote `id = null`.
"""

from __future__ import annotations

import copy
import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pytest_rdma.cli import main
from pytest_rdma.outcomes import OUTCOMES
from pytest_rdma.report import schema
from pytest_rdma.report.record import SCHEMA_VERSION

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

DOC = Path(__file__).resolve().parents[2] / "docs" / "results-schema.md"


def section(title: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def table(title: str) -> dict[str, str]:
    """The section's table: every field a row names -> its type column."""
    fields: dict[str, str] = {}
    for line in section(title).splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.startswith("| `") or len(cells) < 3:
            continue
        for name in re.findall(r"`([^`]+)`", cells[0]):
            fields[name] = cells[1]
    return fields


def test_the_session_table_is_the_documents() -> None:
    assert table("Session fields") == schema.SESSION_FIELDS


def test_the_record_table_is_the_documents() -> None:
    assert table("Record (`results[]`)") == schema.RECORD_FIELDS


def test_every_type_the_document_gives_is_one_the_check_knows() -> None:
    for words in {*schema.SESSION_FIELDS.values(), *schema.RECORD_FIELDS.values()}:
        schema.conforms_to(None, words)  # a KeyError for words the check has no test for


def test_the_required_fields_and_the_outcomes_are_the_documents() -> None:
    record = section("Record (`results[]`)")
    sentence = record[record.index("Every record has") :].split(";")[0]
    assert tuple(re.findall(r"`([^`]+)`", sentence)) == schema.REQUIRED
    outcomes = [
        row.split("|")[1].strip().strip("`") for row in section("Outcomes").splitlines()[4:] if row.startswith("| `")
    ]
    assert tuple(outcomes) == OUTCOMES
    row = next(line for line in record.splitlines() if line.startswith("| `pytest_outcome`"))
    assert tuple(re.findall(r"`([^`]+)`", row.split("|")[3])) == schema.PYTEST_OUTCOMES


# -- a good file, and that file with one record broken -----------------------------------------------------

SESSION = {
    "schema_version": SCHEMA_VERSION,
    "tool": {"name": "pytest-rdma", "version": "0.1.0", "pytest": "9.2.0", "python": "3.11.2"},
    "started": "2026-11-26T21:00:00+00:00",
    "argv": ["--rdma-dev", "rxe0"],
    "strict": False,
    "expectations": ["rxe.toml"],
}
IDENTITY = {"name": "rxe0", "driver": "rxe", "kernel": "6.1.0-56-amd64", "rdma_core": "44.0"}
CONFORMING = {
    "nodeid": "suites/test_verbs.py::test_ibv_alloc_pd[rxe0-returns-pd]",
    "stable_id": "test_ibv_alloc_pd[returns-pd]",
    "test": "test_ibv_alloc_pd",
    "device": "rxe0",
    "driver": "rxe",
    "identity": IDENTITY,
    "verb": "ibv_alloc_pd",
    "claim": "returns-pd",
    "outcome": "conforms",
    "pytest_outcome": "passed",
    "when": "call",
    "observation": {},
    "params": {},
    "steps": ["[0] call: ibv_alloc_pd(ctx) -> pd"],
    "duration": 0.01,
    "waiver": None,
    "leak": None,
}
DEVIATING = {
    **CONFORMING,
    "nodeid": "suites/test_verbs.py::test_ibv_alloc_pd[rxe0-null-context]",
    "stable_id": "test_ibv_alloc_pd[null-context]",
    "claim": "null-context",
    "outcome": "deviates",
    "pytest_outcome": "failed",
    "expected": "EINVAL",
    "observed": "returned a PD",
    "observation": {"errno": 0, "ret": "pd", "odd key": True},
    "decisive_call": 0,
    "ref": "ibv_alloc_pd(3) DESCRIPTION",
}
RECORDS = [CONFORMING, DEVIATING]

# name -> (how the second record is broken, what the one line must say after naming it)
BROKEN = {
    "unknown-outcome": (
        lambda record: record.update(outcome="passed-ish"),
        "outcome 'passed-ish' is none of the schema's; give one of conforms, deviates, unsupported, not exercised",
    ),
    "no-driver": (
        lambda record: record.pop("driver"),
        "the record has no 'driver'; give the provider driver it ran on",
    ),
    "no-id": (
        lambda record: record.pop("stable_id"),
        "the record has no 'stable_id'; give the check's stable id",
    ),
    "null-id": (
        lambda record: record.update(stable_id=None),
        "'stable_id' is null; give a string: the check's stable id",
    ),
    "string-observation": (
        lambda record: record.update(observation="errno 0"),
        "'observation' is a string; give an object",
    ),
}


def broken_records(how: str) -> list[dict]:
    records = copy.deepcopy(RECORDS)
    BROKEN[how][0](records[1])
    return records


def document_file(tmp_path: Path, records: list[dict]) -> Path:
    path = tmp_path / "results.json"
    document = {**SESSION, "finished": None, "exitstatus": 1, "devices": {"rxe0": IDENTITY}, "results": records}
    path.write_text(json.dumps(document))
    return path


def lines_file(tmp_path: Path, records: list[dict]) -> Path:
    path = tmp_path / "results.jsonl"
    lines = [{"type": "session", **SESSION}, *({"type": "result", **record} for record in records)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def one_line(code: int, capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    assert code == 2, captured.err
    assert "Traceback" not in captured.out + captured.err
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    return lines[0]


def commands(path: Path) -> dict[str, list[str]]:
    found = {"compare": ["compare", str(path)], "waivers": ["waivers", "rxe", str(path)]}
    if path.suffix == ".jsonl":
        found["finish"] = ["finish", str(path)]
    return found


@pytest.mark.parametrize("how", sorted(BROKEN))
@pytest.mark.parametrize("command", ["compare", "waivers", "finish"])
def test_a_broken_line_is_refused_naming_its_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, how: str
) -> None:
    path = lines_file(tmp_path, broken_records(how))
    line = one_line(main(commands(path)[command]), capsys)
    named = f" ({DEVIATING['nodeid'] if how in ('no-id', 'null-id') else DEVIATING['stable_id']})"
    assert line.startswith(f"pytest-rdma {command}: {path}: line 3{named}: {BROKEN[how][1]}"), line
    assert not (tmp_path / "results.json").exists()  # finish wrote nothing


@pytest.mark.parametrize("how", sorted(BROKEN))
@pytest.mark.parametrize("command", ["compare", "waivers"])
def test_a_broken_record_is_refused_naming_its_index_and_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, how: str
) -> None:
    path = document_file(tmp_path, broken_records(how))
    line = one_line(main(commands(path)[command]), capsys)
    named = f" ({DEVIATING['nodeid'] if how in ('no-id', 'null-id') else DEVIATING['stable_id']})"
    assert line.startswith(f"pytest-rdma {command}: {path}: results[1]{named}: {BROKEN[how][1]}"), line


def test_a_line_that_is_neither_session_nor_result_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = lines_file(tmp_path, RECORDS)
    path.write_text(path.read_text() + json.dumps({"type": "session", **SESSION}) + "\n")
    line = one_line(main(["compare", str(path)]), capsys)
    said = "'type' is 'session'; give \"result\" (only line 1 is the session line)"
    assert line == f"pytest-rdma compare: {path}: line 4: {said}"


def test_a_session_field_of_another_type_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = document_file(tmp_path, RECORDS)
    path.write_text(path.read_text().replace('"argv": ["--rdma-dev", "rxe0"]', '"argv": "--rdma-dev rxe0"'))
    line = one_line(main(["compare", str(path)]), capsys)
    assert line == f"pytest-rdma compare: {path}: 'argv' is a string; give a list of strings (docs/results-schema.md)"


@pytest.mark.parametrize("form", ["json", "jsonl"])
def test_a_good_file_passes_unchanged(tmp_path: Path, capsys: pytest.CaptureFixture[str], form: str) -> None:
    path = (document_file if form == "json" else lines_file)(tmp_path, copy.deepcopy(RECORDS))
    before = path.read_text()
    assert main(["compare", str(path)]) == 0
    assert "| ibv_alloc_pd | null-context | ✘ 1 |" in capsys.readouterr().out
    assert main(["waivers", "rxe", str(path)]) == 0
    draft = tomllib.loads(capsys.readouterr().out)  # TOML, whatever the observation's keys
    assert [waiver["id"] for waiver in draft["waiver"]] == ["test_ibv_alloc_pd[null-context]"]
    assert draft["waiver"][0]["observed"] == {"errno": 0, "ret": "pd", "odd key": True}
    if form == "jsonl":
        assert main(["finish", str(path)]) == 0
        assert [r["stable_id"] for r in json.loads((tmp_path / "results.json").read_text())["results"]] == [
            r["stable_id"] for r in RECORDS
        ]
    assert path.read_text() == before


# -- coverage --results: the testcases of --rdma-junit -----------------------------------------------------


def junit_file(tmp_path: Path, **props: str) -> Path:
    suites = ET.Element("testsuites")
    case = ET.SubElement(ET.SubElement(suites, "testsuite", name="rxe0 (rxe)"), "testcase", name="null-context")
    properties = ET.SubElement(case, "properties")
    for name, value in props.items():
        ET.SubElement(properties, "property", name=name, value=value)
    path = tmp_path / "junit.xml"
    ET.ElementTree(suites).write(path)
    return path


GOOD_PROPS = {
    "driver": "rxe",
    "device": "rxe0",
    "outcome": "deviates",
    "stable_id": "test_ibv_alloc_pd[distinct-pds-x16]",
}


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"outcome": "passed-ish"}, "outcome 'passed-ish' is none of the results schema's; give one of conforms"),
        ({"driver": ""}, "no driver property; give the JUnit XML as pytest --rdma-junit wrote it"),
    ],
    ids=["unknown-outcome", "no-driver"],
)
def test_coverage_refuses_a_junit_testcase_of_ours_that_the_schema_does_not_allow(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: dict[str, str], says: str
) -> None:
    props = {key: value for key, value in {**GOOD_PROPS, **change}.items() if value}
    path = junit_file(tmp_path, **props)
    line = one_line(main(["coverage", "--verb", "ibv_alloc_pd", "--results", str(path)]), capsys)
    assert line.startswith(
        f"pytest-rdma coverage: --results {path}: testcase 1 (test_ibv_alloc_pd[distinct-pds-x16]): {says}"
    )


def test_coverage_reads_a_good_junit_testcase(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = junit_file(tmp_path, **GOOD_PROPS)
    main(["coverage", "--verb", "ibv_alloc_pd", "--results", str(path)])
    captured = capsys.readouterr()
    assert not captured.err and "rxe0: DEVIATES" in captured.out


def test_a_device_without_a_driver_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = document_file(tmp_path, RECORDS)
    document = json.loads(path.read_text())
    document["devices"]["rxe0"] = {"name": "rxe0"}
    path.write_text(json.dumps(document))
    line = one_line(main(["compare", str(path)]), capsys)
    assert line.startswith(f"pytest-rdma compare: {path}: devices['rxe0']: an identity's 'driver' is null; give the")
    records = copy.deepcopy(RECORDS)
    records[1]["identity"] = {"name": "rxe0", "driver": 7}
    line = one_line(main(["waivers", "rxe", str(lines_file(tmp_path, records))]), capsys)
    assert ": line 3 (test_ibv_alloc_pd[null-context]): an identity's 'driver' is a number; give the provider" in line


# -- report: the run's devices beside the Allure results ---------------------------------------------------


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ('{"schema_version": 1, "devices": {"rxe0": {"name": "rxe0"', "cannot read the run's devices ("),
        ('{"schema_version": 1}', "no 'devices' object (device -> identity)"),
        ('{"schema_version": 1, "devices": {"rxe0": []}}', "devices['rxe0']: an identity is a list; give an object"),
    ],
    ids=["not-json", "no-devices", "identity-not-an-object"],
)
def test_report_refuses_a_damaged_environment_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, says: str
) -> None:
    results = tmp_path / "allure-results"
    results.mkdir()
    (results / "pytest-rdma-environment.json").write_text(content)
    argv = ["report", str(results), "--config-only", "-o", str(tmp_path / "report")]
    line = one_line(main(argv), capsys)
    environment = results / "pytest-rdma-environment.json"
    assert line.startswith(f"pytest-rdma report: {environment}: {says}"), line
    assert line.endswith("give the results directory as pytest --rdma-allure wrote it, or remove that file")
    (results / "pytest-rdma-environment.json").write_text(
        json.dumps({"schema_version": 1, "devices": {"rxe0": IDENTITY}})
    )
    assert main(argv) == 0
    assert '"rxe"' in (tmp_path / "report" / "allurerc.mjs").read_text()
