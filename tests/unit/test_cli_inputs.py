"""The `pytest-rdma` commands on bad input: one line on stderr saying what is wrong and what to
do, exit status 2, never a traceback; --help and --version work; `waivers -o` never replaces a
file it did not write."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from pytest_rdma.cli import COMMANDS, main
from pytest_rdma.report.record import SCHEMA_VERSION
from pytest_rdma.report.waivers import GENERATED

GIVE_RESULTS = "give a results file written by pytest --rdma-json"
GIVE_JUNIT = "give the JUnit XML a run wrote"
SESSION = {"type": "session", "schema_version": SCHEMA_VERSION}
# Bad results files: name -> (content, what the one line must say). None: no such file.
BAD_RESULTS = {
    "missing.json": (None, "no such file"),
    "empty.json": ("", "the file is empty"),
    "blank.jsonl": ("\n\n", "the file is empty"),
    "malformed.json": (f'{{"schema_version": {SCHEMA_VERSION}, "results": [', "not JSON (Expecting value at line 1"),
    "not-results.json": ('{"hello": "world"}', "not a pytest-rdma results document"),
    "a-list.json": ("[1, 2]", "not a pytest-rdma results document"),
    "records-not-objects.json": (f'{{"schema_version": {SCHEMA_VERSION}, "results": [1]}}', "not all records"),
    "other-schema.json": ('{"schema_version": 99, "results": []}', "schema_version 99; this pytest-rdma"),
    "malformed.jsonl": (f'{json.dumps(SESSION)}\n{{"type": "res\n{{"type": "result"}}\n', "line 2 is not JSON"),
    "not-lines.jsonl": ("[1]\n", "line 1 is no session line"),
    "other-schema.jsonl": ('{"type": "session", "schema_version": 7}\n', "schema_version 7; this pytest-rdma"),
}
RECORD = {
    "driver": "rxe",
    "device": "rxe0",
    "stable_id": "ibv_alloc_pd/null-context",
    "outcome": "deviates",
    "verb": "ibv_alloc_pd",
    "claim": "null-context",
    "expected": "EINVAL",
    "observed": "returned 0",
    "ref": "ibv_alloc_pd(3)",
    "identity": {"driver": "rxe", "kernel": "6.1.0-56-amd64", "rdma_core": "44.0"},
}


def write(tmp_path: Path, name: str, content: str | None) -> Path:
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    return path


def results_file(tmp_path: Path, records: list[dict] | None = None) -> Path:
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"schema_version": SCHEMA_VERSION, "results": [RECORD] if records is None else records}))
    return path


def assert_one_line(code: int, captured: pytest.CaptureFixture[str] | object, *fragments: str) -> str:
    out, err = captured.out, captured.err  # type: ignore[attr-defined]
    assert "Traceback" not in out + err
    assert code == 2, err
    lines = err.splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got:\n{err}"
    for fragment in fragments:
        assert fragment in lines[0]
    return lines[0]


def results_commands(path: Path) -> dict[str, list[str]]:
    return {
        "compare": ["compare", str(path)],
        "waivers": ["waivers", "rxe", str(path)],
        "kcidb": ["kcidb", str(path), "--origin", "my_lab"],
        "lava": ["lava", str(path)],
    }


@pytest.mark.parametrize("name", sorted(BAD_RESULTS))
@pytest.mark.parametrize("command", ["compare", "waivers", "kcidb", "lava"])
def test_bad_results_files(tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, name: str) -> None:
    content, says = BAD_RESULTS[name]
    argv = results_commands(write(tmp_path, name, content))[command]
    line = assert_one_line(main(argv), capsys.readouterr(), f"pytest-rdma {command}: ", name, says)
    assert GIVE_RESULTS in line or "read it with the pytest-rdma that wrote it" in line


@pytest.mark.parametrize("name", sorted(name for name in BAD_RESULTS if name.endswith(".jsonl")))
def test_finish_on_bad_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    content, says = BAD_RESULTS[name]
    code = main(["finish", str(write(tmp_path, name, content))])
    assert_one_line(code, capsys.readouterr(), "pytest-rdma finish: ", name, says)
    assert not (tmp_path / name[: -len("l")]).exists()


@pytest.mark.parametrize("name", ["results.json", "missing.json"])
def test_finish_wants_the_lines_not_a_final_document(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    path = results_file(tmp_path) if name == "results.json" else tmp_path / name
    assert_one_line(main(["finish", str(path)]), capsys.readouterr(), "not a .jsonl file", "results.jsonl")


BAD_JUNIT = {
    "missing.xml": (None, "no such file"),
    "empty.xml": ("", "the file is empty"),
    "malformed.xml": ("<testsuites><testsuite>", "not XML"),
    "results.json": (json.dumps({"schema_version": SCHEMA_VERSION, "results": []}), "not XML"),
    "not-junit.xml": ("<html><body/></html>", "not a JUnit report (its root is <html>)"),
}


@pytest.mark.parametrize("name", sorted(BAD_JUNIT))
def test_coverage_on_bad_junit(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    content, says = BAD_JUNIT[name]
    code = main(["coverage", "--results", str(write(tmp_path, name, content))])
    assert_one_line(code, capsys.readouterr(), "pytest-rdma coverage: ", name, says, GIVE_JUNIT)


@pytest.mark.parametrize("argv", [[], ["no-such-command"]])
def test_no_or_unknown_command(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    line = assert_one_line(main(argv), capsys.readouterr(), "pytest-rdma: ", "see 'pytest-rdma --help'")
    assert ", ".join(COMMANDS) in line


@pytest.mark.parametrize("command", ["compare", "waivers", "finish", "kcidb"])
def test_a_command_without_its_arguments(capsys: pytest.CaptureFixture[str], command: str) -> None:
    assert_one_line(
        main([command]),
        capsys.readouterr(),
        "the following arguments are required",
        f"see 'pytest-rdma {command} --help'",
    )


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_unknown_option(tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str) -> None:
    # With the arguments a command requires, so that the option is what it finds wrong.
    required = {
        "compare": ["r.json"],
        "waivers": ["rxe", "r.json"],
        "finish": ["r.jsonl"],
        "kcidb": ["r.json", "--origin", "my_lab"],
    }.get(command, [])
    assert_one_line(
        main([command, *required, "--no-such-option"]),
        capsys.readouterr(),
        "unrecognized arguments: --no-such-option",
        f"see 'pytest-rdma {command} --help'",
    )


def test_coverage_refuses_an_unknown_verb_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert_one_line(
        main(["coverage", "--verb", "ibv_no_such_verb"]),
        capsys.readouterr(),
        "unknown verb ibv_no_such_verb; known: ",
        "ibv_alloc_pd",
    )


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help(capsys: pytest.CaptureFixture[str], command: str) -> None:
    assert main([command, "--help"]) == 0  # lab and selftest must not start a VM for this
    captured = capsys.readouterr()
    assert captured.out.startswith(f"usage: pytest-rdma {command}") and not captured.err


def test_selftest_help_offers_to_skip_the_fresh_machine(capsys: pytest.CaptureFixture[str]) -> None:
    main(["selftest", "--help"])
    assert "--no-fresh" in capsys.readouterr().out


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_top_level_help(capsys: pytest.CaptureFixture[str], flag: str) -> None:
    assert main([flag]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: pytest-rdma") and all(f"  {command} " in out for command in COMMANDS)


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(capsys: pytest.CaptureFixture[str], flag: str) -> None:
    assert main([flag]) == 0
    assert capsys.readouterr().out == f"pytest-rdma {version('pytest-rdma')}\n"


def test_waivers_names_the_drivers_present_for_an_unknown_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    siw = {**RECORD, "driver": "siw", "device": "siw0"}
    path = results_file(tmp_path, [RECORD, siw])
    line = assert_one_line(main(["waivers", "mlx5", str(path)]), capsys.readouterr(), "no record of driver 'mlx5'")
    assert "the drivers there: rxe, siw; give one of them" in line
    path = results_file(tmp_path, [])
    assert_one_line(main(["waivers", "rxe", str(path)]), capsys.readouterr(), "hold no results of any driver")


def test_waivers_writes_to_stdout_by_default(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["waivers", "rxe", str(results_file(tmp_path))]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith(f"# {GENERATED}")
    assert 'id = "ibv_alloc_pd/null-context"' in out


def test_waivers_output_replaces_only_its_own_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = str(results_file(tmp_path))
    target = tmp_path / "rxe.toml"
    assert main(["waivers", "rxe", results, "-o", str(target)]) == 0  # new: written
    assert target.read_text().startswith(f"# {GENERATED}")
    target.write_text(target.read_text().replace("awaiting triage", "seen twice"))
    assert main(["waivers", "rxe", results, "-o", str(target)]) == 0  # its own: replaced
    assert "seen twice" not in target.read_text()
    assert not target.with_name("rxe.toml.draft").exists()
    capsys.readouterr()


def test_waivers_output_keeps_a_maintained_file_and_drafts_beside_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = str(results_file(tmp_path))
    maintained = tmp_path / "rxe.toml"
    shipped = (Path(__file__).resolve().parents[2] / "pytest_rdma/expectations/rxe.toml").read_text()
    maintained.write_text(shipped)
    assert main(["waivers", "rxe", results, "-o", str(maintained)]) == 0
    assert maintained.read_text() == shipped
    draft = tmp_path / "rxe.toml.draft"
    assert draft.read_text().startswith(f"# {GENERATED}")
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "was not written by this command" in err and str(draft) in err
    # A draft the maintainer has taken over (its first line removed) is kept too: nothing is written.
    draft.write_text("# merged by hand\n")
    code = main(["waivers", "rxe", results, "-o", str(maintained)])
    assert_one_line(code, capsys.readouterr(), "this command wrote neither", "give -o another path")
    assert maintained.read_text() == shipped and draft.read_text() == "# merged by hand\n"


def test_waivers_output_to_an_unwritable_place(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["waivers", "rxe", str(results_file(tmp_path)), "-o", str(tmp_path / "no" / "dir" / "rxe.toml")])
    assert_one_line(code, capsys.readouterr(), "cannot write", "give -o a writable path")


def test_the_installed_command_prints_no_traceback(tmp_path: Path) -> None:
    """The same through the console script's process (imports, sys.exit), not only main()."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest_rdma.cli", "compare", str(tmp_path / "missing.json")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr and "no such file" in done.stderr


def lines_file(tmp_path: Path) -> Path:
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(SESSION) + "\n" + json.dumps({"type": "result", **RECORD}) + "\n")
    return path


@pytest.mark.parametrize(
    ("output", "says"),
    [
        ("a-dir", "a-dir is a directory; give a file path, e.g. "),
        ("a-file/results.json", "a-file is a file, so nothing can be made under it"),
    ],
)
def test_finish_output_that_cannot_take_the_document(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], output: str, says: str
) -> None:
    (tmp_path / "a-dir").mkdir()
    (tmp_path / "a-file").write_text("kept\n")
    code = main(["finish", str(lines_file(tmp_path)), "-o", str(tmp_path / output)])
    assert_one_line(code, capsys.readouterr(), "pytest-rdma finish: -o ", says)
    assert (tmp_path / "a-file").read_text() == "kept\n" and not any((tmp_path / "a-dir").iterdir())


def test_finish_keeps_an_existing_document_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = lines_file(tmp_path)
    assert main(["finish", str(lines)]) == 0
    capsys.readouterr()
    assert_one_line(main(["finish", str(lines)]), capsys.readouterr(), "results.json exists", "--force replaces it")


@pytest.mark.parametrize(
    ("output", "says"),
    [
        ("a-file", "a-file is a file, not a directory; give a directory"),
        ("a-file/report", "a-file is a file, so nothing can be made under it"),
    ],
)
def test_report_output_that_cannot_take_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], output: str, says: str
) -> None:
    (tmp_path / "a-file").write_text("kept\n")
    (tmp_path / "allure-results").mkdir()
    code = main(["report", str(tmp_path / "allure-results"), "-o", str(tmp_path / output)])
    assert_one_line(code, capsys.readouterr(), "pytest-rdma report: -o ", says)
    assert (tmp_path / "a-file").read_text() == "kept\n"


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"stable_id": None}, "the record has no 'stable_id'; give the check's stable id"),
        ({"observation": "returned 0"}, "'observation' is a string; give an object (docs/results-schema.md)"),
    ],
)
def test_waivers_on_a_record_no_waiver_can_be_drafted_from(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: dict, says: str
) -> None:
    record = {key: value for key, value in {**RECORD, **change}.items() if value is not None}
    code = main(["waivers", "rxe", str(results_file(tmp_path, [record]))])
    # The results reader refuses such a record for every command (report/schema.py), before a draft.
    assert_one_line(code, capsys.readouterr(), "pytest-rdma waivers: ", says)


def test_a_command_that_crashes_exits_3_not_1(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Exit 1 means "gate failed" or "regression": a bug of ours must not read as either.
    def crash(argv: list[str]) -> int:
        raise RuntimeError("a bug")

    monkeypatch.setitem(COMMANDS, "compare", crash)
    assert main(["compare", "r.json"]) == 3
    err = capsys.readouterr().err
    assert "RuntimeError: a bug" in err and err.splitlines()[-1] == (
        "pytest-rdma compare: internal error (a bug: please report the traceback above)"
    )
