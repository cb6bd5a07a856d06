"""Every check ends as one classified outcome, carried on its report, right under xdist too."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from report_helpers import CONFTEST, TESTS, make_project, node, outcomes, records

from pytest_rdma.report.terminal import render


def test_each_outcome_is_classified_per_driver(pytester: pytest.Pytester) -> None:
    expect = make_project(pytester, waivers={})
    result = pytester.runpytest("-p", "no:xdist", "--rdma-expectations", str(expect), "--rdma-json", "r.json")
    result.assert_outcomes(passed=4, failed=2, skipped=4)
    assert outcomes(pytester.path / "r.json") == {
        node("rxe0", "conforming"): "conforms",
        node("rxe0", "deviant"): "deviates",
        node("rxe0", "rc-only"): "conforms",
        node("rxe0", "unreached"): "not exercised",
        node("rxe0", "blocked"): "unsupported",
        node("siw0", "conforming"): "conforms",
        node("siw0", "deviant"): "deviates",
        node("siw0", "rc-only"): "unsupported",
        node("siw0", "unreached"): "conforms",
        node("siw0", "blocked"): "unsupported",
    }


def test_record_carries_the_case_the_verdict_and_the_evidence(pytester: pytest.Pytester) -> None:
    expect = make_project(pytester, waivers={})
    pytester.runpytest("-p", "no:xdist", "--rdma-expectations", str(expect), "--rdma-json", "out/r.json")
    found = records(pytester.path / "out" / "r.json")
    deviant = found[node("siw0", "deviant")]
    assert (deviant["device"], deviant["driver"], deviant["identity"]["transport"]) == ("siw0", "siw", "iw")
    # What the check is about comes from its Case, not from its id.
    assert (deviant["verb"], deviant["claim"], deviant["case_id"], deviant["kind"]) == (
        "ibv_demo",
        "keeps-promise",
        "keeps-promise-deviant",
        "demo",
    )
    assert deviant["stable_id"] == "test_ibv_demo[keeps-promise-deviant]"
    assert deviant["title"] == "a mask with an undefined bit is refused with EINVAL [behaviour deviant]"
    assert deviant["ref"] == "ibv_demo(3) RETURN VALUE" and deviant["layer"] == "provider"
    assert deviant["sources"] == [{"kind": "man", "ref": "ibv_demo(3)", "section": "RETURN VALUE"}]
    assert deviant["params"] == {"behaviour": "deviant"}
    # The verdict, as structured data a waiver can match.
    assert (deviant["expected"], deviant["observed"]) == ("refused with EINVAL", "ibv_demo succeeded -> 0")
    assert deviant["observation"] == {"returned": "success"}
    assert deviant["details"] == {"attr_mask": "0x40000000"}
    assert deviant["pytest_outcome"] == "failed"
    # The evidence: the recorded calls, as steps, and the reproducers written from them.
    assert deviant["steps"] == ["[0] call: ibv_demo(ctx, 0x40000000) -> 0"]
    assert deviant["routes"] == ["provider:demo"] and deviant["decisive_call"] == 0
    reproducer = deviant["reproducer"]
    assert (reproducer["c"], reproducer["python"]) == (
        "siw0/ibv_demo.keeps-promise-deviant.c",
        "siw0/ibv_demo.keeps-promise-deviant.py",
    )
    folder = pytester.path / "out" / "reproducers"  # beside --rdma-json
    c_text = (folder / reproducer["c"]).read_text()
    assert "int r0 = ibv_demo(ctx, 0x40000000);" in c_text and 'if (r0 == 0) { puts("REPRODUCED")' in c_text
    assert "replay('siw0', CALLS, decisive=0" in (folder / reproducer["python"]).read_text()
    conforming = found[node("siw0", "conforming")]
    assert conforming["steps"] == ["[0] call: ibv_demo(ctx, 0x40000000) -> 22, errno EINVAL (22)"]
    assert "reproducer" not in conforming
    blocked = found[node("rxe0", "blocked")]
    assert blocked["blocked"] is True and blocked["reason"] == "no DET runner: see ibv_modify_qp"
    unsupported = found[node("siw0", "rc-only")]
    assert unsupported["blocked"] is False and unsupported["reason"] == "attr.max_qp_wr = 0"
    unreached = found[node("rxe0", "unreached")]
    assert unreached["reason"].startswith("could not reach RTS") and unreached["pytest_outcome"] == "skipped"


def test_reproducers_are_named_with_the_deviation(pytester: pytest.Pytester) -> None:
    expect = make_project(pytester, waivers={})
    result = pytester.runpytest(
        "-p", "no:xdist", "--rdma-expectations", str(expect), "-k", "deviant", "--rdma-reproducers", "repro"
    )
    result.stdout.fnmatch_lines(
        [
            "*observed: ibv_demo succeeded -> 0",
            "*reproduce: repro/rxe0/ibv_demo.keeps-promise-deviant.c (C), "
            "repro/rxe0/ibv_demo.keeps-promise-deviant.py (Python)",
        ]
    )
    assert sorted(p.name for p in (pytester.path / "repro" / "siw0").iterdir()) == [
        "ibv_demo.keeps-promise-deviant.c",
        "ibv_demo.keeps-promise-deviant.py",
    ]


def test_setup_error_and_body_error_are_errors(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    expect = make_project(
        pytester,
        waivers={},
        tests=TESTS
        + """
import pytest


@pytest.fixture
def broken_pd():
    raise OSError("ibv_alloc_pd: ENOMEM")


@pytest.mark.parametrize("rdma_dut", ["rxe0"], indirect=True)
def test_needs_pd(rdma_dut, broken_pd):
    pass
""",
    )
    monkeypatch.setenv("DEMO_CONFORMING", "error")
    pytester.runpytest("-p", "no:xdist", "--rdma-expectations", str(expect), "--rdma-json", "r.json")
    found = records(pytester.path / "r.json")
    assert found["test_demo.py::test_needs_pd[rxe0]"]["outcome"] == "error"
    assert found["test_demo.py::test_needs_pd[rxe0]"]["reason"] == "OSError: ibv_alloc_pd: ENOMEM"
    assert found[node("rxe0", "conforming")]["outcome"] == "error"
    assert found[node("rxe0", "conforming")]["reason"] == "RuntimeError: ibv_alloc_pd failed: ENOMEM"


def test_timeout_is_one_timeout_result(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    expect = make_project(pytester, waivers={})
    monkeypatch.setenv("DEMO_CONFORMING", "hang")
    result = pytester.runpytest(
        "-p",
        "no:xdist",
        "--rdma-expectations",
        str(expect),
        "--rdma-json",
        "r.json",
        "--timeout",
        "1",
        "--timeout-method",
        "signal",
        "-k",
        "conforming or deviant",
    )
    got = outcomes(pytester.path / "r.json")
    assert got[node("rxe0", "conforming")] == "timeout" and got[node("siw0", "conforming")] == "timeout"
    assert got[node("rxe0", "deviant")] == "deviates"
    result.assert_outcomes(failed=4)


def test_crashed_worker_is_one_crash_result(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    expect = make_project(pytester, waivers={})
    monkeypatch.setenv("DEMO_RC_ONLY", "crash")  # rxe's rc-only case kills its process; siw's is unsupported first
    result = pytester.runpytest_subprocess("-n", "1", "--rdma-expectations", str(expect), "--rdma-json", "r.json")
    got = outcomes(pytester.path / "r.json")
    assert got[node("rxe0", "rc-only")] == "crash"
    assert len(got) == 10, "every other check still has its result"
    crash = records(pytester.path / "r.json")[node("rxe0", "rc-only")]
    assert (crash["driver"], crash["device"], crash["case_id"]) == ("rxe", "rxe0", "keeps-promise-rc-only")
    assert crash["rerun"] == f"python -m pytest -p no:xdist '{node('rxe0', 'rc-only')}' --rdma-dev rxe0"
    result.stdout.fnmatch_lines(
        [
            "rxe0: 2 not covered by a waiver:",
            "*",
            "  crash         test_ibv_demo[[]keeps-promise-rc-only[]]: worker 'gw0' crashed while running*",
            f"      rerun:    python -m pytest -p no:xdist '{node('rxe0', 'rc-only')}' --rdma-dev rxe0".replace(
                "[", "[[]"
            ),
            "*",
            "rxe0: FAILS: 1 deviates, 1 crash",
        ]
    )


DIES_IN_SETUP = """
import os

import pytest


@pytest.fixture(autouse=True)
def dies_in_setup(request):
    if request.node.name == os.environ.get("DEMO_DIES_IN_SETUP"):
        os._exit(3)  # the worker goes before the check's setup is reported
"""


def test_a_check_that_kills_its_worker_in_setup_is_still_the_check(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No record of its own arrived, and the controller expands no catalogue: the check the worker ran
    before it named it (its teardown record carries the worker's next check)."""
    expect = make_project(pytester, tests=TESTS + DIES_IN_SETUP, waivers={})
    dying = node("siw0", "deviant")
    monkeypatch.setenv("DEMO_DIES_IN_SETUP", dying.split("::")[-1])
    pytester.runpytest_subprocess("-n", "1", "--rdma-expectations", str(expect), "--rdma-json", "r.json")
    got = outcomes(pytester.path / "r.json")
    assert got[dying] == "crash" and len(got) == 10, "every other check still has its result"
    crash = records(pytester.path / "r.json")[dying]
    assert (crash["driver"], crash["device"], crash["case_id"], crash["verb"]) == (
        "siw",
        "siw0",
        "keeps-promise-deviant",
        "ibv_demo",
    )
    assert crash["stable_id"] == "test_ibv_demo[keeps-promise-deviant]"
    assert crash["rerun"] == f"python -m pytest -p no:xdist '{dying}' --rdma-dev siw0"


def test_xdist_gives_the_serial_outcomes_and_one_file(pytester: pytest.Pytester) -> None:
    expect = make_project(pytester)
    pytester.runpytest("-p", "no:xdist", "--rdma-expectations", str(expect), "--rdma-json", "serial.json")
    pytester.runpytest_subprocess("-n", "2", "--rdma-expectations", str(expect), "--rdma-json", "par.json")
    serial, parallel = outcomes(pytester.path / "serial.json"), outcomes(pytester.path / "par.json")
    assert serial == parallel
    assert "waived" in serial.values() and "not exercised" in serial.values()
    lines = (pytester.path / "par.jsonl").read_text().splitlines()
    kinds = [json.loads(line)["type"] for line in lines]
    assert kinds == ["session"] + ["result"] * 10, "the controller alone writes, once per check"
    document = json.loads((pytester.path / "par.json").read_text())
    assert document["schema_version"] == 2
    assert set(document["devices"]) == {"rxe0", "siw0"}
    assert document["summary"]["siw"]["ibv_demo"] == {"conforms": 2, "waived": 1, "unsupported": 2}
    assert document["summary"]["rxe"]["ibv_demo"] == {"conforms": 2, "waived": 1, "unsupported": 1, "not exercised": 1}
    parallel_records = records(pytester.path / "par.json")
    assert parallel_records[node("siw0", "deviant")]["steps"] == ["[0] call: ibv_demo(ctx, 0x40000000) -> 0"]
    assert parallel_records[node("siw0", "deviant")]["reproducer"]["c"].startswith("siw0/")
    assert_documented(document)


SCHEMA_DOC = Path(__file__).resolve().parents[2] / "docs" / "results-schema.md"


def documented_fields(section: str) -> set[str]:
    """The field names in the first column of a table of docs/results-schema.md's `section`."""
    text = SCHEMA_DOC.read_text().split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    return {
        name for row in text.splitlines() if row.startswith("| `") for name in re.findall(r"`(\w+)`", row.split("|")[1])
    }


def assert_documented(document: dict) -> None:
    """Every field a run writes is in the schema document (a field it lists may be absent: optional)."""
    session = set(document) - {"results"}
    assert session <= documented_fields("Session fields") | {"results"}, session - documented_fields("Session fields")
    written = {key for record in document["results"] for key in record}
    missing = written - documented_fields("Record") - {"identity"}  # identity: its own section
    assert not missing, f"record fields docs/results-schema.md does not describe: {sorted(missing)}"


def test_terminal_report_per_device(pytester: pytest.Pytester) -> None:
    expect = make_project(pytester, waivers={})
    result = pytester.runpytest("-p", "no:xdist", "--rdma-expectations", str(expect))
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*rdma results per device*",
            "rxe0 (rxe): 5 checks: 2 conforms, 1 deviates, 1 unsupported, 1 not exercised",
            "siw0 (siw): 5 checks: 2 conforms, 1 deviates, 2 unsupported",
            "rxe0: 1 not covered by a waiver:",
            "  test_ibv_demo[[]keeps-promise-deviant[]] [[]ibv_demo(3) RETURN VALUE[]]",
            "      claim:    a mask with an undefined bit is refused with EINVAL",
            "      expected: refused with EINVAL",
            "      observed: ibv_demo succeeded -> 0",
            "      reproduce: rdma-reproducers/rxe0/ibv_demo.keeps-promise-deviant.c (C), *",
            "siw0: 1 not covered by a waiver:",
            "*",
            "rxe0: FAILS: 1 deviates",
            "siw0: FAILS: 1 deviates",
        ]
    )
    # Unsupported and not exercised checks are counted, and listed only when asked (-r or -v).
    assert "keeps-promise-unreached" not in result.stdout.str()
    listed = pytester.runpytest("-p", "no:xdist", "--rdma-expectations", str(expect), "-rs")
    listed.stdout.fnmatch_lines(
        [
            "rxe0: waived, unsupported and not exercised:",
            "  not exercised test_ibv_demo[[]keeps-promise-unreached[]]: could not reach RTS*",
            "  unsupported   test_ibv_demo[[]keeps-promise-blocked[]]: no DET runner*",
        ]
    )


def test_waived_devices_pass(pytester: pytest.Pytester) -> None:
    expect = make_project(pytester)
    result = pytester.runpytest("-p", "no:xdist", "--rdma-expectations", str(expect))
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        [
            "rxe0: PASSES: every exercised check conforms, 1 known deviations waived",
            "siw0: PASSES: every exercised check conforms, 1 known deviations waived",
        ]
    )


def test_a_device_with_nothing_exercised_fails_the_run(pytester: pytest.Pytester) -> None:
    expect = make_project(pytester, waivers={})
    # On rxe0 these two are not exercised and blocked: pytest sees two skips, the verdict sees nothing tested.
    result = pytester.runpytest(
        "-p", "no:xdist", "--rdma-expectations", str(expect), "-k", "rxe0 and (unreached or blocked)"
    )
    result.assert_outcomes(skipped=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["rxe0: FAILS: nothing could be exercised on this device (2 checks unsupported or not exercised)*"]
    )


def test_tests_without_device_get_no_record(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain():\n    assert True\n")
    result = pytester.runpytest("-p", "no:xdist", "--rdma-json", "r.json")
    result.assert_outcomes(passed=1)
    assert json.loads((pytester.path / "r.json").read_text())["results"] == []
    assert "rdma results per device" not in result.stdout.str()


def test_a_users_own_device_test_is_recorded(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile("""
import pytest


@pytest.mark.parametrize("rdma_dut", ["siw0"], indirect=True)
def test_mine(rdma_dut):
    assert rdma_dut.name == "rxe0", "a hand-written device test"
""")
    pytester.runpytest("-p", "no:xdist", "--rdma-json", "r.json")
    (record,) = records(pytester.path / "r.json").values()
    assert (record["outcome"], record["driver"], record["stable_id"], record["verb"]) == (
        "deviates",
        "siw",
        "test_mine",
        "",
    )
    assert record["observed"].startswith("AssertionError: a hand-written device test")


def test_the_report_counts_checks_decided_above_the_provider_apart() -> None:
    base = {"device": "rxe0", "driver": "rxe", "stable_id": "test_v[c]", "claim_text": "c", "ref": "v(3) NOTES"}
    lines, fails = render(
        [
            {**base, "outcome": "conforms", "decided_by": "kernel"},
            {**base, "outcome": "conforms", "decided_by": "provider"},
            {**base, "outcome": "unsupported", "decided_by": "libibverbs"},
        ],
        reproducers="r",
        verbose=False,
    )
    assert lines[0] == (
        "rxe0 (rxe): 3 checks: 2 conforms, 0 deviates, 1 unsupported (1 of them decided above the "
        "provider, by libibverbs or the kernel)"
    )
    assert lines[-1] == "rxe0: PASSES: every exercised check conforms" and not fails
