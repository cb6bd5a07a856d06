"""The lab's run as an unprivileged user: the claims about the process are decided there, and only there.

As root (the lab's main runs) a claim such as ibv_reg_mr's memlock-limit is not exercised: root is
not held to RLIMIT_MEMLOCK. The lab then runs the checks marked rdma_process as nobody, with no
capabilities and the default memlock limit (lab/guest.py unprivileged_run); this calls that very
function and reads what it wrote.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from pytest_rdma.lab import guest

REPO = Path(__file__).resolve().parents[2]
MEMLOCK = "test_ibv_reg_mr[memlock-limit-one-page-over]"
# The same refusal followed by the normal use of the device (kinds/relations.py): also a check about the process.
MEMLOCK_PATH = "test_ibv_reg_mr[failure-then-normal-use-after-memlock-limit-one-page-over]"


def records(path: Path) -> dict[str, dict]:
    return {r["stable_id"]: r for r in json.loads(path.read_text())["results"]}


def test_the_memlock_claim_is_decided_as_nobody_and_not_exercised_as_root(
    pytester: pytest.Pytester, device: str, tmp_path: Path
) -> None:
    # The lab's arguments may name the run's places: as nobody, {results} is its own directory.
    plan = {"python": sys.executable, "cwd": str(REPO), "pytest_args": ["--junitxml={results}/nobody.xml"]}
    env = dict(os.environ, PYTEST_RDMA_LAB_MARKS=str(tmp_path))
    code = guest.unprivileged_run(plan, device, tmp_path, env, xdist=False)
    assert (tmp_path / device / "unprivileged" / "nobody.xml").is_file()
    found = records(tmp_path / device / "unprivileged" / "results.json")
    assert set(found) == {MEMLOCK, MEMLOCK_PATH}, "only the checks about the process run as nobody"
    assert found[MEMLOCK]["outcome"] == found[MEMLOCK_PATH]["outcome"] == "conforms", found
    assert code == 0

    # The same check as root: not exercised, saying why.
    result = pytester.runpytest_subprocess(
        "--pyargs", "pytest_rdma.suites", f"--rdma-dev={device}", "-k", "memlock", f"--rdma-json={pytester.path}/r.json"
    )
    as_root = records(pytester.path / "r.json")[MEMLOCK]
    assert as_root["outcome"] == "not exercised"
    assert as_root["reason"].startswith("process.unprivileged = 0 in this process")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, "a device with nothing exercised fails the run"


def test_a_directory_nobody_cannot_enter_is_said_once_and_costs_no_result(
    device: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A checkout under a private directory (root's home): the lab says why nothing runs as nobody.
    assert guest.nobody_cannot_run({"python": sys.executable, "cwd": str(REPO)}) == ""
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    plan = {"python": sys.executable, "cwd": str(private), "pytest_args": []}
    why = guest.nobody_cannot_run(plan)
    assert "Permission denied" in why, why
    assert guest.unprivileged_run(plan, device, tmp_path, dict(os.environ), xdist=False, why_not=why) == 0
    said = capsys.readouterr().out
    assert f"lab: {device}: no run as nobody: nobody cannot run {sys.executable} in {private} ({why})" in said
    assert not (tmp_path / device / "unprivileged" / "results.json").exists()
