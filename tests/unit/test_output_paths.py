"""Outputs are checked before any check runs, and a run stopped by a usage error still reports it.

Each bad output path (a directory where a file goes, a file where a directory goes, a path under a
file, a place nothing can be made, two outputs on one path) is pytest's usage error (exit 4) in one
line naming the setting, the path, what is wrong and what to give; never an INTERNALERROR. The JUnit
and JSON files asked for say why the run stopped (one testcase in error; `usage_error`), except at a
path the error is about. Collecting writes nothing, so it needs no writable output.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pytest_rdma import command_line
from pytest_rdma.provider.identity import sysfs_devices
from pytest_rdma.report import junit, usage_error

pytestmark = pytest.mark.skipif(bool(sysfs_devices()), reason="this host has RDMA devices; these tests need none")


def one_line_usage_error(result: pytest.RunResult, *patterns: str) -> str:
    """Exit 4 with exactly one line on stderr, matching each pattern; the line."""
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, text
    assert "Traceback" not in text and "INTERNALERROR" not in text
    lines = [line for line in result.stderr.lines if line.strip()]
    assert len(lines) == 1, lines
    for pattern in patterns:
        result.stderr.fnmatch_lines([pattern])
    return lines[0]


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile("def test_plain():\n    pass\n")
    (pytester.path / "adir").mkdir()
    (pytester.path / "afile").write_text("not a directory\n")
    return pytester


BAD_OUTPUTS = {
    "json names a directory": (
        ["--rdma-json", "adir"],
        "ERROR: --rdma-json adir: adir is a directory; give a file path, e.g. adir/results.json",
    ),
    "junit names a directory": (
        ["--rdma-junit", "adir"],
        "ERROR: --rdma-junit adir: adir is a directory; give a file path, e.g. adir/junit.xml",
    ),
    "allure names a file": (
        ["--rdma-allure", "afile"],
        "ERROR: --rdma-allure afile: afile is a file, not a directory; give a directory, e.g. allure-results",
    ),
    "reproducers name a file": (
        ["--rdma-reproducers", "afile"],
        "ERROR: --rdma-reproducers afile: afile is a file, not a directory; give a directory*",
    ),
    "json under a file": (
        ["--rdma-json", "afile/r.json"],
        "ERROR: --rdma-json afile/r.json: afile is a file, so nothing can be made under it; give a path in a directory",
    ),
    "junit under a file": (
        ["--rdma-junit", "afile/deep/j.xml"],
        "ERROR: --rdma-junit afile/deep/j.xml: afile is a file*",
    ),
    "allure under a file": (["--rdma-allure", "afile/allure"], "ERROR: --rdma-allure afile/allure: afile is a file*"),
    "json where nothing can be made": (
        ["--rdma-json", "/proc/r.json"],
        "ERROR: --rdma-json /proc/r.json: nothing can be written in /proc (*); give a path you can write",
    ),
    "json and junit on one path": (
        ["--rdma-json", "out.xml", "--rdma-junit", "out.xml"],
        "ERROR: --rdma-json out.xml and --rdma-junit out.xml are one path: each would overwrite the other; give "
        "each output its own path",
    ),
    "junit on json's lines": (
        ["--rdma-json", "r.json", "--rdma-junit", "r.jsonl"],
        "ERROR: --rdma-junit r.jsonl and --rdma-json's lines r.jsonl are one path*",
    ),
    "pytest's junitxml on ours": (
        ["--rdma-junit", "j.xml", "--junitxml", "j.xml"],
        "ERROR: --rdma-junit j.xml and --junitxml j.xml are one path*",
    ),
    "json's lines on a given .jsonl": (
        ["--rdma-json", "r.json", "--junitxml", "./r.jsonl"],
        "ERROR: --junitxml r.jsonl and --rdma-json's lines r.jsonl are one path*",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_OUTPUTS))
def test_a_bad_output_path_is_one_line_before_any_check(project: pytest.Pytester, case: str) -> None:
    args, says = BAD_OUTPUTS[case]
    result = project.runpytest("-p", "no:xdist", *args)
    one_line_usage_error(result, says)
    assert "passed" not in result.stdout.str()  # nothing ran
    assert (project.path / "afile").read_text() == "not a directory\n" and not any((project.path / "adir").iterdir())


def test_output_paths_from_ini_and_environment_name_where_they_came_from(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makeini("[pytest]\nrdma_json = adir\n")
    one_line_usage_error(
        project.runpytest("-p", "no:xdist"), "ERROR: rdma_json (ini file tox.ini) adir: adir is a directory*"
    )
    (project.path / "tox.ini").unlink()
    monkeypatch.setenv("RDMA_ALLURE", "afile")
    one_line_usage_error(
        project.runpytest("-p", "no:xdist"), "ERROR: rdma_allure (environment RDMA_ALLURE) afile: afile is a file*"
    )


def test_collecting_needs_no_writable_output(project: pytest.Pytester) -> None:
    # A read-only checkout stands for this: every output where nothing can be made.
    args = ["--rdma-json", "afile/r.json", "--rdma-allure", "afile/a", "--rdma-reproducers", "afile/rep"]
    result = project.runpytest("-p", "no:xdist", "--collect-only", "-q", *args)
    assert result.ret == pytest.ExitCode.OK, result.stderr.str()
    result.stdout.fnmatch_lines(["*test_plain*"])


def _junit_error(path: Path) -> str:
    root = ET.parse(path).getroot()
    assert (root.get("tests"), root.get("errors")) == ("1", "1")
    case = root.find("testsuite/testcase")
    assert case is not None and (case.get("classname"), case.get("name")) == ("pytest-rdma", "usage-error")
    error = case.find("error")
    assert error is not None
    return error.get("message", "")


def test_a_usage_error_is_in_the_junit_and_json_asked_for(project: pytest.Pytester) -> None:
    args = ["--rdma-junit", "out/j.xml", "--junitxml", "out/p.xml", "--rdma-json", "out/r.json"]
    line = one_line_usage_error(project.runpytest("-p", "no:xdist", "--rdma-dev", "mlx5_9", *args))
    said = line.removeprefix("ERROR: ")
    assert said.startswith("unknown RDMA device mlx5_9")
    assert _junit_error(project.path / "out/j.xml") == said
    assert _junit_error(project.path / "out/p.xml") == said
    document = json.loads((project.path / "out/r.json").read_text())
    assert (document["usage_error"], document["exitstatus"], document["results"]) == (said, 4, [])
    lines = [json.loads(text) for text in (project.path / "out/r.jsonl").read_text().splitlines()]
    assert [(entry["type"], entry["usage_error"]) for entry in lines] == [("session", said)]


def test_a_users_device_test_without_a_device_is_in_the_junit(project: pytest.Pytester) -> None:
    # Stopped at collection: every reporter's session end ran first; the files say why all the same.
    project.makepyfile(test_device="def test_uses_device(rdma_dut):\n    pass\n")
    result = project.runpytest(
        "-p", "no:xdist", "--rdma-junit", "j.xml", "--junitxml", "p.xml", "--rdma-json", "r.json"
    )
    line = one_line_usage_error(result, "*test_device.py::test_uses_device uses the fixture rdma_dut*--rdma-dev NAME*")
    said = line.removeprefix("ERROR: ")
    assert _junit_error(project.path / "j.xml") == said == _junit_error(project.path / "p.xml")
    assert json.loads((project.path / "r.json").read_text())["usage_error"] == said


def test_a_usage_error_about_the_junit_path_is_not_written_there(project: pytest.Pytester) -> None:
    result = project.runpytest(
        "-p", "no:xdist", "--rdma-junit", "same.xml", "--rdma-json", "same.xml", "--junitxml", "p.xml"
    )
    said = one_line_usage_error(result, "*are one path*").removeprefix("ERROR: ")
    assert not (project.path / "same.xml").exists()
    assert _junit_error(project.path / "p.xml") == said  # the other JUnit file says why
    unwritable = project.runpytest("-p", "no:xdist", "--rdma-junit", "afile/j.xml", "--junitxml", "p.xml")
    said = one_line_usage_error(unwritable, "*afile is a file*").removeprefix("ERROR: ")
    assert _junit_error(project.path / "p.xml") == said


def test_the_report_of_a_usage_error_is_valid_junit(tmp_path: Path) -> None:
    from test_junit import validate  # Jenkins' JUnit schema, as our other JUnit files are checked

    path = tmp_path / "j.xml"
    junit.write(path, usage_error.junit_document("unknown RDMA device mlx5_9: \x01 ..."))
    assert validate(path) == []


def test_messages_name_the_lab_as_this_user_runs_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # This checkout has the bootstrap script beside the package; an installed package has not.
    assert command_line.lab_command() == "./pytest-rdma lab"
    installed = tmp_path / "site-packages" / "pytest_rdma"
    installed.mkdir(parents=True)
    monkeypatch.setattr(command_line, "__file__", str(installed / "command_line.py"))
    assert command_line.lab_command() == "pytest-rdma lab"
