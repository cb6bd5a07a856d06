"""Runs inside the lab VM for the benchmark: creates the devices, then runs the plan's steps.

The lab boots the VM and hands over a plan (pytest_rdma.lab with guest="benchmarks.lab_guest");
this runner times each step (a command: pytest, or the bare loop) with the VM's monotonic
clock and appends one JSON line per step to bench-steps.jsonl in the results directory.
Device creation, the kernel log kept off the console and the settings every lab run gets
(pytest_rdma.lab.guest: create_devices, LAB_SETTINGS) are the lab's own; a step's "env" wins.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_rdma.lab import guest

STEPS_FILE = "bench-steps.jsonl"
TIMING_ENV = "PYTEST_RDMA_BENCH_TIMING"


def lab_env(plan: dict[str, Any], environ: Mapping[str, str]) -> dict[str, str]:
    """Every step's environment, as the lab's runner makes it (pure): its settings (a kernel fault
    fails its check; deviations' C reproducers are built and run) unless already set, then what the
    host built for the guest. A step's own "env" is laid over this."""
    env = dict(environ)
    for name, value in guest.LAB_SETTINGS.items():
        env.setdefault(name, value)
    env.update(plan.get("env", {}))
    return env


def run_parallel(step: dict[str, Any], base_env: dict[str, str]) -> tuple[int, list[dict[str, Any]]]:
    """The step's commands ("parallel": argvs) started together; the worst exit and each one's JSON out."""
    env = dict(base_env, **step.get("env", {}))
    running = [subprocess.Popen(argv, cwd=step.get("cwd"), env=env) for argv in step["parallel"]]
    codes = [process.wait() for process in running]
    outs = [json.loads(Path(out).read_text()) for out in step.get("json_outs", []) if Path(out).exists()]
    return max(codes, key=abs), outs


def run_step(step: dict[str, Any], results: Path, base_env: dict[str, str]) -> dict[str, Any]:
    if "parallel" in step:
        for directory in step.get("mkdirs", []):
            Path(directory).mkdir(parents=True, exist_ok=True)
        print(f"bench: === {step['name']}: {len(step['parallel'])} processes at once", flush=True)
        started = time.monotonic()
        code, outs = run_parallel(step, base_env)
        ended = time.monotonic()
        print(f"bench: === {step['name']}: exit {code} in {ended - started:.2f} s", flush=True)
        return {
            "name": step["name"],
            "start": started,
            "end": ended,
            "wall_s": ended - started,
            "exit_code": code,
            "shards": outs,
        }
    steps_dir = results / "steps"
    steps_dir.mkdir(parents=True, exist_ok=True)
    name = step["name"]
    timing = steps_dir / f"{name}.timing.json"
    timing.unlink(missing_ok=True)
    env = dict(base_env, **step.get("env", {}))
    env[TIMING_ENV] = str(timing)
    for directory in step.get("mkdirs", []):
        Path(directory).mkdir(parents=True, exist_ok=True)
    print(f"bench: === {name}: {' '.join(step['argv'][1:])}", flush=True)
    log = None if step.get("console") else steps_dir / f"{name}.log"
    if log is not None:
        log.write_text("")
    # pytest's output as the lab's runner takes it: through a pipe that the runner copies (guest.RunOutput).
    output = guest.RunOutput(log)
    started = time.monotonic()
    if step.get("restart_dir") and log is None:
        # As the lab's runner: a check that kills pytest is recorded as a crash, and pytest starts again for the
        # rest (the pytest marks are then the last run's; the wall time is the whole step's).
        code = guest.run_restarting(output, step["argv"], step["cwd"], env, Path(step["restart_dir"]), name)
    else:
        code = output.run(step["argv"], step.get("cwd") or os.getcwd(), env)
    if step.get("scratch"):
        guest.keep_scratch(*map(Path, step["scratch"]))  # part of the run's cost, as in the lab
    ended = time.monotonic()
    record: dict[str, Any] = {
        "name": name,
        "start": started,
        "end": ended,
        "wall_s": ended - started,
        "exit_code": code,
    }
    if timing.exists():
        record["pytest"] = json.loads(timing.read_text())
    if step.get("json_out") and Path(step["json_out"]).exists():
        record["bare"] = json.loads(Path(step["json_out"]).read_text())
    print(f"bench: === {name}: exit {code} in {record['wall_s']:.2f} s", flush=True)
    return record


def main(plan_path: str) -> int:
    plan = json.loads(Path(plan_path).read_text())
    results = Path(plan["results"])
    begin: dict[str, Any] = {"name": "boot", "runner_start_uptime": guest._uptime(), "runner_start": time.monotonic()}
    problem = guest.create_devices(plan["devices"], plan.get("siw_ko"))
    begin["devices_ready"] = time.monotonic()
    begin["devices_ready_uptime"] = guest._uptime()
    if problem:
        print(f"bench: device setup failed: {problem}\n{guest._kernel_tail()}", flush=True)
        return guest.EXIT_DEVICE_FAILED
    print(
        f"bench: {', '.join(plan['devices'])} ready at guest uptime {begin['devices_ready_uptime']:.1f} s "
        f"(setup {begin['devices_ready'] - begin['runner_start']:.1f} s)",
        flush=True,
    )
    guest._run("dmesg", "--console-level", "1")  # as the lab's runner: the kernel log off the console
    base_env = lab_env(plan, os.environ)
    out = results / STEPS_FILE
    worst = 0
    with out.open("w") as handle:
        handle.write(json.dumps(begin) + "\n")
        for step in plan["steps"]:
            record = run_step(step, results, base_env)
            handle.write(json.dumps(record) + "\n")
            handle.flush()
            # pytest's 1 (a deviation found) and 5 (nothing selected) are results, not failures.
            if record["exit_code"] not in (0, 1, 5):
                worst = worst or record["exit_code"]
        handle.write(json.dumps({"name": "end", "end": time.monotonic(), "end_uptime": guest._uptime()}) + "\n")
    return worst


if __name__ == "__main__":
    guest.exit_with(main(sys.argv[1]), sys.argv[1])
