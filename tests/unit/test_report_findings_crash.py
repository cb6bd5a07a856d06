"""Guard findings reach the JSON record and JUnit; a crashed check keeps its JUnit properties.

Pure reporting logic, on the host: the finding is attached through the guards' own path
(guard.findings.attach at teardown, copied onto the report by guard/summary.py), as the leak
and kernel-log guards do in the lab; only the measurement that would find it needs a device.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from report_helpers import TESTS, make_project

NODE = "test_demo.py::test_ibv_demo"
LEAK = {"rxe0": {"pd": 1}}
KERNEL = {"kinds": ["warning"], "lines": ["WARNING: CPU: 0 PID: 7 at demo", "demo warning 1234"],
          "from_user_space": True, "lost": False}

# The demo checks, plus a fixture that attaches a finding to the rxe0 deviant check at teardown.
FINDINGS_TESTS = TESTS.replace("VARIANTS = ", '''@pytest.fixture
def guard_finding(request, rdma_case, rdma_dut):
    yield
    from pytest_rdma.guard.findings import KERNEL_LOG_FIELD, LEAK_FIELD, attach
    if rdma_dut.name == "rxe0" and rdma_case.variant == "deviant":
        attach(request.node, LEAK_FIELD, LEAK, "rdma leak", "rxe0: +1 pd")
        attach(request.node, KERNEL_LOG_FIELD, KERNEL, "rdma kernel log", "[warning] ...")


VARIANTS = ''').replace("def test_ibv_demo(rdma_dut, rdma_case):",
                         "def test_ibv_demo(rdma_dut, rdma_case, guard_finding):")
FINDINGS_TESTS += f"\nLEAK = {LEAK!r}\nKERNEL = {KERNEL!r}\n"


def _records(path: Path) -> dict[str, dict]:
    return {r["nodeid"]: r for r in json.loads(path.read_text())["results"]}


def _case_props(path: Path, name: str) -> dict[str, str]:
    suite = ET.parse(path).getroot().find("testsuite")
    assert suite is not None
    case = next(c for c in suite.iter("testcase") if c.get("name") == name)
    return {p.get("name") or "": p.get("value") or "" for p in case.iter("property")}


@pytest.mark.parametrize("xdist", [["-p", "no:xdist"], ["-n", "2"]], ids=["serial", "xdist"])
def test_guard_findings_are_in_the_json_record_and_junit(pytester: pytest.Pytester, xdist: list[str]) -> None:
    expect = make_project(pytester, tests=FINDINGS_TESTS, waivers={})
    pytester.runpytest_subprocess(*xdist, "--rdma-expectations", str(expect), "--rdma-json", "r.json",
                                  "--junitxml", "j.xml")
    records = _records(pytester.path / "r.json")
    found = records[f"{NODE}[rxe0-keeps-promise-deviant]"]
    assert (found["leak"], found["kernel_log"]) == (LEAK, KERNEL)
    # The finding does not change the outcome (report mode); fail mode is the guards' own teardown error.
    assert found["outcome"] == "deviates"
    others = [r for nodeid, r in records.items() if nodeid != found["nodeid"]]
    assert len(others) == 7 and all(r["leak"] is None and r["kernel_log"] is None for r in others)
    lines = [json.loads(line) for line in (pytester.path / "r.jsonl").read_text().splitlines()]
    assert next(line for line in lines if line.get("nodeid") == found["nodeid"])["leak"] == LEAK
    props = _case_props(pytester.path / "j.xml", "test_ibv_demo[rxe0-keeps-promise-deviant]")
    assert props["rdma.leak"] == "rxe0: +1 pd"
    # The WARNING line and the warning's message, which is what identifies it.
    assert props["rdma.kernel_log"] == ("warning (written from user space): WARNING: CPU: 0 PID: 7 at demo; "
                                        "demo warning 1234")
    assert props["rdma.driver"] == "rxe", "the worker-side properties are still there"
    clean = _case_props(pytester.path / "j.xml", "test_ibv_demo[siw0-keeps-promise-deviant]")
    assert "rdma.leak" not in clean and "rdma.kernel_log" not in clean


def test_crashed_check_has_its_junit_properties(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    expect = make_project(pytester, waivers={})
    monkeypatch.setenv("DEMO_RC_ONLY", "crash")  # rxe's rc-only case kills its worker; siw's skips first
    pytester.runpytest_subprocess("-n", "1", "--rdma-expectations", str(expect), "--junitxml", "j.xml")
    props = _case_props(pytester.path / "j.xml", "test_ibv_demo[rxe0-keeps-promise-rc-only]")
    assert (props["rdma.device"], props["rdma.driver"]) == ("rxe0", "rxe")
    assert (props["rdma.verb"], props["rdma.claim"], props["rdma.case_id"]) == (
        "ibv_demo", "keeps-promise", "keeps-promise-rc-only")
    assert props["rdma.transport"] == "roce"
    suite = ET.parse(pytester.path / "j.xml").getroot().find("testsuite")
    assert suite is not None
    case = next(c for c in suite.iter("testcase") if c.get("name") == "test_ibv_demo[rxe0-keeps-promise-rc-only]")
    assert case.find("error") is not None and "crashed" in (case.find("error").get("message") or "")
    # Each property once, not added again by some other path.
    names = [p.get("name") for p in case.iter("property")]
    assert len(names) == len(set(names))


# The demo checks, with a fixture whose teardown is interrupted (Ctrl-C) after rxe0's conforming check.
INTERRUPTED_TESTS = TESTS.replace("VARIANTS = ", '''@pytest.fixture
def interrupt_teardown(rdma_case, rdma_dut):
    yield
    if rdma_dut.name == "rxe0" and rdma_case.variant == "conforming":
        raise KeyboardInterrupt


VARIANTS = ''').replace("def test_ibv_demo(rdma_dut, rdma_case):",
                         "def test_ibv_demo(rdma_dut, rdma_case, interrupt_teardown):")


def test_check_whose_teardown_was_interrupted_keeps_its_junit_properties(pytester: pytest.Pytester) -> None:
    expect = make_project(pytester, waivers={}, tests=INTERRUPTED_TESTS)
    # In a subprocess: in-process, the KeyboardInterrupt would end this session too.
    result = pytester.runpytest_subprocess("-p", "no:xdist", "--rdma-expectations", str(expect),
                                           "--junitxml", "j.xml")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    # Its outcome was reported before the interruption, so it is a finished check, with its identity.
    props = _case_props(pytester.path / "j.xml", "test_ibv_demo[rxe0-keeps-promise-conforming]")
    assert (props["rdma.device"], props["rdma.driver"], props["rdma.case_id"]) == (
        "rxe0", "rxe", "keeps-promise-conforming")
