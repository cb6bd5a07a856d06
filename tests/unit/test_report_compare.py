"""`pytest-rdma compare`: the claim x driver matrix, with regressions and fixes marked."""

from __future__ import annotations

import json

import pytest
from report_helpers import make_project

from pytest_rdma.report import compare


def _run(pytester: pytest.Pytester, name: str, capsys: pytest.CaptureFixture[str]) -> str:
    expect = str(pytester.path / "expect")
    pytester.runpytest("-p", "no:xdist", "--rdma-expectations", expect, "--rdma-json", name)
    capsys.readouterr()  # the inner run's output is not the command's
    return str(pytester.path / name)


def test_matrix_of_two_drivers(pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> None:
    make_project(pytester, waivers={})
    results = _run(pytester, "both.json", capsys)
    assert compare.main([results]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "| verb | claim | rxe | siw |"
    assert out[2] == "| ibv_demo | keeps-promise | ✘ 1 ○ 1 – 1 ✔ 2 | ✘ 1 – 2 ✔ 2 |"
    assert "○ not exercised" in out[4]
    assert not any("regression" in line for line in out)


def test_baseline_and_new_run_mark_regressions_and_fixes(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    make_project(pytester, waivers={})
    monkeypatch.setenv("DEMO_RC_ONLY", "deviates")  # baseline: rxe's rc-only case deviates
    baseline = _run(pytester, "old.json", capsys)
    monkeypatch.delenv("DEMO_RC_ONLY")
    monkeypatch.setenv("DEMO_CONFORMING", "deviates")  # new run: it conforms, "conforming" deviates
    new = _run(pytester, "new.json", capsys)
    assert compare.main([baseline, new]) == 1, "a regression is a failing exit status"
    out = capsys.readouterr().out
    assert "▼ regression" in out and "▲ fixed" in out
    assert "rxe (run 2: new.json): test_ibv_demo[keeps-promise-conforming]: conforms -> deviates" in out
    assert "rxe (run 2: new.json): test_ibv_demo[keeps-promise-rc-only]: deviates -> conforms" in out
    assert compare.main([new, new, "--format", "html", "-o", str(pytester.path / "m.html")]) == 0
    page = (pytester.path / "m.html").read_text()
    assert page.startswith("<!doctype html>") and "<th>siw (run 2: new.json)</th>" in page and "▼" not in page


def test_interrupted_run_lines_are_readable(pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> None:
    make_project(pytester, waivers={})
    _run(pytester, "r.json", capsys)
    lines = pytester.path / "r.jsonl"
    lines.write_text(lines.read_text() + '{"type": "result", "cut sho')  # a killed run's last line
    assert compare.main([str(lines)]) == 0
    assert "| ibv_demo | keeps-promise |" in capsys.readouterr().out


def test_bad_input_is_exit_status_2(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "r.json"
    bad.write_text(json.dumps({"schema_version": 99, "results": []}))
    assert compare.main([str(bad)]) == 2
    assert "schema_version 99" in capsys.readouterr().err
    assert compare.main([str(tmp_path / "missing.json")]) == 2
