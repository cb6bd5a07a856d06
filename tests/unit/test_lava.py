"""The shipped LAVA test definition, run as LAVA's test shell would run it: its parameters as shell
variables, then its steps in one shell, with a real lab run's results. LAVA's helpers
(lava-test-case, lava-test-set, ...) and pytest are stand-ins that log what they are given: the
suite's own run is the lab's business, this checks what the definition does around it."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tarfile
from collections import Counter
from pathlib import Path

import pytest
import yaml

from pytest_rdma.cli import main
from pytest_rdma.report import lava

SLICE = Path(__file__).parent / "data" / "results-rxe-slice.json"  # as in test_kcidb.py

STUB = """#!/bin/sh
echo "$(basename "$0") $*" >> "$LAVA_LOG"
"""
# pytest as the definition calls it: it writes the results file it is pointed at.
PYTEST_STUB = """#!/bin/sh
echo "pytest $*" >> "$LAVA_LOG"
while [ $# -gt 0 ]; do
    if [ "$1" = --rdma-json ]; then cp "$SLICE_FILE" "$2"; fi
    shift
done
exit 1
"""


def records() -> list[dict]:
    return json.loads(SLICE.read_text())["results"]


def definition() -> dict:
    return yaml.safe_load(lava.DEFINITION.read_text())


def run_definition(tmp_path: Path, **params: str) -> tuple[list[str], subprocess.CompletedProcess[str]]:
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    for name in ("lava-test-case", "lava-test-set", "lava-test-raise", "lava-test-reference"):
        (stubs / name).write_text(STUB)
    (stubs / "pytest").write_text(PYTEST_STUB)
    for stub in stubs.iterdir():
        stub.chmod(0o755)
    test = definition()
    values = {**test["params"], "INSTALL": "false", **params}
    script = "".join(f"{name}={shlex.quote(str(value))}\n" for name, value in values.items())
    script += "\n".join(test["run"]["steps"]) + "\n"
    log = tmp_path / "lava.log"
    env = {
        "PATH": os.pathsep.join([str(stubs), str(Path(sys.executable).parent), "/usr/bin", "/bin"]),
        "LAVA_LOG": str(log),
        "SLICE_FILE": str(SLICE),
        "HOME": str(tmp_path),
    }
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run(["sh", "-c", script], cwd=work, env=env, capture_output=True, text=True, timeout=120)
    return (log.read_text().splitlines() if log.exists() else []), done


def test_the_definition_is_a_lava_test_definition() -> None:
    test = definition()
    assert test["metadata"]["format"] == "Lava-Test Test Definition 1.0"
    assert not set(test["metadata"]["name"]) & set("$& \"'`()<>/\\|;")  # LAVA refuses these in the name
    assert {"RDMA_DEV", "RDMA_PEER", "PYTEST_ARGS", "RESULTS"} <= set(test["params"])
    assert all(isinstance(step, str) for step in test["run"]["steps"])


def test_a_real_run_becomes_one_lava_test_case_per_check(tmp_path: Path) -> None:
    log, done = run_definition(tmp_path, RDMA_DEV="rxe0")
    assert done.returncode == 0, done.stderr
    (pytest_line,) = [line for line in log if line.startswith("pytest ")]
    assert "--rdma-dev rxe0" in pytest_line and "--rdma-json pytest-rdma-results/rxe0/results.json" in pytest_line
    source = records()
    cases = [line.split() for line in log if line.startswith("lava-test-case ")]
    assert len(cases) == len(source)
    assert log[log.index("lava-test-set start rxe0") + 1].startswith("lava-test-case ")
    assert "lava-test-set stop rxe0" in log
    results = Counter(case[case.index("--result") + 1] for case in cases)
    assert results == Counter(lava.RESULT[record["outcome"]] for record in source)
    names = [case[1] for case in cases]
    assert names[0] == lava.case_name(source[0]) and all(len(name) <= 100 for name in names)
    # The results files are kept, packed beside the test, as artifacts.
    with tarfile.open(tmp_path / "work" / "pytest-rdma-results.tar.gz") as packed:
        kept = packed.getnames()
    assert {"pytest-rdma-results/rxe0/results.json", "pytest-rdma-results/lava-test-cases.sh"} <= set(kept)


def test_without_a_device_the_job_says_what_to_set(tmp_path: Path) -> None:
    log, _ = run_definition(tmp_path)
    assert log and log[0].startswith("lava-test-raise ") and "RDMA_DEV is not set" in log[0]
    assert not [line for line in log if line.startswith(("pytest ", "lava-test-case "))]


def test_results_map_as_in_the_junit_file() -> None:
    assert lava.RESULT == {
        "conforms": "pass",
        "deviates": "fail",
        "crash": "fail",
        "timeout": "fail",
        "error": "fail",
        "waived": "skip",
        "unsupported": "skip",
        "not exercised": "skip",
    }


def test_a_long_name_keeps_lavas_limit_and_stays_apart() -> None:
    long = {"verb": "ibv_x", "claim": "c", "variant": "v" * 200}
    other = {**long, "variant": "v" * 199 + "w"}
    name = lava.case_name(long)
    assert len(name) == 100 and name != lava.case_name(other) and name.startswith("ibv_x.c.vvv")


def test_printer_prints_the_definition(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lava", "--definition"]) == 0
    assert capsys.readouterr().out == lava.DEFINITION.read_text()


def test_printer_without_results(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lava"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "no results file given" in err
