"""A deviation's failure text is the deviation itself: expected, observed, details, place; no traceback."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from report_helpers import make_project, node, summary_message

# As an fnmatch pattern: the brackets of the id would be a character class.
DEVIANT = node("rxe0", "deviant").replace("[", "?").replace("]", "?")
TRACEBACK_LINE = ">*run_case(request, rdma_case, rdma_dut)"  # the generated test's frame, as pytest shows it


def test_deviation_is_shown_without_a_traceback(pytester: pytest.Pytester) -> None:
    expect = make_project(pytester, waivers={})
    result = pytester.runpytest(
        "-p", "no:xdist", "--rdma-expectations", str(expect), "-k", "rxe0 and deviant", "--rdma-junit=junit.xml"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_ibv_demo?rxe0-keeps-promise-deviant?*",
            "expected: refused with EINVAL",
            "observed: ibv_demo succeeded -> 0",
            "attr_mask: 0x40000000",
            "*conftest.py:*: raised here",
            f"FAILED {DEVIANT}{summary_message('expected: *')}",
        ]
    )
    # No frames: pytest's traceback would show the test's source with its "> " marker line.
    result.stdout.no_fnmatch_line(TRACEBACK_LINE)
    failure = ET.parse(pytester.path / "junit.xml").find(".//testcase/failure")
    assert failure is not None
    assert failure.get("message") == (
        "deviates from ibv_demo(3) RETURN VALUE: expected refused with EINVAL; observed ibv_demo succeeded -> 0"
    )
    assert failure.text == "[0] call: ibv_demo(ctx, 0x40000000) -> 0", "the recorded calls are the evidence"


def test_tb_long_brings_the_traceback_back(pytester: pytest.Pytester) -> None:
    expect = make_project(pytester, waivers={})
    result = pytester.runpytest(
        "-p", "no:xdist", "--rdma-expectations", str(expect), "-k", "rxe0 and deviant", "--tb=long"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([TRACEBACK_LINE])


def test_waived_deviation_stays_waived(pytester: pytest.Pytester) -> None:
    expect = make_project(pytester)
    result = pytester.runpytest("-p", "no:xdist", "--rdma-expectations", str(expect), "-k", "deviant", "-rx")
    result.assert_outcomes(xfailed=2)
    result.stdout.fnmatch_lines([f"XFAIL {DEVIANT} - waived: rxe accepts the bad mask (known)*"])


def test_same_under_xdist(pytester: pytest.Pytester) -> None:
    expect = make_project(pytester, waivers={})
    result = pytester.runpytest("-n", "1", "--rdma-expectations", str(expect), "-k", "rxe0 and deviant")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["observed: ibv_demo succeeded -> 0", "*: raised here"])
    result.stdout.no_fnmatch_line(TRACEBACK_LINE)
    result.stdout.no_fnmatch_line("*INTERNALERROR*")
