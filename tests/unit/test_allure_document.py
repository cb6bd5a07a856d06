"""A result's JSON is what allure-python-commons' own file writer would write: our faster conversion of
the model (allure_model.document) equals attrs' asdict with the logger's filter, key order included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from allure_commons import model2 as model
from attr import asdict

from pytest_rdma.report.allure_model import convert, document

SAMPLE = Path(__file__).parent / "data" / "results-rxe-slice.json"
RECORDS = json.loads(SAMPLE.read_text())["results"]


def logger_json(result: model.TestResult) -> str:
    """allure_commons.logger.AllureFileLogger's conversion of a result."""
    return json.dumps(asdict(result, filter=lambda _, value: value or value is False), ensure_ascii=False)


@pytest.mark.parametrize("record", RECORDS, ids=[record["stable_id"] for record in RECORDS])
def test_a_records_result_is_written_as_the_logger_writes_it(record: dict) -> None:
    converted = convert(record, stop_ms=1_000_000, python_text="print('reproducer')\n", quote="the page's words")
    assert json.dumps(document(converted.result), ensure_ascii=False) == logger_json(converted.result)


def test_false_is_kept_and_empty_values_are_left_out() -> None:
    result = model.TestResult(
        uuid="u",
        name="n",
        statusDetails=model.StatusDetails(known=False, message=""),
        steps=[model.TestStepResult(name="s", steps=[])],
        parameters=[model.Parameter(name="device", value="rxe0")],
    )
    assert json.dumps(document(result)) == logger_json(result)
    assert document(result)["statusDetails"] == {"known": False}


def test_a_conforming_check_says_whether_its_waiver_is_to_be_removed_or_was_only_not_seen() -> None:
    from pytest_rdma.report.allure_model import status_message

    waiver = {"file": "siw-relations.toml", "line": 73}
    fixed = status_message({"outcome": "conforms", "waiver": {**waiver, "status": "fixed"}})  # type: ignore[typeddict-item]
    unseen = status_message({"outcome": "conforms", "waiver": {**waiver, "status": "unseen", "intermittent": True}})  # type: ignore[typeddict-item]
    assert fixed == "conforms: the waiver siw-relations.toml:73 is no longer needed"
    assert unseen == (
        "conforms this run: the intermittent deviation its waiver siw-relations.toml:73 records was not seen"
    )
