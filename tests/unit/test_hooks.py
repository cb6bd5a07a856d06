"""pytest-rdma's hooks (hooks.py), used from outside the package: a conftest adds a claim kind with
`pytest_rdma_kinds` and a reporter with `pytest_rdma_record`; a verb of `rdma_catalogue_extra` uses the
kind, its checks run, and the reporter receives each check's record once, with xdist or without."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from report_helpers import TESTS, make_project

from pytest_rdma.kinds.registry import KINDS

ECHO_VERB = """

from dataclasses import dataclass

from pytest_rdma.catalogue.model import RETURNS_ERRNO, Claim, Need, Param, Verb

IBV_ECHO = Verb(
    name="ibv_echo",
    man="ibv_echo(3)",
    prototype="int ibv_echo(struct ibv_context *context, int attr_mask);",
    returns=RETURNS_ERRNO,
    summary="the hooks' self-test verb",
    params=(Param("context", "struct ibv_context *", default=Need("context")), Param("attr_mask", "int", default=0)),
    claims=(
        Claim("answers", "echo", "the verb answers with the errno it is told to", "RETURN VALUE",
              over={"told": ("EINVAL", "ENOMEM")}, variant="{told}", params={"errno_name": "{told}"}),
    ),
)
VERBS = (IBV_DEMO, IBV_ECHO)
"""

OUTSIDE_PLUGIN = '''

import dataclasses
import json
import os

from pytest_rdma.kinds.registry import define


@dataclasses.dataclass(frozen=True)
class EchoParams:
    errno_name: str


def echo(check):
    """The verb answers with the errno the claim names."""
    recorded(check, check.params(EchoParams).errno_name)


def pytest_rdma_kinds():
    return [define("echo", echo, params=EchoParams)]


def pytest_rdma_record(record):
    with open(os.environ["RECEIVED"], "a") as received:
        received.write(json.dumps([record["nodeid"], record["kind"], record["outcome"], os.getpid()]) + "\\n")
'''


def outside_project(pytester: pytest.Pytester) -> Path:
    """The demo project, plus a kind and a reporter from its conftest and a verb that uses the kind."""
    expect = make_project(pytester, tests=TESTS.replace('active()["ibv_demo"]', 'active()["ibv_echo"]'), waivers={})
    for name, added in (("rdma_demo.py", ECHO_VERB), ("conftest.py", OUTSIDE_PLUGIN)):
        path = pytester.path / name
        path.write_text(path.read_text() + added)
    return expect


@pytest.mark.parametrize("workers", [["-p", "no:xdist"], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_kind_and_a_reporter_from_outside_the_package(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, workers: list[str]
) -> None:
    expect = outside_project(pytester)
    received = pytester.path / "received.jsonl"
    monkeypatch.setenv("RECEIVED", str(received))
    result = pytester.runpytest_subprocess(*workers, "--rdma-expectations", str(expect), "--rdma-json", "r.json")
    result.assert_outcomes(passed=4)
    records = json.loads((pytester.path / "r.json").read_text())["results"]
    assert (
        sorted(r["stable_id"] for r in records)
        == ["test_ibv_echo[answers-EINVAL]"] * 2 + ["test_ibv_echo[answers-ENOMEM]"] * 2
    )
    assert {r["kind"] for r in records} == {"echo"}
    lines = [json.loads(line) for line in received.read_text().splitlines()]
    # Each record once, all in one process: the only one, or xdist's controller (not a worker).
    assert sorted(nodeid for nodeid, *_ in lines) == sorted(r["nodeid"] for r in records)
    assert {(kind, outcome) for _, kind, outcome, _ in lines} == {("echo", "conforms")}
    assert len({pid for *_, pid in lines}) == 1
    assert "echo" not in KINDS, "a plugin's kinds do not outlive its session"


def test_a_kind_name_taken_twice_is_a_usage_error(pytester: pytest.Pytester) -> None:
    expect = outside_project(pytester)
    conftest = pytester.path / "conftest.py"
    conftest.write_text(conftest.read_text().replace('define("echo"', 'define("demo"'))
    result = pytester.runpytest_subprocess("-p", "no:xdist", "--rdma-expectations", str(expect))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: claim kind 'demo' is added twice (pytest_rdma_kinds): once is the most"])
