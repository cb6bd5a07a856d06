"""Files a lab run writes to the VM's tmpfs reach the results directory as one tar, unpacked on the host."""

from __future__ import annotations

from pathlib import Path

from pytest_rdma.lab import unpack_scratch
from pytest_rdma.lab.command import LAB_REPORTS
from pytest_rdma.lab.guest import SCRATCH_TAR, keep_scratch


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


def test_allure_goes_to_scratch_and_json_lines_to_the_share() -> None:
    # The JSON lines must be on the share as each check ends: they are what an interrupted run keeps.
    assert "--rdma-json={results}/results.json" in LAB_REPORTS
    assert "--rdma-allure={scratch}/allure" in LAB_REPORTS


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
