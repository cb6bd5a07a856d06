"""`pytest-rdma kcidb`: a real lab run's results as a KCIDB v5 submission that kcidb-io validates,
with the dotted paths, the status mapping, the observation and the environment the README promises."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from kcidb_io.schema import V5_0

from pytest_rdma import generate
from pytest_rdma.cli import main
from pytest_rdma.outcomes import OUTCOMES
from pytest_rdma.report import kcidb
from pytest_rdma.report.dotted import check_segments, dotted_path, segment

# A slice of a real lab run on rxe0 (`./pytest-rdma lab --dev rxe0 -- -k "ibv_alloc_pd or ibv_modify_qp"`;
# kernel 6.12, rdma-core 44.0): two checks of each outcome it had, steps cut to 8 and messages to 400 characters.
SLICE = Path(__file__).parent / "data" / "results-rxe-slice.json"


def records() -> list[dict]:
    return json.loads(SLICE.read_text())["results"]


def submit(tmp_path: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    code = main(["kcidb", str(SLICE), "--origin", "my_lab", *argv])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def test_the_example_path_of_the_issue() -> None:
    record = {"driver": "rxe", "verb": "ibv_modify_qp", "claim": "forbidden-attrs", "variant": "RC-INIT>RTR-with-PORT"}
    assert dotted_path(record) == "rdma.rxe.ibv_modify_qp.forbidden_attrs.RC_INIT_RTR_with_PORT"


def test_sanitising_keeps_words_for_signs() -> None:
    assert segment("mtu+1") == "mtu_plus_1" and segment("mtu-1") == "mtu_1"
    assert segment("max_send_wr=max+1") == "max_send_wr_max_plus_1"
    assert segment("--a..b>>c--") == "a_b_c"


def test_every_check_of_the_catalogue_has_a_path_of_its_own() -> None:
    paths: dict[str, list[str]] = {}
    for verb in generate.active().verbs:
        for case in generate.expand(verb):
            record = {"verb": case.verb, "claim": case.claim, "variant": case.variant}
            paths.setdefault(".".join(check_segments(record)), []).append(case.stable_id)
    shared = {path: ids for path, ids in paths.items() if len(ids) > 1}
    assert len(paths) > 1000 and not shared, shared


def test_a_users_own_test_is_named_by_its_function_and_parameters() -> None:
    record = {"driver": "mlx5", "verb": "", "stable_id": "test_big_mr[size=1G]"}
    assert dotted_path(record) == "rdma.mlx5.test_big_mr.size_1G"
    assert dotted_path({"driver": "", "verb": "ibv_open_xrcd", "claim": "x", "variant": ""}) == (
        "rdma.no_device.ibv_open_xrcd.x"
    )


def test_every_outcome_has_a_documented_status() -> None:
    assert {outcome: kcidb.status(outcome) for outcome in OUTCOMES} == {
        "conforms": "PASS",
        "deviates": "FAIL",
        "unsupported": "SKIP",
        "not exercised": "SKIP",
        "waived": "FAIL",
        "crash": "ERROR",
        "timeout": "ERROR",
        "error": "ERROR",
    }
    assert kcidb.status("something new") == "MISS"
    doc = (Path(__file__).parents[2] / "docs" / "kcidb.md").read_text()
    for outcome in OUTCOMES:
        assert f"| {outcome} | {kcidb.status(outcome)} |" in doc


def test_a_real_run_is_a_valid_submission(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = submit(tmp_path, capsys)
    V5_0.validate_exactly(data)  # kcidb-io's own schema, the one KernelCI's database takes
    assert data["version"] == {"major": 5, "minor": 0}
    source = records()
    assert len(data["tests"]) == len(source)
    (checkout,) = data["checkouts"]
    (build,) = data["builds"]
    kernel, rdma_core = source[0]["identity"]["kernel"], source[0]["identity"]["rdma_core"]
    assert checkout["misc"] == {"kernel_release": kernel}
    assert build["misc"] == {"kernel_release": kernel, "rdma_core": rdma_core}
    assert build["checkout_id"] == checkout["id"]
    for record, test in zip(source, data["tests"]):
        assert test["id"].startswith("my_lab:") and test["origin"] == "my_lab"
        assert test["build_id"] == build["id"]
        assert test["path"] == dotted_path(record)
        assert test["status"] == kcidb.STATUS[record["outcome"]]
        assert test["environment"]["misc"]["driver"] == "rxe"
        assert test["environment"]["misc"]["device"] == "rxe0"
        assert test["misc"]["stable_id"] == record["stable_id"]
        if record["outcome"] in ("deviates", "waived"):
            assert f"observed: {record['observed']}" in test["log_excerpt"]
        elif record["reason"]:
            assert record["reason"] in test["log_excerpt"]
    assert len({test["id"] for test in data["tests"]}) == len(source)
    assert Counter(t["status"] for t in data["tests"]) == Counter(kcidb.STATUS[r["outcome"]] for r in source)


def test_waived_checks_are_incidents_of_their_waivers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = submit(tmp_path, capsys)
    waived = [r for r in records() if r["outcome"] == "waived"]
    assert waived, "the slice needs a waived check"
    assert len(data["incidents"]) == len(waived)
    issues = {issue["id"]: issue for issue in data["issues"]}
    tests = {test["id"]: test for test in data["tests"]}
    for incident in data["incidents"]:
        test, issue = tests[incident["test_id"]], issues[incident["issue_id"]]
        assert test["status"] == "FAIL" and incident["present"] is True
        assert issue["comment"] == test["misc"]["waiver"]["reason"]


def test_the_same_results_give_the_same_ids(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = submit(tmp_path, capsys), submit(tmp_path, capsys)
    assert [t["id"] for t in first["tests"]] == [t["id"] for t in second["tests"]]


def test_output_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "kcidb.json"
    assert main(["kcidb", str(SLICE), "--origin", "my_lab", "-o", str(out)]) == 0
    assert capsys.readouterr().out == ""
    V5_0.validate_exactly(json.loads(out.read_text()))


def test_a_submission_kcidb_io_refuses_is_caught() -> None:
    document = kcidb.submission([kcidb.run_of(SLICE)], "my_lab")
    document["tests"][0]["path"] = "rdma.rxe.not a path"  # type: ignore[index]
    problem = kcidb.validate(document)
    assert problem is not None and problem.startswith("tests/0/path")


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--origin", "My Lab"], "a KCIDB origin is lower-case letters, digits and '_' only (e.g. my_lab)"),
        ([], "the following arguments are required: --origin"),
    ],
)
def test_bad_origin(capsys: pytest.CaptureFixture[str], argv: list[str], says: str) -> None:
    code = main(["kcidb", str(SLICE), *argv])
    err = capsys.readouterr().err
    assert code == 2 and len(err.splitlines()) == 1 and says in err, err
