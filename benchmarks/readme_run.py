"""The lab's two times a user sees, measured by running the README's command as a user does (issue 29).

- `lab.readme_run_s`: `./pytest-rdma lab` end to end on the host's clock, from the command's start to its
  exit: prerequisites, the KVM probe (cached), the boot, both devices with their peers, the runs as nobody,
  the HTML report. Its own VM boot, after the benchmark's: nothing of the benchmark's runs is in it.
- `cold_start.first_test_s`: in that same command, the host seconds from its start to its first check
  starting, as the lab runs its checks (one pytest process, restarted after a crash): the lab's own clock
  (`lab-timing.txt`, the first-test mark the VM's first pytest leaves in the results directory).

The benchmark (benchmarks/lab_overhead.py) calls `measure` after its own boot and `add_to` when it
reports; the record (RECORD in the benchmark's results) lets `--report-only` report it again.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

COLD_START_GOAL_S = 15.0
README_RUN_GOAL_S = 180.0
RECORD = "readme-run.json"
RESULTS = "readme"  # the README's command's own results directory, inside the benchmark's


def command(repo: Path, results: Path) -> list[str]:
    """The README's first command, its results in `results` rather than ./results (pure)."""
    return [str(repo / "pytest-rdma"), "lab", "--results", str(results)]


def lab_timing(results: Path) -> dict[str, str]:
    """What the lab wrote in `results`/lab-timing.txt (first_test_s, total_s, accel), or nothing."""
    path = results / "lab-timing.txt"
    lines = path.read_text().splitlines() if path.exists() else []
    return dict(line.split("=", 1) for line in lines if "=" in line)


def _seconds(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:  # "None": the lab saw no check start
        return None


def measure(repo: Path, results: Path) -> dict[str, Any]:
    """Run the README's command once, timed; its record, also written to `results`/RECORD."""
    out = results / RESULTS
    argv = command(repo, out)
    print(f"bench: the README's command, timed: {' '.join(argv)}", flush=True)
    started = time.monotonic()
    code = subprocess.run(argv, cwd=repo, check=False).returncode
    seconds = time.monotonic() - started
    timing = lab_timing(out)
    record = {
        "command": argv,
        "exit_code": code,
        "readme_run_s": round(seconds, 1),
        "first_test_s": _seconds(timing.get("first_test_s")),
        "accel": timing.get("accel", "?"),
        "html": (out / "allure-report" / "index.html").exists(),
    }
    (results / RECORD).write_text(json.dumps(record, indent=1) + "\n")
    return record


def verdict(value: float | None, goal: float) -> str:
    """'[goal <= G s: MET]' or MISSED, or NOT MEASURED (pure)."""
    if value is None:
        return f"[goal <= {goal:g} s: NOT MEASURED]"
    return f"[goal <= {goal:g} s: {'MET' if value <= goal else 'MISSED'}]"


def figures_of(record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The record as benchmark.json's `cold_start` and `lab` entries (pure)."""
    first = record.get("first_test_s")
    return {
        "cold_start": {"first_test_s": first, "first_test_goal_s": COLD_START_GOAL_S, "accel": record.get("accel")},
        "lab": {
            "readme_run_s": record["readme_run_s"],
            "readme_run_goal_s": README_RUN_GOAL_S,
            "readme_exit_code": record["exit_code"],
            "readme_command": " ".join(record["command"]),
            "readme_html": record.get("html", False),
        },
    }


def lines(record: dict[str, Any]) -> list[str]:
    """The report's lines about the README's command (pure)."""
    first = record.get("first_test_s")
    shown = f"{first:.1f} s" if first is not None else "no check started"
    return [
        "\n(3b) The README's command, as a user runs it (its own boot, after the benchmark's)",
        f"    {' '.join(record['command'])}: exit {record['exit_code']}, HTML report "
        f"{'written' if record.get('html') else 'MISSING'}",
        f"    COLD START to the first check (the lab's own run): {shown}  {verdict(first, COLD_START_GOAL_S)}",
        f"    THE README'S COMMAND end to end: {record['readme_run_s']:.1f} s  "
        f"{verdict(record['readme_run_s'], README_RUN_GOAL_S)}",
    ]


def add_to(results: Path, figures: dict[str, Any]) -> list[str]:
    """Merge the README run recorded in `results` into `figures`; the report's lines (none when not run)."""
    path = results / RECORD
    if not path.exists():
        return []
    record = json.loads(path.read_text())
    for key, entry in figures_of(record).items():
        # The benchmark's own boot measured a cold start too (its breakdown stays): the figure is the README's.
        earlier = figures.get(key, {})
        if key == "cold_start" and "first_test_s" in earlier:
            earlier = {**earlier, "bench_boot_first_test_s": earlier["first_test_s"]}
        figures[key] = {**earlier, **entry}
    figures["goals"] = {
        **figures.get("goals", {}),
        "cold_start_first_test_s": COLD_START_GOAL_S,
        "readme_run_s": README_RUN_GOAL_S,
    }
    return lines(record)
