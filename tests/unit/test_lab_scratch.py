"""Files a lab run writes to the VM's tmpfs reach the results directory as one tar, unpacked on the host;
the host writes each run's Allure results from its results file."""

from __future__ import annotations

import json
from pathlib import Path

from allure_records import cases, record

from pytest_rdma.lab import LAB_ALLURE, LabRequest, unpack_scratch, write_allure
from pytest_rdma.lab.command import LAB_REPORTS
from pytest_rdma.lab.guest import SCRATCH_TAR, keep_scratch
from pytest_rdma.outcomes import CONFORMS, DEVIATES
from pytest_rdma.report.allure_config import read_environment
from pytest_rdma.report.record import SCHEMA_VERSION


def test_scratch_files_land_in_the_run_directory(tmp_path: Path) -> None:
    scratch, results = tmp_path / "scratch", tmp_path / "results"
    (scratch / "allure").mkdir(parents=True)
    (scratch / "allure" / "1-result.json").write_text('{"status": "failed"}')
    run_dir = results / "rxe0"
    run_dir.mkdir(parents=True)
    keep_scratch(scratch, run_dir)
    assert [p.name for p in run_dir.iterdir()] == [SCRATCH_TAR]  # one file crosses the share
    unpack_scratch(results)
    assert (run_dir / "allure" / "1-result.json").read_text() == '{"status": "failed"}'
    assert not (run_dir / SCRATCH_TAR).exists()


def test_empty_scratch_leaves_nothing(tmp_path: Path) -> None:
    (tmp_path / "scratch").mkdir()
    keep_scratch(tmp_path / "scratch", tmp_path)
    assert list(tmp_path.iterdir()) == [tmp_path / "scratch"]


def test_the_json_lines_go_to_the_share_and_the_vm_writes_no_allure() -> None:
    # The JSON lines must be on the share as each check ends: they are what an interrupted run keeps, and
    # what the host writes the Allure results from (lab.write_allure), so the VM writes none.
    assert "--rdma-json={results}/results.json" in LAB_REPORTS
    assert not [arg for arg in LAB_REPORTS if "allure" in arg]


STARTED = 0.0  # the lab run's start (wall clock): every file of these tests is newer


def cut_short(run_dir: Path, records: list[dict]) -> None:
    """The lines a killed VM leaves: a session line and the records, the last one half written."""
    lines = [json.dumps({"type": "session", "schema_version": SCHEMA_VERSION}), *map(json.dumps, records)]
    run_dir.mkdir(parents=True)
    (run_dir / "results.jsonl").write_text("\n".join(lines) + '\n{"type": "result", "stable_')


def test_the_host_writes_each_runs_allure_results_from_its_results_file(tmp_path: Path) -> None:
    """Even from the lines of a VM killed mid-run: each record once, and a device that ran nothing named."""
    results = tmp_path / "results"
    checks = [case for case in cases() if case.verb == "ibv_query_gid"][:3]
    cut_short(results / "rxe0", [record(checks[0], "rxe0", DEVIATES), record(checks[1], "rxe0", CONFORMS)])
    (results / "siw0").mkdir()  # its run wrote nothing
    said: list[str] = []
    write_allure(LabRequest(devices=["rxe0", "siw0"], allure=True), results, said.append, STARTED)
    written = [json.loads(path.read_text()) for path in (results / "rxe0" / LAB_ALLURE).glob("*-result.json")]
    assert sorted(r["fullName"] for r in written) == sorted(f"rxe.{c.verb}: {c.stable_id} on rxe0" for c in checks[:2])
    assert read_environment(results / "rxe0" / LAB_ALLURE)["rxe0"]["driver"] == "rxe"
    assert not (results / "siw0" / LAB_ALLURE).exists()  # the report's gate says siw0 has no results
    assert said and said[0].startswith("lab: Allure results of 2 checks written")
    untouched = tmp_path / "untouched"
    cut_short(untouched / "rxe0", [record(checks[0], "rxe0", DEVIATES)])
    write_allure(LabRequest(devices=["rxe0"]), untouched, said.append, STARTED)  # a run that did not ask for them
    assert not (untouched / "rxe0" / LAB_ALLURE).exists()


def test_a_run_of_several_devices_names_each_in_its_allure_environment(tmp_path: Path) -> None:
    results = tmp_path / "results"
    check = next(case for case in cases() if case.verb == "ibv_query_gid")
    cut_short(results / "rxe0+siw0", [record(check, "rxe0", CONFORMS)])
    write_allure(LabRequest(devices=["rxe0", "siw0"], per_device=False, allure=True), results, print, STARTED)
    assert set(read_environment(results / "rxe0+siw0" / LAB_ALLURE)) == {"rxe0", "siw0"}


def test_without_gnu_tar_python_packs_the_same(tmp_path: Path, monkeypatch) -> None:
    """GNU tar packs the scratch (tarfile costs seconds per run under TCG); without it, tarfile does."""
    import shutil

    from pytest_rdma.lab import guest

    assert shutil.which("tar") is not None  # this host has GNU tar: the first pass uses it
    packed: dict[str, list[str]] = {}
    for how in ("tar", "tarfile"):
        if how == "tarfile":
            monkeypatch.setattr(guest.shutil, "which", lambda name: None)
        scratch, results = tmp_path / how / "scratch", tmp_path / how / "results"
        (scratch / "allure").mkdir(parents=True)
        (scratch / "allure" / "1-result.json").write_text("{}")
        (scratch / "allure" / "1-attachment.c").write_text("int main(void) { return 0; }\n")
        (results / "rxe0").mkdir(parents=True)
        keep_scratch(scratch, results / "rxe0")
        unpack_scratch(results)
        packed[how] = sorted(p.relative_to(results).as_posix() for p in results.rglob("*"))
    assert (
        packed["tar"]
        == packed["tarfile"]
        == [
            "rxe0",
            "rxe0/allure",
            "rxe0/allure/1-attachment.c",
            "rxe0/allure/1-result.json",
        ]
    )


def test_an_earlier_runs_results_file_gives_no_allure_results(tmp_path: Path) -> None:
    """A run that never started this time (its VM did not boot) leaves the last run's file: the gate must not pass."""
    results = tmp_path / "results"
    check = next(case for case in cases() if case.verb == "ibv_query_gid")
    cut_short(results / "rxe0", [record(check, "rxe0", CONFORMS)])
    stale = (results / "rxe0" / "results.jsonl").stat().st_mtime
    write_allure(LabRequest(devices=["rxe0"], allure=True), results, print, stale + 60)
    assert not (results / "rxe0" / LAB_ALLURE).exists()
