"""Ctrl-C during a check's teardown: the check is reported whole, everywhere, then the run stops."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

CHECKS = """
import os
import signal

import pytest


@pytest.fixture
def torn_down_with_ctrl_c(record_property):
    record_property("rdma.driver", "rxe")
    yield
    os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C lands in this check's teardown
    print("teardown went on after the Ctrl-C")


def test_first(record_property):
    record_property("rdma.driver", "rxe")


def test_cut_in_its_teardown(torn_down_with_ctrl_c):
    pass


def test_never_started(record_property):
    pass
"""


def test_ctrl_c_in_a_teardown_waits_until_the_check_is_reported(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_checks=CHECKS)
    result = pytester.runpytest_subprocess("-p", "no:xdist", "-v", "-s", "--junitxml=junit.xml")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*teardown went on after the Ctrl-C*"])
    cases = ET.parse(pytester.path / "junit.xml").getroot().iter("testcase")
    properties = {case.get("name"): [p.get("name") for p in case.iter("property")] for case in cases}
    # Both checks the terminal called finished carry their properties; the third never ran.
    assert properties == {"test_first": ["rdma.driver"], "test_cut_in_its_teardown": ["rdma.driver"]}


def test_a_second_ctrl_c_interrupts_a_hanging_teardown(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_hang="""
import os
import signal
import time

import pytest


@pytest.fixture
def hangs():
    yield
    os.kill(os.getpid(), signal.SIGINT)
    os.kill(os.getpid(), signal.SIGINT)  # the user presses Ctrl-C again
    time.sleep(30)
    print("never printed")


def test_hangs_in_teardown(hangs):
    pass
"""
    )
    result = pytester.runpytest_subprocess("-p", "no:xdist", "-s", timeout=20)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert "never printed" not in result.stdout.str()
