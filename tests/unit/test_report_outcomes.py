"""Every check ends as one classified outcome, carried on its report, right under xdist too."""

from __future__ import annotations

import json

import pytest
from report_helpers import TESTS, make_project, outcomes

NODE = "test_demo.py::test_ibv_demo"


def test_each_outcome_is_classified_per_driver(pytester: pytest.Pytester) -> None:
    expect = make_project(pytester, waivers={})
    result = pytester.runpytest("-p", "no:xdist", "--rdma-expectations", str(expect), "--rdma-json", "r.json")
    result.assert_outcomes(passed=3, failed=2, skipped=3)
    got = outcomes(pytester.path / "r.json")
    assert got == {
        f"{NODE}[rxe0-keeps-promise-conforming]": "conforms",
        f"{NODE}[rxe0-keeps-promise-deviant]": "deviates",
        f"{NODE}[rxe0-keeps-promise-rc-only]": "conforms",
        f"{NODE}[rxe0-keeps-promise-blocked]": "unsupported",
        f"{NODE}[siw0-keeps-promise-conforming]": "conforms",
        f"{NODE}[siw0-keeps-promise-deviant]": "deviates",
        f"{NODE}[siw0-keeps-promise-rc-only]": "unsupported",
        f"{NODE}[siw0-keeps-promise-blocked]": "unsupported",
    }


def test_record_carries_driver_claim_and_evidence(pytester: pytest.Pytester) -> None:
    expect = make_project(pytester, waivers={})
    pytester.runpytest("-p", "no:xdist", "--rdma-expectations", str(expect), "--rdma-json", "r.json")
    records = {r["nodeid"]: r for r in json.loads((pytester.path / "r.json").read_text())["results"]}
    deviant = records[f"{NODE}[siw0-keeps-promise-deviant]"]
    assert deviant["driver"] == "siw"
    assert deviant["identity"]["transport"] == "iw"
    assert (deviant["verb"], deviant["claim"], deviant["case_id"]) == ("ibv_demo", "keeps-promise",
                                                                       "keeps-promise-deviant")
    assert deviant["stable_id"] == "test_ibv_demo[keeps-promise-deviant]"
    assert (deviant["expected"], deviant["observed"]) == ("EINVAL for a bad mask", "returned 0")
    assert deviant["details"] == {"attr_mask": "0x1"}
    assert deviant["reproducer"].startswith("import pyverbs")
    assert deviant["pytest_outcome"] == "failed"
    blocked = records[f"{NODE}[rxe0-keeps-promise-blocked]"]
    assert blocked["blocked"] is True and blocked["reason"].startswith("blocked:")
    unsupported = records[f"{NODE}[siw0-keeps-promise-rc-only]"]
    assert unsupported["blocked"] is False and unsupported["reason"] == "unsupported: IBV_QPT_UD"


def test_reproducer_is_printed_with_the_failure(pytester: pytest.Pytester) -> None:
    expect = make_project(pytester, waivers={})
    result = pytester.runpytest("-p", "no:xdist", "--rdma-expectations", str(expect))
    result.stdout.fnmatch_lines(["*rdma reproducer*", "import pyverbs  # reproduce keeps-promise-deviant"])


def test_setup_error_and_body_error_are_errors(pytester: pytest.Pytester,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    expect = make_project(pytester, waivers={}, tests=TESTS + '''

@pytest.fixture
def broken_pd():
    raise OSError("ibv_alloc_pd: ENOMEM")


@pytest.mark.parametrize("rdma_dut", ["rxe0"], indirect=True)
def test_needs_pd(rdma_dut, broken_pd):
    pass


@pytest.mark.parametrize("rdma_case", [Case("ibv_demo", "keeps-promise", "demo", "err")], ids=["e"])
@pytest.mark.parametrize("rdma_dut", ["rxe0"], indirect=True)
def test_ibv_demo_err(rdma_dut, rdma_case):
    run_case(rdma_case, rdma_dut, None)
''')
    monkeypatch.setenv("DEMO_ERR", "error")
    pytester.runpytest("-p", "no:xdist", "--rdma-expectations", str(expect), "--rdma-json", "r.json")
    got = outcomes(pytester.path / "r.json")
    assert got["test_demo.py::test_needs_pd[rxe0]"] == "error"
    assert got["test_demo.py::test_ibv_demo_err[rxe0-e]"] == "error"


def test_timeout_is_one_timeout_result(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    expect = make_project(pytester, waivers={})
    monkeypatch.setenv("DEMO_CONFORMING", "hang")  # only rxe/siw "conforming" variants hang
    result = pytester.runpytest("-p", "no:xdist", "--rdma-expectations", str(expect), "--rdma-json", "r.json",
                                "--timeout", "1", "--timeout-method", "signal", "-k", "conforming or deviant")
    got = outcomes(pytester.path / "r.json")
    assert got[f"{NODE}[rxe0-keeps-promise-conforming]"] == "timeout"
    assert got[f"{NODE}[siw0-keeps-promise-conforming]"] == "timeout"
    assert got[f"{NODE}[rxe0-keeps-promise-deviant]"] == "deviates"
    result.assert_outcomes(failed=4)


def test_crashed_worker_is_one_crash_result(pytester: pytest.Pytester,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    expect = make_project(pytester, waivers={})
    monkeypatch.setenv("DEMO_RC_ONLY", "crash")  # rxe's rc-only case kills its process; siw's skips first
    result = pytester.runpytest_subprocess("-n", "1", "--rdma-expectations", str(expect),
                                           "--rdma-json", "r.json")
    got = outcomes(pytester.path / "r.json")
    assert got[f"{NODE}[rxe0-keeps-promise-rc-only]"] == "crash"
    assert len(got) == 8, "every other check still has its result"
    crash = next(r for r in json.loads((pytester.path / "r.json").read_text())["results"]
                 if r["outcome"] == "crash")
    assert (crash["driver"], crash["device"], crash["case_id"]) == ("rxe", "rxe0", "keeps-promise-rc-only")
    assert "-p no:xdist" in crash["reproducer"]
    result.stdout.fnmatch_lines(["*crash*"])


def test_xdist_gives_the_serial_outcomes_and_one_file(pytester: pytest.Pytester) -> None:
    expect = make_project(pytester)
    pytester.runpytest("-p", "no:xdist", "--rdma-expectations", str(expect), "--rdma-json", "serial.json")
    pytester.runpytest_subprocess("-n", "2", "--rdma-expectations", str(expect), "--rdma-json", "par.json")
    serial, parallel = outcomes(pytester.path / "serial.json"), outcomes(pytester.path / "par.json")
    assert serial == parallel
    assert "waived" in serial.values()
    lines = (pytester.path / "par.jsonl").read_text().splitlines()
    kinds = [json.loads(line)["type"] for line in lines]
    assert kinds == ["session"] + ["result"] * 8, "the controller alone writes, once per check"
    document = json.loads((pytester.path / "par.json").read_text())
    assert document["schema_version"] == 1
    assert set(document["devices"]) == {"rxe0", "siw0"}
    assert document["summary"]["siw"]["ibv_demo"] == {"conforms": 1, "waived": 1, "unsupported": 2}


def test_terminal_summary_per_driver(pytester: pytest.Pytester) -> None:
    expect = make_project(pytester, waivers={})
    result = pytester.runpytest("-p", "no:xdist", "--rdma-expectations", str(expect))
    result.stdout.fnmatch_lines([
        "*rdma results per driver*",
        "driver rxe (devices: rxe0): 4 checks",
        "*verb*conforms*deviates*unsupported*total",
        "*ibv_demo*2*1*1*4",
        "*deviates (1):",
        "*test_ibv_demo[[]rxe0-keeps-promise-deviant[]]",
        "*ref:*ibv_demo(3) RETURN VALUE",
        "*expected: EINVAL for a bad mask",
        "*observed: returned 0",
        "driver siw (devices: siw0): 4 checks",
    ])


def test_tests_without_device_get_no_record(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain():\n    assert True\n")
    result = pytester.runpytest("-p", "no:xdist", "--rdma-json", "r.json")
    result.assert_outcomes(passed=1)
    assert json.loads((pytester.path / "r.json").read_text())["results"] == []
    assert "rdma results per driver" not in result.stdout.str()
