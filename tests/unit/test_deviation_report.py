"""A deviation's failure text is the deviation itself: page, expected, observed, reproducer, place."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from report_helpers import make_project

# As an fnmatch pattern: the brackets of the id would be a character class.
DEVIANT = "test_demo.py::test_ibv_demo?rxe0-keeps-promise-deviant?"


def test_deviation_is_shown_without_a_traceback(pytester: pytest.Pytester) -> None:
    expect = make_project(pytester, waivers={})
    result = pytester.runpytest("-p", "no:xdist", "--rdma-expectations", str(expect), "-k", "rxe0 and deviant",
                                "--junitxml=junit.xml")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*deviation from ibv_demo(3) RETURN VALUE",
        "*  expected: EINVAL for a bad mask",
        "*  observed: returned 0",
        "*  attr_mask: 0x1",
        "*conftest.py:*: raised here",
        "*rdma reproducer*",
        "import pyverbs  # reproduce keeps-promise-deviant",
        f"FAILED {DEVIANT} - Deviation: E*",  # cut to the terminal width
    ])
    # No frames: pytest's traceback would show the test's source with its "> " marker line.
    result.stdout.no_fnmatch_line(">*run_case(rdma_case, rdma_dut, None)")
    failure = ET.parse(pytester.path / "junit.xml").find(".//testcase/failure")
    assert failure is not None
    assert failure.get("message") == "Deviation: EINVAL for a bad mask | observed: returned 0"
    assert "expected: EINVAL for a bad mask" in (failure.text or "")


def test_tb_long_brings_the_traceback_back(pytester: pytest.Pytester) -> None:
    expect = make_project(pytester, waivers={})
    result = pytester.runpytest("-p", "no:xdist", "--rdma-expectations", str(expect), "-k", "rxe0 and deviant",
                                "--tb=long")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([">*run_case(rdma_case, rdma_dut, None)"])


def test_waived_deviation_stays_waived(pytester: pytest.Pytester) -> None:
    expect = make_project(pytester)
    result = pytester.runpytest("-p", "no:xdist", "--rdma-expectations", str(expect), "-k", "deviant", "-rx")
    result.assert_outcomes(xfailed=2)
    result.stdout.fnmatch_lines([f"XFAIL {DEVIANT} - waived: rxe accepts the bad mask (known)*"])


def test_same_under_xdist(pytester: pytest.Pytester) -> None:
    expect = make_project(pytester, waivers={})
    result = pytester.runpytest("-n", "1", "--rdma-expectations", str(expect), "-k", "rxe0 and deviant")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*  observed: returned 0", "*: raised here", "*rdma reproducer*"])
    result.stdout.no_fnmatch_line(">*run_case(rdma_case, rdma_dut, None)")
