"""Nothing judged is never a pass, and nothing we did not write is deleted (issue 30, items 1 and 2).

The gate of `pytest-rdma report` and of the lab over results folders that hold nothing of ours,
junk, another tool's results or a device that exercised nothing; the writer removing only its own
device's earlier results; two devices' runs in one folder making one report. The results are
written by the real writer from records of real catalogue cases (allure_records.py); the tests that
build the HTML report need Node.js and npm (Allure 3 from npm), the others none.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from allure_records import find, record

from pytest_rdma import cli
from pytest_rdma.outcomes import CONFORMS, DEVIATES, NOT_EXERCISED, UNSUPPORTED, WAIVED
from pytest_rdma.report import allure_gate, allure_writer
from pytest_rdma.report.allure_config import environments, merged_devices
from pytest_rdma.report.allure_html import allure_cli, report_main
from pytest_rdma.report.allure_writer import AllureWriter, manifest_file
from pytest_rdma.report.results import Results

A = "test_ibv_modify_qp[required-attrs-RC-RESET>INIT-without-STATE]"
B = "test_ibv_modify_qp[forbidden-attrs-RC-RTR>RTS-with-PATH_MTU]"
D = "test_ibv_modify_qp[forbidden-attrs-RAW_PACKET-INIT>RTR-with-ACCESS_FLAGS]"
E = "test_ibv_create_qp[cap-writeback-RC-max_recv_wr-5]"


def run(directory: Path, device: str, plan: dict[str, str], finish: bool = True) -> AllureWriter:
    """One device's run into `directory`, by the real writer (finish=False: killed before its end)."""
    writer = AllureWriter(directory, Results((device,)), directory.parent / "reproducers")
    writer.pytest_sessionstart(None)  # type: ignore[arg-type]
    for stable_id, outcome in plan.items():
        writer.append(record(find(stable_id), device, outcome))
    if finish:
        writer.pytest_sessionfinish(None)  # type: ignore[arg-type]
    return writer


def allure_pytest_results(directory: Path, statuses: list[str]) -> list[Path]:
    """Results as allure-pytest writes them (its labels: framework "pytest", language, ...)."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for n, status in enumerate(statuses):
        path = directory / f"{n:08d}-0000-0000-0000-000000000000-result.json"
        labels = [{"name": "framework", "value": "pytest"}, {"name": "language", "value": "cpython3"}]
        path.write_text(json.dumps({"name": f"test_app_{n}", "status": status, "labels": labels}))
        written.append(path)
    (directory / "ffffffff-0000-0000-0000-000000000000-container.json").write_text("{}")
    return written


def ours(directory: Path) -> dict[str, dict[str, str]]:
    """file name -> labels, for every result of pytest-rdma in the directory."""
    found = {}
    for path in directory.glob("*-result.json"):
        labels = {label["name"]: label["value"] for label in json.loads(path.read_text()).get("labels", [])}
        if labels.get("framework") == "pytest-rdma":
            found[path.name] = labels
    return found


def report(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = report_main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def needs_node() -> None:
    try:
        allure_cli()
    except RuntimeError as exc:
        pytest.skip(str(exc))


# -- nothing judged is never a pass (no Node needed: nothing is built) ------------------------------------


def test_an_empty_folder_fails_the_gate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "allure-results"
    empty.mkdir()
    code, out, err = report([str(empty), "-o", str(tmp_path / "out")], capsys)
    assert code == 1, (out, err)
    assert err.strip() == (
        f"report: quality gate FAILED: no result of pytest-rdma in {empty} (nothing): nothing was judged; "
        "give the directories pytest --rdma-allure DIR wrote"
    )
    assert "passed" not in out and not (tmp_path / "out").exists()


def test_junk_files_fail_the_gate_and_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "notes.txt").write_text("hello")
    (junk / "a-result.json").write_text("not json {")
    (junk / "b-result.json").write_bytes(b"\xff\xfe")
    (junk / "c-result.json").write_text('["a list, not a result"]')
    (junk / "pytest-rdma-environment-rxe0.json").write_text("{broken")
    code, out, err = report([str(junk), "-o", str(tmp_path / "out")], capsys)
    assert code == 1, (out, err)
    assert len(err.splitlines()) == 1, err
    assert "no result of pytest-rdma" in err
    assert (
        "(only 4 unreadable files (pytest-rdma-environment-rxe0.json, a-result.json, b-result.json, ...); "
        "1 other file)" in err
    ), err


def test_only_another_tools_failed_results_fail_the_gate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "allure-results"
    allure_pytest_results(folder, ["failed", "failed", "passed"])
    code, out, err = report([str(folder), "-o", str(tmp_path / "out")], capsys)
    assert code == 1, (out, err)
    assert "no result of pytest-rdma" in err and "(only 3 results of other tools (framework 'pytest': 3))" in err


def test_ours_and_another_tools_are_counted_apart(tmp_path: Path) -> None:
    folder = tmp_path / "allure-results"
    allure_pytest_results(folder, ["failed", "broken"])
    run(folder, "rxe0", {A: CONFORMS, B: WAIVED, D: UNSUPPORTED})
    found = allure_gate.survey([folder])
    assert dict(found.ours["rxe0"]) == {CONFORMS: 1, WAIVED: 1, UNSUPPORTED: 1}
    assert dict(found.foreign) == {"pytest": 2} and found.unreadable == [] and found.other_files == 0
    assert allure_gate.missing(found) == ""
    assert allure_gate.passed(found, "") == (
        "quality gate passed: 3 checks of pytest-rdma (3 on rxe0 (rxe)); "
        "not judged: 2 results of other tools (framework 'pytest': 2)"
    )


def test_a_device_that_exercised_nothing_fails_the_gate(tmp_path: Path) -> None:
    folder = tmp_path / "allure-results"
    run(folder, "rxe0", {A: CONFORMS})
    run(folder, "siw0", {D: UNSUPPORTED, E: NOT_EXERCISED})
    assert allure_gate.missing(allure_gate.survey([folder])) == (
        "siw0 (siw) exercised nothing: its 2 checks are 1 not exercised, 1 unsupported"
    )
    # A device whose run started and wrote no result is named by its environment file.
    silent = tmp_path / "silent"
    run(silent, "rxe0", {A: CONFORMS})
    run(silent, "siw0", {})
    assert allure_gate.missing(allure_gate.survey([silent])) == (
        "siw0 exercised nothing: the run named it, and no result of it is here"
    )
    # A device the lab asked for whose results are in no folder.
    assert allure_gate.missing(allure_gate.survey([folder], ["rxe0", "siw0", "rxe1"])).endswith(
        "; rxe1 exercised nothing: the run named it, and no result of it is here"
    )


def test_the_lab_fails_when_a_device_has_no_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(tmp_path / "rxe0" / "allure", "rxe0", {A: CONFORMS})
    assert cli._allure_html(tmp_path, ["rxe0"], html=False) is True
    assert capsys.readouterr().out == "lab: quality gate passed: 1 checks of pytest-rdma (1 on rxe0 (rxe))\n"
    assert cli._allure_html(tmp_path, ["rxe0", "siw0"], html=False) is False
    assert capsys.readouterr().out == (
        "lab: quality gate FAILED: siw0 exercised nothing: the run named it, and no result of it is here\n"
    )
    assert cli._allure_html(tmp_path / "nowhere", ["rxe0"], html=False) is False
    assert "lab: quality gate FAILED: no result of pytest-rdma" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("written", "args", "code", "says"),
    [
        (["rxe0", "siw0"], [], 0, "lab: quality gate passed: 2 checks of pytest-rdma"),
        (["rxe0"], [], 1, "lab: quality gate FAILED: siw0 exercised nothing"),
        ([], [], 1, "lab: quality gate FAILED: no result of pytest-rdma"),
        ([], ["tests"], 0, "lab: no Allure result of pytest-rdma to judge"),  # tests of one's own
        (["rxe0"], ["tests"], 1, "lab: quality gate FAILED: siw0 exercised nothing"),
    ],
)
def test_the_labs_exit_is_its_gates(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    written: list[str],
    args: list[str],
    code: int,
    says: str,
) -> None:
    """pytest said 0 on each device; the lab's exit is 1 when its gate finds a device without results."""
    results = tmp_path / "results"

    def lab_run(request: object) -> int:
        for device in written:
            run(results / device / "allure", device, {A: CONFORMS})
        return 0

    monkeypatch.setattr(cli.lab, "run", lab_run)
    monkeypatch.chdir(Path(__file__).parents[2])
    argv = ["--dev", "rxe0", "--dev", "siw0", "--results", str(results), "--no-html", "--", *args]
    assert cli.cmd_lab(argv) == code
    assert says in capsys.readouterr().out


@pytest.mark.parametrize(
    ("on_612", "code", "says"),
    [
        (["rxe0", "siw0"], 0, "lab: quality gate passed"),
        (["rxe0"], 1, "lab: quality gate FAILED: 6.12.117+deb12-amd64: siw0 exercised nothing"),
    ],
    ids=["both-kernels-both-devices", "a-device-idle-on-one-kernel"],
)
def test_a_kernel_matrix_is_gated_per_release(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], on_612, code, says
) -> None:
    """pytest said 0 on each kernel; a device with no result on one kernel fails the matrix, though the other
    kernel's run of it would have satisfied one gate over all the folders together."""
    from pytest_rdma.lab import matrix

    results = tmp_path / "results"
    kernels = {"6.1.0-56-amd64": ["rxe0", "siw0"], "6.12.117+deb12-amd64": on_612}

    def matrix_run(request: object, names: list[str]) -> tuple[int, list[matrix.KernelRun]]:
        for release in names:
            for device in kernels[release]:
                run(results / release / device / "allure", device, {A: CONFORMS})
        return 0, [matrix.KernelRun(release, 0) for release in names]

    monkeypatch.setattr(cli.matrix, "run", matrix_run)
    argv = ["--dev", "rxe0", "--dev", "siw0", "--results", str(results), "--no-html"]
    assert cli.cmd_lab([*argv, "--kernel", "6.1.0-56-amd64", "--kernel", "6.12.117+deb12-amd64"]) == code
    assert says in capsys.readouterr().out


# -- nothing deleted that we did not write ----------------------------------------------------------------


def test_a_run_removes_only_its_own_devices_earlier_results(tmp_path: Path) -> None:
    folder = tmp_path / "allure-results"
    theirs = allure_pytest_results(folder, ["failed"])
    (folder / "executor.json").write_text("{}")
    (folder / "categories.json").write_text("[]")
    (folder / "my-notes-attachment.txt").write_text("another tool's attachment")
    run(folder, "rxe0", {A: CONFORMS, B: DEVIATES})  # B has a C reproducer: an attachment
    first_rxe = set(ours(folder))
    assert any(path.name.endswith("-attachment.c") for path in folder.iterdir())
    run(folder, "siw0", {A: CONFORMS, B: WAIVED})
    siw = set(ours(folder)) - first_rxe
    run(folder, "rxe0", {A: CONFORMS})
    now = set(ours(folder))
    assert not now & first_rxe, "rxe0's earlier results are gone"
    assert siw <= now, "siw0's results stay"
    assert {labels["device"] for labels in ours(folder).values()} == {"rxe0", "siw0"}
    attachments = {path.name for path in folder.glob("*-attachment.c")}
    assert len(attachments) == 1 and all(name[:36] + "-result.json" in siw for name in attachments)
    for path in [*theirs, folder / "executor.json", folder / "categories.json", folder / "my-notes-attachment.txt"]:
        assert path.exists(), path


def test_a_killed_run_leaves_nothing_unlisted(tmp_path: Path) -> None:
    folder = tmp_path / "allure-results"
    writer = run(folder, "rxe0", {A: CONFORMS, B: DEVIATES}, finish=False)  # killed: never finished
    for manifest in writer._manifests.values():
        manifest.close()
    name = next(iter(ours(folder)))
    (folder / f".{name}.tmp4242").write_text("half written")  # ours: write_json's
    (folder / f"{name}.tmp").write_text("half written")  # allure-python-commons' file logger's
    theirs = [folder / ".their-result.json.tmp7", folder / "their-result.json.tmp"]  # another tool's
    for path in theirs:
        path.write_text("not ours")
    listed = (folder / manifest_file("rxe0")).read_text().split()
    written = {path.name for path in folder.iterdir() if not path.name.startswith(("pytest-rdma-", "their-"))}
    assert written - {name for name in written if name.startswith(".") or name.endswith(".tmp")} <= set(listed)
    run(folder, "rxe0", {A: CONFORMS})
    assert len(ours(folder)) == 1 and set(folder.glob("*.tmp*")) | set(folder.glob(".*")) == set(theirs)


def test_a_file_is_listed_before_it_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Killed between a deviation's attachment and its result: the attachment is listed already."""
    folder = tmp_path / "allure-results"
    writer = run(folder, "rxe0", {A: CONFORMS}, finish=False)  # the device's environment is written

    def killed(files: object, result: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(allure_writer.ResultFiles, "report_result", killed)
    with pytest.raises(KeyboardInterrupt):
        writer.append(record(find(B), "rxe0", DEVIATES))
    (attachment,) = folder.glob("*-attachment.c")
    assert attachment.name in (folder / manifest_file("rxe0")).read_text().split()


def test_a_manifest_names_only_files_in_its_folder(tmp_path: Path) -> None:
    folder = tmp_path / "allure-results"
    folder.mkdir()
    outside = tmp_path / "keep.txt"
    outside.write_text("not in the folder")
    (folder / ".hidden").write_text("not ours")
    (folder / manifest_file("rxe0")).write_text(f"../keep.txt\n{outside}\n.hidden\n..\n")
    run(folder, "rxe0", {A: CONFORMS})
    assert outside.exists() and (folder / ".hidden").exists()


def test_two_devices_in_one_folder_are_two_drivers(tmp_path: Path) -> None:
    folder = tmp_path / "allure-results"
    run(folder, "rxe0", {A: CONFORMS})
    run(folder, "siw0", {A: CONFORMS})
    assert set(environments(merged_devices([folder]))) == {"rxe", "siw"}
    line = allure_gate.passed(allure_gate.survey([folder]), "")
    assert line == "quality gate passed: 2 checks of pytest-rdma (1 on rxe0 (rxe), 1 on siw0 (siw))"


# -- the command, building the report (Node.js) -------------------------------------------------------------


def test_two_devices_into_one_folder_make_one_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    needs_node()
    folder = tmp_path / "allure-results"
    allure_pytest_results(folder, ["failed", "broken"])  # counted and named, never judged
    run(folder, "rxe0", {A: CONFORMS, B: WAIVED, D: UNSUPPORTED})
    run(folder, "siw0", {A: CONFORMS, B: WAIVED})
    out_dir = tmp_path / "allure-report"
    code, out, err = report([str(folder), "-o", str(out_dir), "--no-history"], capsys)
    assert code == 0, (out, err)
    assert out.endswith(
        "report: quality gate passed: 5 checks of pytest-rdma (3 on rxe0 (rxe), 2 on siw0 (siw)): no deviation "
        "without a waiver, no crash, no timeout; not judged: 2 results of other tools (framework 'pytest': 2)\n"
    )
    config = (out_dir / "allurerc.mjs").read_text()
    assert '"rxe": {' in config and '"siw": {' in config
    # siw0 exercised nothing in its next run: the report is built, and the gate fails on it.
    run(folder, "siw0", {D: UNSUPPORTED})
    code, out, err = report([str(folder), "-o", str(out_dir), "--no-history"], capsys)
    assert code == 1, (out, err)
    assert err == "report: quality gate FAILED: siw0 (siw) exercised nothing: its 1 checks are 1 unsupported\n"
    assert "siw0 (siw) exercised nothing" in (out_dir / "allurerc.mjs").read_text()
