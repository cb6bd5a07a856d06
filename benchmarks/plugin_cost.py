"""The plugin's own cost per check and xdist against its ceiling (issue 29 items 1 and 2).

Steps for the benchmark's plan (run in the same boot as the checks and the bare loop) and the pure
arithmetic that turns their timings into benchmark.json's figures:

- plugin ms per check = (the checks' time - the bare loop's time) / checks - pytest's floor, where the
  floor is N empty tests under pytest without the plugin (benchmarks/empty_checks.py), per test;
- each part's share: the same checks once more with benchmarks/part_timing.py, the own time of each
  part's hooks per check (the parts of the issue: recorder, guards, reporters, case preparation);
- xdist's share of its ceiling: the speedup of `-n 2` end to end over `-n 0` divided by the bare
  loop's speedup over two processes at once, the best of three such pairs.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

PLUGIN_MS_GOAL = 5.0
SHARE_OF_CEILING_GOAL = 0.9
GOALS = {"plugin_ms_per_check": PLUGIN_MS_GOAL, "xdist_share_of_ceiling": SHARE_OF_CEILING_GOAL}
FLOOR = "floor"
PARTS = "checks-parts"
CEILING_RUNS = 3
EMPTY_ENV = "PYTEST_RDMA_EMPTY_TESTS"
PARTS_ENV = "PYTEST_RDMA_BENCH_PARTS"


def floor_step(repo: Path, count: int, env: dict[str, str]) -> dict[str, Any]:
    """`count` empty tests under pytest without the plugin, as the checks run (-n 0, the timing plugin)."""
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "benchmarks.timing_plugin"]
    argv += ["-p", "no:rdma", "-n", "0", "benchmarks/empty_checks.py"]
    return {"name": FLOOR, "argv": argv, "cwd": str(repo), "env": {**env, EMPTY_ENV: str(count)}}


def parts_path(results: Path) -> Path:
    return results / "overhead" / "parts.json"


def seconds_of(step: dict[str, Any]) -> float | None:
    """The checks' window of a pytest step (first check's start to last check's end), if it ran one."""
    marks = step.get("pytest", {}).get("marks", {})
    first, last = marks.get("first_test_start"), marks.get("last_test_end")
    return last - first if first is not None and last is not None else None


def plugin_cost(
    checks_s: float, loop_s: float, checks: int, floor_s: float, empty: int, parts_s: dict[str, float] | None
) -> dict[str, Any]:
    """The plugin's own milliseconds per check beyond the verbs and pytest's floor, and each part's."""
    floor_ms = floor_s / empty * 1000
    beyond_loop_ms = (checks_s - loop_s) / checks * 1000
    figures: dict[str, Any] = {
        "plugin_ms_per_check": beyond_loop_ms - floor_ms,
        "beyond_bare_loop_ms_per_check": beyond_loop_ms,
        "pytest_floor_ms_per_test": floor_ms,
        "goal_ms": PLUGIN_MS_GOAL,
        "met": beyond_loop_ms - floor_ms <= PLUGIN_MS_GOAL,
    }
    if parts_s is not None:
        figures["parts_ms_per_check"] = {
            part: seconds / checks * 1000 for part, seconds in sorted(parts_s.items(), key=lambda kv: -kv[1])
        }
    return figures


def best_ceiling(shard_runs: list[list[float]], one_s: float, cases: int) -> dict[str, Any] | None:
    """The bare loop's best speedup over two processes: one process's loop over the slower half, best run."""
    halves = [max(run) for run in shard_runs if len(run) >= 2]
    if not halves:
        return None
    slowest = min(halves)
    return {
        "one_s": one_s,
        "slowest_half_s": slowest,
        "slowest_half_runs_s": halves,
        "speedup": one_s / slowest,
        "cases": cases,
        "runs": len(halves),
    }


def share_of_ceiling(speedup: float, ceiling: float) -> dict[str, Any]:
    share = speedup / ceiling
    return {"share_of_ceiling": share, "share_goal": SHARE_OF_CEILING_GOAL, "share_met": share >= SHARE_OF_CEILING_GOAL}
