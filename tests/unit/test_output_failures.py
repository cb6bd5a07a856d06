"""An output that fails mid-run: one line naming the path and the error, no traceback, the checks go on,
what was written before stays readable, and the run exits 3.

The demo project (report_helpers) runs real checks through the plugin without a device. Two ways to
fail: a small tmpfs that fills up (root only: mount), and the results directory removed mid-run.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from report_helpers import CONFTEST, make_project, records

from pytest_rdma.cli import main as cli_main
from pytest_rdma.report.jsonfile import read_results

CHECKS = 10  # the demo project: five behaviours on two devices


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs, filled so that only a few results fit."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)], check=False).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        (disk / "filler").write_bytes(b"x" * (52 * 1024))
        yield disk
    finally:
        subprocess.run(["umount", str(disk)], check=False)


def failed_lines(result: pytest.RunResult) -> list[str]:
    text = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in text and "INTERNALERROR" not in text, text
    return [line for line in text.splitlines() if "cannot write" in line]


def test_a_full_disk_is_one_line_per_output_and_what_was_written_stays(
    pytester: pytest.Pytester, small_disk: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_project(pytester, waivers={})
    results = small_disk / "results.json"
    result = pytester.runpytest(
        "-p",
        "no:xdist",
        f"--rdma-json={results}",
        f"--rdma-allure={small_disk / 'allure'}",
        f"--rdma-reproducers={small_disk / 'reproducers'}",
    )
    assert result.ret == 3, result.stdout.str()
    lines = failed_lines(result)
    assert lines, result.stdout.str()
    for output in ("--rdma-json", "--rdma-allure"):
        said = [line for line in lines if f"ERROR: {output} " in line]
        assert len(said) == 1, lines
        assert "No space left on device" in said[0] and str(small_disk) in said[0] and "the checks go on" in said[0]
    # The checks went on: every verdict is in the terminal summary.
    result.stdout.fnmatch_lines([f"*{CHECKS} *"])
    # What was written before is readable: the lines (a cut-short last one skipped), and the document from them.
    lines_file = small_disk / "results.jsonl"
    kept = read_results(lines_file)
    assert kept["schema_version"] and len(kept["results"]) < CHECKS
    finished = tmp_path / "finished.json"
    assert cli_main(["finish", str(lines_file), "-o", str(finished)]) == 0
    capsys.readouterr()
    assert len(json.loads(finished.read_text())["results"]) == len(kept["results"])
    # No half-written Allure result: each one there is whole JSON.
    for path in (small_disk / "allure").glob("*-result.json"):
        json.loads(path.read_text())


REMOVER = """

_seen = []


def pytest_runtest_logfinish(nodeid, location):
    # The third check's end: the results directory goes away (a cleanup job, a lost mount), and a file takes
    # its place, so that no writer can make it again.
    _seen.append(nodeid)
    if len(_seen) == 3:
        import shutil
        shutil.rmtree(os.environ["OUT_DIR"])
        with open(os.environ["OUT_DIR"], "w") as handle:
            handle.write("not a directory")
"""


def test_a_results_directory_gone_mid_run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    make_project(pytester, waivers={})
    pytester.makeconftest(CONFTEST + REMOVER)
    out = pytester.path / "out"
    monkeypatch.setenv("OUT_DIR", str(out))
    result = pytester.runpytest(
        "-p",
        "no:xdist",
        f"--rdma-json={out}/results.json",
        f"--rdma-allure={out}/allure",
        f"--rdma-junit={out}/j.xml",
        "--rdma-reproducers=reproducers",
    )
    assert result.ret == 3, result.stdout.str()
    lines = failed_lines(result)
    for output in ("--rdma-json", "--rdma-allure", "--rdma-junit"):
        said = [line for line in lines if f"ERROR: {output} " in line]
        assert len(said) == 1 and "cannot write" in said[0] and str(out) in said[0], lines
    result.stdout.fnmatch_lines(["rdma: 3 output(s) failed during the run (*): the results there are incomplete; *"])
    out.unlink()


def test_a_run_whose_outputs_work_keeps_its_status(pytester: pytest.Pytester) -> None:
    make_project(pytester, waivers={})
    result = pytester.runpytest("-p", "no:xdist", "--rdma-json=r.json", "-k", "conforming")
    assert result.ret == 0 and not failed_lines(result)


def test_reproducers_that_cannot_be_written_leave_the_verdict(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_project(pytester, waivers={})
    pytester.makeconftest(CONFTEST + REMOVER)
    out = pytester.path / "out"
    monkeypatch.setenv("OUT_DIR", str(out))
    result = pytester.runpytest("-p", "no:xdist", "--rdma-json=r.json", f"--rdma-reproducers={out}/reproducers")
    assert result.ret == 3, result.stdout.str()
    [said] = failed_lines(result)
    assert said.startswith(f"ERROR: --rdma-reproducers {out}/reproducers: cannot write siw0 (")
    assert said.endswith("deviations from here on may have no reproducer files; the checks go on")
    deviations = {r["device"]: r for r in records(pytester.path / "r.json").values() if r["outcome"] == "deviates"}
    assert set(deviations) == {"rxe0", "siw0"}  # the verdicts stand
    assert deviations["rxe0"]["reproducer"]["c"] and "reproducer_error" not in deviations["rxe0"]
    assert "reproducer" not in deviations["siw0"]
    assert deviations["siw0"]["reproducer_error"].startswith("cannot write siw0 (")  # no machine's path
    out.unlink()
