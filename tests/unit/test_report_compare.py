"""`pytest-rdma compare`: the claim x driver matrix, with regressions and fixes marked."""

from __future__ import annotations

import json
from pathlib import Path

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


OLD_KERNEL, NEW_KERNEL = "6.1.0-56-amd64", "6.12.117+deb12-amd64"


def _kernel_run(path: Path, kernel: str, checks: dict[str, tuple[str, dict[str, object]]]) -> str:
    """A results file of rxe on `kernel`: stable id -> (outcome, extra fields of the record)."""
    from pytest_rdma.report.jsonfile import SCHEMA_VERSION

    identity = {"name": "rxe0", "driver": "rxe", "kernel": kernel, "kernel_package": "x", "rdma_core": "44.0"}
    records = [
        {
            "stable_id": stable_id,
            "verb": "ibv_query_qp",
            "claim": stable_id.split("[", 1)[1].split("-", 1)[0],
            "driver": "rxe",
            "device": "rxe0",
            "identity": identity,
            "outcome": outcome,
            **extra,
        }
        for stable_id, (outcome, extra) in checks.items()
    ]
    path.write_text(json.dumps({"schema_version": SCHEMA_VERSION, "results": records}))
    return str(path)


WAIVER = {"pattern": "t[fixed-*]", "file": "rxe.toml", "line": 3, "scopes": {}, "status": "applied"}


def _deviation(errno: str, c_file: str, verdict: str = "reproduced") -> dict[str, object]:
    return {
        "observation": {"errno": errno},
        "reproducer": {"dir": "/r", "c": c_file, "python": "x.py", "confirmed": {"verdict": verdict}},
    }


def test_across_kernels_each_differing_outcome_is_listed_with_both_reproducers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _kernel_run(
        tmp_path / "old.json",
        OLD_KERNEL,
        {
            "t[fixed-1]": ("deviates", {**_deviation("EINVAL", "rxe0/fixed.c"), "waiver": WAIVER}),
            "t[broken-1]": ("conforms", {}),
            "t[errno-1]": ("deviates", _deviation("EINVAL", "rxe0/errno.c")),
            "t[supported-1]": ("unsupported", {}),
            "t[same-1]": ("deviates", _deviation("EINVAL", "rxe0/same.c")),
        },
    )
    new = _kernel_run(
        tmp_path / "new.json",
        NEW_KERNEL,
        {
            "t[fixed-1]": ("conforms", {"waiver": {**WAIVER, "status": "fixed"}}),
            "t[broken-1]": ("deviates", _deviation("EFAULT", "rxe0/broken.c", "not reproduced")),
            "t[errno-1]": ("deviates", _deviation("EOPNOTSUPP", "rxe0/errno.c")),
            "t[supported-1]": ("conforms", {}),
            "t[same-1]": ("deviates", _deviation("EINVAL", "rxe0/same.c")),
        },
    )
    assert compare.main([old, new]) == 1, "a regression between kernels fails the comparison"
    out = capsys.readouterr().out
    assert f"| verb | claim | rxe ({OLD_KERNEL}) | rxe ({NEW_KERNEL}) |" in out
    after = f"rxe ({NEW_KERNEL})"
    for expected in (
        f"Regressions (1):\n- {after}: t[broken-1]: conforms -> deviates (EFAULT)\n"
        f"    rxe ({OLD_KERNEL}): conforms: no reproducer\n"
        f"    {after}: /r/rxe0/broken.c (C: not reproduced)",
        f"Fixes (1):\n- {after}: t[fixed-1]: deviates (EINVAL) -> conforms\n"
        f"    rxe ({OLD_KERNEL}): /r/rxe0/fixed.c (reproduced in C)\n    {after}: conforms: no reproducer",
        f"New errnos (1):\n- {after}: t[errno-1]: deviates (EINVAL) -> deviates (EOPNOTSUPP)",
        f"Newly supported (1):\n- {after}: t[supported-1]: unsupported -> conforms",
    ):
        assert expected in out
    assert "t[same-1]" not in out.split("Legend")[1], "an outcome that did not change is not listed"
    assert out.endswith(
        f"Waivers stale on a release (1):\n- rxe.toml:3: waiver t[fixed-*] of rxe is stale on {NEW_KERNEL} "
        f"(its check conforms there); it holds on {OLD_KERNEL}; kernel = '<6.12' would say where it holds\n"
    )
    page = tmp_path / "k.html"
    assert compare.main([old, new, "--format", "html", "-o", str(page)]) == 1
    assert "t[broken-1]: conforms -&gt; deviates (EFAULT)" in page.read_text()
    assert "is stale on 6.12.117+deb12-amd64" in page.read_text().split("</body>")[0]


def test_keys_a_newer_version_adds_to_an_observation_are_no_change_and_another_status_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Results from before and after the reproducers judged a comparison (FieldValue's `against`, `op`)."""
    field = {"field": "attr.cap.max_recv_wr", "value": 7}
    judged = {**field, "against": "create.init_attr.cap.max_recv_wr", "op": "=="}
    status = {"field": "wc.0.status", "value": 2, "status": "IBV_WC_LOC_QP_OP_ERR"}
    flushed = {"field": "wc.0.status", "value": 5, "status": "IBV_WC_WR_FLUSH_ERR"}
    old = _kernel_run(
        tmp_path / "old.json",
        OLD_KERNEL,
        {
            "t[writeback-1]": ("waived", {"observation": field}),
            "t[bad-lkey-1]": ("waived", {"observation": status}),
            "t[problem-1]": ("deviates", {"observation": field}),
        },
    )
    new = _kernel_run(
        tmp_path / "new.json",
        NEW_KERNEL,
        {
            "t[writeback-1]": ("waived", {"observation": judged}),
            "t[bad-lkey-1]": ("waived", {"observation": flushed}),
            "t[problem-1]": ("deviates", {"observation": {**judged, "problem": "negative errno"}}),
        },
    )
    assert compare.main([old, new]) == 0
    changes = capsys.readouterr().out.split("Legend")[1]
    assert "t[writeback-1]" not in changes, "keys added to the same values are no change"
    assert (
        f"Observed otherwise (2):\n- rxe ({NEW_KERNEL}): t[bad-lkey-1]: waived (field = wc.0.status, value = 2, "
        "status = IBV_WC_LOC_QP_OP_ERR) -> waived (field = wc.0.status, value = 5, status = IBV_WC_WR_FLUSH_ERR)"
    ) in changes
    assert "t[problem-1]: deviates" in changes, "a broken return convention is something observed, not a key added"
