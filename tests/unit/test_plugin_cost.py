"""The plugin's own cost per check and xdist's share of its ceiling, as benchmark.json carries them
(issue 29): the figures' keys and arithmetic from a made-up run's steps, and the parts' clock. Pure:
no VM, no timing of this host."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks import lab_overhead, part_timing, plugin_cost  # noqa: E402

IDLE = {"vms_at_start": 0, "waited_s": 0.0, "vms_when_starting": 0, "loadavg_when_starting": [1.0, 1.0, 1.0]}
WATCH = {"samples": 1, "max_other_vms": 0, "share_busy": 0.0, "busy_at": []}


def pytest_run(name: str, start: float, wall: float, checks_s: float, tests: int) -> dict[str, Any]:
    marks = {"sessionstart": start + 1.0, "first_test_start": start + 2.0, "last_test_end": start + 2.0 + checks_s}
    return {
        "name": name,
        "start": start,
        "end": start + wall,
        "wall_s": wall,
        "exit_code": 0,
        "pytest": {"marks": marks, "tests": tests, "outcomes": {"passed": tests}},
    }


def bare_run(name: str, loop_s: float, cases: int) -> dict[str, Any]:
    return {
        "name": name,
        "start": 0.0,
        "end": loop_s + 1,
        "wall_s": loop_s + 1,
        "exit_code": 0,
        "bare": {"cases": cases, "loop_s": loop_s, "outcomes": {"conforms": cases}, "ids": [], "steps": {}},
    }


def shards(name: str, halves: tuple[float, float]) -> dict[str, Any]:
    return {"name": name, "wall_s": max(halves), "exit_code": 0, "shards": [{"loop_s": s, "cases": 50} for s in halves]}


def write_run(results: Path, parts: dict[str, float] | None) -> None:
    steps = [
        pytest_run("checks-1", 0.0, 40.0, 30.0, 100),  # 30 s of checks for 100 checks
        bare_run("bare-1", 10.0, 100),  # the verbs: 10 s
        pytest_run(plugin_cost.FLOOR, 0.0, 5.0, 0.5, 100),  # pytest's floor: 5 ms per empty test
        shards("bare-x2", (6.0, 7.0)),  # 10 / 7
        shards("bare-x2-2", (5.0, 6.25)),  # 10 / 6.25 = 1.6: the best
        shards("bare-x2-3", (8.0, 6.0)),  # 10 / 8
        pytest_run("suite-n0", 0.0, 120.0, 100.0, 300),
        pytest_run("suite-n2", 0.0, 100.0, 80.0, 300),  # 1.2x
    ]
    results.mkdir(parents=True, exist_ok=True)
    (results / "bench-steps.jsonl").write_text("".join(json.dumps(step) + "\n" for step in steps))
    if parts is not None:
        plugin_cost.parts_path(results).parent.mkdir(parents=True, exist_ok=True)
        plugin_cost.parts_path(results).write_text(json.dumps({"seconds": parts, "hooks": {}}))


def test_benchmark_json_carries_the_issues_figures(tmp_path: Path) -> None:
    write_run(tmp_path, {"json": 0.2, "recorder": 0.5})
    _, figures = lab_overhead.report(tmp_path, IDLE, WATCH, 0)
    # (30 s - 10 s) / 100 checks = 200 ms beyond the verbs, less the floor's 5 ms.
    assert figures["overhead"]["plugin_ms_per_check"] == pytest.approx(195.0)
    assert figures["overhead"]["pytest_floor_ms_per_test"] == pytest.approx(5.0)
    assert figures["overhead"]["parts_ms_per_check"] == pytest.approx({"recorder": 5.0, "json": 2.0})
    assert list(figures["overhead"]["parts_ms_per_check"]) == ["recorder", "json"]  # the largest first
    assert figures["overhead"]["met"] is False
    # The ceiling is the best of three: 10 s over the slower half of 6.25 s.
    assert figures["xdist"]["ceiling"]["speedup"] == pytest.approx(1.6)
    assert figures["xdist"]["ceiling"]["runs"] == 3
    assert figures["xdist"]["share_of_ceiling"] == pytest.approx(1.2 / 1.6)
    assert figures["goals"]["plugin_ms_per_check"] == 5.0
    assert figures["goals"]["xdist_share_of_ceiling"] == 0.9
    json.dumps(figures)  # what benchmark.json is written from


def test_without_a_floor_run_there_is_no_plugin_cost(tmp_path: Path) -> None:
    write_run(tmp_path, None)
    lines = (tmp_path / "bench-steps.jsonl").read_text().splitlines()
    kept = [line for line in lines if json.loads(line)["name"] != plugin_cost.FLOOR]
    (tmp_path / "bench-steps.jsonl").write_text("\n".join(kept) + "\n")
    _, figures = lab_overhead.report(tmp_path, IDLE, WATCH, 0)
    assert "plugin_ms_per_check" not in figures["overhead"]
    assert "share_of_ceiling" in figures["xdist"]


def test_a_part_counts_its_own_time_not_the_parts_it_calls() -> None:
    ticks = iter(range(100))
    clock = part_timing.Clock(now=lambda: float(next(ticks)))
    clock.active = True
    # recorder: 0 .. 5 (5 ticks), inside it json: 1 .. 2 (1 tick) and allure: 3 .. 4 (1 tick).
    clock.timed("recorder", lambda: (clock.timed("json", lambda: None), clock.timed("allure", lambda: None)))
    assert clock.totals == {"recorder": 3.0, "json": 1.0, "allure": 1.0}


def test_a_wrapper_counts_before_and_after_its_yield_only() -> None:
    ticks = iter(range(100))
    clock = part_timing.Clock(now=lambda: float(next(ticks)))
    clock.active = True

    def wrapper() -> Any:
        result = yield
        return result * 2

    timed = clock.generator("leak guard", wrapper())
    next(timed)  # 0 .. 1
    for _ in range(5):  # the hooks it wraps run here, uncounted
        next(ticks)
    with pytest.raises(StopIteration) as stop:
        timed.send(21)  # 7 .. 8
    assert stop.value.value == 42
    assert clock.totals == {"leak guard": 2.0}


def test_outside_a_check_nothing_is_counted() -> None:
    clock = part_timing.Clock()
    assert clock.timed("json", lambda: 7) == 7
    assert clock.totals == {}


def test_the_floor_runs_the_empty_tests_without_the_plugin(tmp_path: Path) -> None:
    step = plugin_cost.floor_step(REPO, 484, {})
    assert ["-p", "no:rdma"] == step["argv"][step["argv"].index("no:rdma") - 1 : step["argv"].index("no:rdma") + 1]
    assert (REPO / step["argv"][-1]).is_file()
    assert step["env"][plugin_cost.EMPTY_ENV] == "484"
