"""benchmarks/readme_run.py: the README's command timed, its cold start read from the lab's own clock,
both merged into benchmark.json's `cold_start` and `lab` entries. The command is a stand-in script here
(what is timed is the benchmark's bookkeeping; the lab's own timing is the lab's tests')."""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks import lab_overhead, readme_run  # noqa: E402

STAND_IN = """#!/bin/sh
# $1 = lab, $2 = --results, $3 = DIR
mkdir -p "$3/allure-report"
sleep 0.5
printf 'first_test_s={first}\\ntotal_s=0.5\\naccel=tcg\\n' > "$3/lab-timing.txt"
{html}
exit {code}
"""


def stand_in(repo: Path, first: str = "12.5", code: int = 0, html: bool = True) -> None:
    script = repo / "pytest-rdma"
    touch = 'touch "$3/allure-report/index.html"' if html else ""
    script.write_text(STAND_IN.format(first=first, code=code, html=touch))
    script.chmod(0o755)


def test_the_readme_command_is_timed_and_its_cold_start_read(tmp_path: Path) -> None:
    stand_in(tmp_path)
    record = readme_run.measure(tmp_path, tmp_path / "bench")  # the benchmark's results directory exists
    assert record["command"] == [str(tmp_path / "pytest-rdma"), "lab", "--results", str(tmp_path / "bench/readme")]
    assert 0.5 <= record["readme_run_s"] < 5
    assert record["first_test_s"] == 12.5 and record["exit_code"] == 0 and record["html"] is True
    assert json.loads((tmp_path / "bench" / readme_run.RECORD).read_text()) == record


def test_a_run_without_a_check_or_report_says_so(tmp_path: Path) -> None:
    stand_in(tmp_path, first="None", code=3, html=False)
    record = readme_run.measure(tmp_path, tmp_path / "bench")
    assert record["first_test_s"] is None and record["exit_code"] == 3 and record["html"] is False
    text = "\n".join(readme_run.lines(record))
    assert "no check started  [goal <= 15 s: NOT MEASURED]" in text and "HTML report MISSING" in text


def test_the_figures_land_under_the_issues_keys_beside_the_benchmarks_own(tmp_path: Path) -> None:
    record = {"command": ["./pytest-rdma", "lab"], "exit_code": 0, "readme_run_s": 190.0, "first_test_s": 14.0}
    (tmp_path / readme_run.RECORD).write_text(json.dumps(record))
    figures = {"goals": dict(lab_overhead.GOALS), "cold_start": {"first_test_s": 28.3, "device_setup_s": 1.6}}
    lines = readme_run.add_to(tmp_path, figures)
    assert figures["cold_start"]["first_test_s"] == 14.0  # the README's command's, as the lab runs its checks
    assert figures["cold_start"]["bench_boot_first_test_s"] == 28.3 and figures["cold_start"]["device_setup_s"] == 1.6
    assert figures["lab"]["readme_run_s"] == 190.0 and figures["lab"]["readme_run_goal_s"] == 180.0
    assert figures["goals"]["cold_start_first_test_s"] == 15.0 and figures["goals"]["readme_run_s"] == 180.0
    assert any("14.0 s  [goal <= 15 s: MET]" in line for line in lines)
    assert any("190.0 s  [goal <= 180 s: MISSED]" in line for line in lines)
    assert lab_overhead.GOALS.get("readme_run_s") is None  # the module's table of goals is not changed


def test_no_readme_run_adds_nothing(tmp_path: Path) -> None:
    figures: dict = {"goals": {}}
    assert readme_run.add_to(tmp_path, figures) == [] and figures == {"goals": {}}
