"""What the suite costs over the verbs it calls, measured in one lab VM boot (issues 6 and 17).

    .venv/bin/python benchmarks/lab_overhead.py [--results DIR] [--repeat N] [--no-profile] [--no-scaling]
    .venv/bin/python benchmarks/lab_overhead.py --table [--results DIR]   # the README's table


One boot of the lab (pytest_rdma.lab: prerequisites, siw.ko, the VM; its in-VM runner is
benchmarks/lab_guest.py) runs, in this order:

1. the lab's own runs: the whole suite on rxe0, then on siw0, with the lab's reporters
   (lab.command.LAB_REPORTS: --rdma-json, --rdma-junit; the host writes Allure afterwards) and settings
   (lab.guest.LAB_SETTINGS): cold start to the first test (the lab's figure, on the host
   clock) and each device's pytest run time;
2. the whole suite on rxe0 again, -n 0 then -n 2 (warm: no first-boot effects in either);
3. N times, alternately: the generated ibv_modify_qp and ibv_create_qp_ex checks on rxe0 under
   pytest with the plugin and reporters on, then the bare loop (benchmarks/bare_verbs.py: the
   same cases, each a Check run by its kind against one opened device, no pytest); the call
   records of both (the results file's steps, the bare loop's own) show the same verb calls;
   plus, once each, the same pytest run without reporters, and without reporters or guards,
   to split the overhead;
4. (unless --no-scaling) those checks restricted with -k to 0, 1 and 2 QP types (4 types: the
   runs of 3);
5. (unless --no-profile) cProfile of the bare loop and of the pytest run: where the time goes.

Before booting it waits (up to 15 min, polling every 20 s) until no other VM runs, and it
watches for other VMs during the run: the figures say if the machine was busy.
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks import bare_verbs, plugin_cost, readme_run  # noqa: E402
from pytest_rdma import expectations, lab  # noqa: E402
from pytest_rdma.catalogue.index import Catalogue  # noqa: E402
from pytest_rdma.expectations import without_vm_ending  # noqa: E402
from pytest_rdma.lab import guest, vm  # noqa: E402
from pytest_rdma.lab.command import LAB_REPORTS  # noqa: E402
from pytest_rdma.report.allure_writer import write_from_results  # noqa: E402
from pytest_rdma.verbs import CATALOGUE  # noqa: E402

# The suite's source (shipped as pytest_rdma.suites); runs given no test path use the packaged one.
SUITE = REPO / "suites"
VERBS = ["ibv_modify_qp", "ibv_create_qp_ex"]
CHECKS = [f"{SUITE.relative_to(REPO)}/test_verbs.py::test_{verb}" for verb in VERBS]
# -k selections by QP type; the expressions start with "(" so argparse does not read them as options.
# All 4 types are the overhead runs themselves (every case, with the one that mixes the types).
QP_TYPE_SETS = {0: "(no_such_check)", 1: "(-RC-)", 2: "(-RC- or -UD-)"}
# The cold start's goal is issue 29's, the one readme_run reports against (it was 20 s before the issue).
GOALS = {"overhead": 1.3, "speedup": 1.6, "cold_start_s": readme_run.COLD_START_GOAL_S, "device_run_s": 120.0}
GOALS.update(plugin_cost.GOALS)  # issue 29's: the plugin's own ms per check, xdist's share of its ceiling
# Deviations' C reproducers are built and run (the lab's RDMA_CONFIRM) in the lab's own runs only:
# that is a C compiler per deviation, a cost of the deviations found, not of each check.
NO_CONFIRM = {"RDMA_CONFIRM": "false"}
IDLE_POLL_S = 20
IDLE_LIMIT_S = 15 * 60


# -- the machine ---------------------------------------------------------------------------
def _descends_from_us(pid: int) -> bool:
    """Whether `pid` was started, through any number of parents, by this process."""
    while pid > 1:
        if pid == os.getpid():
            return True
        try:
            # The parent is the field after the parenthesised command name, which may hold spaces.
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
    return False


def other_vms(mine: str = "") -> list[str]:
    """Command lines of running QEMU VMs, except ours: our descendants, or those naming our results path.

    The path alone is not enough: with virtio-fs the shared directories are named to virtiofsd,
    not on QEMU's command line.
    """
    found = subprocess.run(["pgrep", "-a", "qemu-system"], capture_output=True, text=True, check=False).stdout
    return [
        line
        for line in found.splitlines()
        if line.strip() and not (mine and mine in line) and not _descends_from_us(int(line.split()[0]))
    ]


def wait_for_idle(log: Any = print) -> dict[str, Any]:
    started = time.monotonic()
    busy_at_start = len(other_vms())
    while other_vms() and time.monotonic() - started < IDLE_LIMIT_S:
        log(f"bench: {len(other_vms())} other VM(s) running; waiting (poll every {IDLE_POLL_S} s)")
        time.sleep(IDLE_POLL_S)
    return {
        "vms_at_start": busy_at_start,
        "waited_s": round(time.monotonic() - started, 1),
        "vms_when_starting": len(other_vms()),
        "loadavg_when_starting": os.getloadavg(),
    }


class BusyWatch(threading.Thread):
    """Samples other VMs and the load while the benchmark's VM runs."""

    def __init__(self, mine: str) -> None:
        super().__init__(daemon=True)
        self.mine = mine
        self.started = time.monotonic()  # ~ the lab's own start: set just before lab.run
        self.samples: list[tuple[float, int]] = []  # (seconds since started, other VMs)
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(5):
            self.samples.append((round(time.monotonic() - self.started, 1), len(other_vms(self.mine))))

    def summary(self) -> dict[str, Any]:
        counts = [n for _, n in self.samples]
        return {
            "samples": len(counts),
            "max_other_vms": max(counts, default=0),
            "share_busy": round(len([n for n in counts if n]) / len(counts), 2) if counts else 0.0,
            "busy_at": [t for t, n in self.samples if n],
        }


# -- the plan --------------------------------------------------------------------------------
def pytest_step(
    name: str,
    device: str,
    selection: list[str],
    reports: Path | None,
    extra: Sequence[str] = (),
    *,
    profile: Path | None = None,
    console: bool = False,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    argv = [sys.executable]
    if profile is not None:
        argv += ["-m", "cProfile", "-o", str(profile)]
    argv += ["-m", "pytest", "-p", "no:cacheprovider", "-p", "benchmarks.timing_plugin", f"--rdma-dev={device}"]
    scratch = f"/tmp/bench-scratch/{name}"  # the VM's tmpfs, as the lab's runner uses it
    if reports is not None:
        # Exactly the lab's reporters (lab.command.LAB_REPORTS, as pytest_rdma.lab.guest fills them in).
        argv += [arg.replace("{results}", str(reports)).replace("{scratch}", scratch) for arg in LAB_REPORTS]
    else:
        # No reporter, but the deviations' reproducers still go somewhere writable: by default they would
        # go to the working directory, the host's checkout, read-only in the VM (a usage error).
        argv.append(f"--rdma-reproducers={scratch}/reproducers")
    argv += [*extra, *selection]
    return {
        "name": name,
        "argv": argv,
        "cwd": str(REPO),
        "console": console,
        "env": NO_CONFIRM if env is None else env,
        "mkdirs": [str(reports), scratch] if reports else [scratch],
        "scratch": [scratch, str(reports)] if reports else None,
    }


def bare_step(name: str, device: str, out: Path, profile: Path | None = None) -> dict[str, Any]:
    argv = [sys.executable, "-m", "benchmarks.bare_verbs", "--dev", device, "--out", str(out)]
    for verb in VERBS:
        argv += ["--verb", verb]
    if profile is not None:
        argv += ["--profile", str(profile)]
    return {"name": name, "argv": argv, "cwd": str(REPO), "json_out": str(out)}


def bare_shards_step(name: str, device: str, out: Path, count: int = 2) -> dict[str, Any]:
    """The bare loop's cases split over `count` processes run at once: how far the verbs themselves scale."""
    outs = [out.with_name(f"{out.stem}-{index}.json") for index in range(count)]
    argvs = []
    for index, shard_out in enumerate(outs):
        step = bare_step(name, device, shard_out)
        argvs.append([*step["argv"], "--shard", f"{index}/{count}"])
    return {
        "name": name,
        "parallel": argvs,
        "cwd": str(REPO),
        "json_outs": [str(path) for path in outs],
        "mkdirs": [str(out.parent)],
    }


def bare_ceiling(steps: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """The bare loop's own speedup over two processes: one process's loop time over the slower half's,
    the best of the runs (bare-x2, bare-x2-2, ...): a slow moment of the machine does not lower the bar."""
    runs = [step.get("shards") or [] for name, step in steps.items() if name.startswith("bare-x2")]
    ones = [step["bare"]["loop_s"] for name, step in steps.items() if name.startswith("bare-") and "bare" in step]
    if not ones or not any(len(shards) >= 2 for shards in runs):
        return None
    cases = max(sum(shard["cases"] for shard in shards) for shards in runs)
    return plugin_cost.best_ceiling([[shard["loop_s"] for shard in shards] for shards in runs], min(ones), cases)


def ceiling_steps(results: Path) -> list[dict[str, Any]]:
    """The bare loop over two processes, plugin_cost.CEILING_RUNS times (the ceiling is the best)."""
    names = ["bare-x2", *(f"bare-x2-{n}" for n in range(2, plugin_cost.CEILING_RUNS + 1))]
    return [bare_shards_step(name, "rxe0", results / "xdist" / f"{name}.json") for name in names]


def cost_steps(results: Path) -> list[dict[str, Any]]:
    """pytest's floor (empty tests, no plugin) and the checks once more with each part's hooks timed."""
    count = len(bare_verbs.cases_of(Catalogue.of(CATALOGUE)[verb] for verb in VERBS))
    parts = pytest_step(
        plugin_cost.PARTS,
        "rxe0",
        CHECKS,
        results / "overhead" / plugin_cost.PARTS,
        ["-n", "0", "-p", "benchmarks.part_timing"],
        env={**NO_CONFIRM, plugin_cost.PARTS_ENV: str(plugin_cost.parts_path(results))},
    )
    return [plugin_cost.floor_step(REPO, count, NO_CONFIRM), parts]


def first_run(steps: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """The step whose first test the host's cold-start clock saw: the first pytest step of the plan."""
    return next((step for step in steps.values() if "pytest" in step), None)


def quick_steps(results: Path, profile: bool) -> list[dict[str, Any]]:
    """A shorter plan for a busy machine: the overhead pair first (its first check is the cold
    start), the profiles, then the same checks with -n 2 for xdist (-n 0 is the first run)."""
    marks = {**NO_CONFIRM, "PYTEST_RDMA_LAB_MARKS": str(results)}
    checks = results / "overhead" / "checks-1"
    steps = [
        pytest_step("checks-1", "rxe0", CHECKS, checks, ["-n", "0"], env=marks),
        bare_step("bare-1", "rxe0", results / "overhead" / "bare-1.json"),
        *cost_steps(results),
        *ceiling_steps(results),
    ]
    if profile:
        steps += _profile_steps(results)
    steps.append(pytest_step("checks-n2", "rxe0", CHECKS, results / "xdist" / "checks-n2", ["-n", "2"]))
    return steps


def _profile_steps(results: Path) -> list[dict[str, Any]]:
    (results / "profile").mkdir(parents=True, exist_ok=True)
    return [
        bare_step("profile-bare", "rxe0", results / "profile" / "bare.json", results / "profile" / "bare.prof"),
        pytest_step(
            "profile-checks",
            "rxe0",
            CHECKS,
            results / "profile" / "checks",
            ["-n", "0"],
            profile=results / "profile" / "checks.prof",
        ),
    ]


def plan_steps(results: Path, repeat: int, profile: bool, scaling: bool = True) -> list[dict[str, Any]]:
    # As the lab: no test path, so the plugin runs its packaged suite; but not the checks the shipped waivers record
    # as ending the VM (rxe's Oopses on 6.1): this boot has no fault recovery, and it measures costs, not kernels.
    vm_ending = without_vm_ending(expectations.load(None))
    suite: list[str] = ["-k", vm_ending] if vm_ending else []
    # As the lab's runner: the first test of the first run is marked for the host's cold-start clock.
    lab_env = {"PYTEST_RDMA_LAB_MARKS": str(results)}
    # Without xdist, as `pytest-rdma lab` runs (guest.xdist_args: its runner restarts pytest after a crash).
    # Each device with its peer, as the lab gives it (guest.peer_args): the two-device checks run too.
    steps = [
        {
            **pytest_step(
                f"lab-{dev}",
                dev,
                suite,
                results / "lab" / dev,
                [*guest.xdist_args([]), *guest.peer_args([dev], [])],
                console=True,
                env=lab_env,
            ),
            "restart_dir": str(results / "lab" / dev),  # the lab's restart after a crash (guest.run_restarting)
        }
        for dev in ("rxe0", "siw0")
    ]
    steps += [
        pytest_step(
            f"suite-n{n}", "rxe0", suite, results / "xdist" / f"n{n}", ["-n", str(n), *guest.peer_args(["rxe0"], [])]
        )
        for n in (0, 2)
    ]
    for index in range(1, repeat + 1):
        steps.append(
            pytest_step(f"checks-{index}", "rxe0", CHECKS, results / "overhead" / f"checks-{index}", ["-n", "0"])
        )
        steps.append(bare_step(f"bare-{index}", "rxe0", results / "overhead" / f"bare-{index}.json"))
    steps += [*cost_steps(results), *ceiling_steps(results)]
    steps += [
        pytest_step("checks-noreports", "rxe0", CHECKS, None, ["-n", "0"]),
        pytest_step(
            "checks-noreports-noguards", "rxe0", CHECKS, None, ["-n", "0", "--rdma-leaks=off", "--rdma-kernel-log=off"]
        ),
    ]
    for types, expression in QP_TYPE_SETS.items() if scaling else ():
        steps.append(
            pytest_step(f"scale-{types}", "rxe0", CHECKS, results / "scale" / str(types), ["-n", "0", "-k", expression])
        )
    if profile:
        steps += _profile_steps(results)
    return steps


# -- reading the results ---------------------------------------------------------------------
def load_steps(results: Path) -> dict[str, dict[str, Any]]:
    path = results / "bench-steps.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return {record["name"]: record for record in map(json.loads, filter(None, lines))}


def lab_timing(results: Path) -> dict[str, str]:
    path = results / "lab-timing.txt"
    lines = path.read_text().splitlines() if path.exists() else []
    return dict(line.split("=", 1) for line in lines if "=" in line)


def phases(step: dict[str, Any]) -> dict[str, float]:
    """Seconds, from the pytest process's start: startup, collection, the checks, the end."""
    marks = step.get("pytest", {}).get("marks", {})
    start, end = step["start"], step["end"]
    first, last = marks.get("first_test_start"), marks.get("last_test_end")
    out = {"wall": step["wall_s"]}
    if "sessionstart" in marks:
        out["to_sessionstart"] = marks["sessionstart"] - start
    if "collection_finish" in marks and "sessionstart" in marks:
        out["collection"] = marks["collection_finish"] - marks["sessionstart"]
    if first is not None and last is not None:
        out["to_first_test"] = first - start
        out["checks"] = last - first
        out["after_last_test"] = end - last
    return out


def tests_of(step: dict[str, Any]) -> tuple[int, dict[str, int]]:
    data = step.get("pytest", {})
    return data.get("tests", 0), data.get("outcomes", {})


def call_signature(step: str) -> str:
    """A results file's step line, "[3] setup: ibv_alloc_pd(ctx) -> pd0", as "setup ibv_alloc_pd"."""
    _, _, rest = step.partition("] ")
    phase, _, call = rest.partition(": ")
    return f"{phase} {call.split('(', 1)[0]}"


def recorded_steps(results_file: Path) -> dict[str, list[str]]:
    """Each check's recorded calls in a results file written by --rdma-json, by stable id."""
    if not results_file.exists():
        return {}
    document = json.loads(results_file.read_text())
    return {record["stable_id"]: record.get("steps", []) for record in document.get("results", [])}


def same_calls(under_pytest: dict[str, list[str]], bare: dict[str, list[str]]) -> dict[str, Any]:
    """Whether each check made the same verb calls, in the same phases and order, on both sides (pure).

    Read from the call records (calls/record.py) as each side rendered them: the results file's
    `steps` and the bare loop's. Values differ between runs (addresses, QP numbers); verbs must not.
    """
    differ = [
        check
        for check in sorted(set(under_pytest) | set(bare))
        if [call_signature(step) for step in under_pytest.get(check, [])]
        != [call_signature(step) for step in bare.get(check, [])]
    ]
    counts: dict[str, list[int]] = {}
    for side, records in enumerate((bare, under_pytest)):
        for steps in records.values():
            for step in steps:
                verb = call_signature(step).split(" ", 1)[-1]
                counts.setdefault(verb, [0, 0])[side] += 1
    return {
        "checks": len(set(under_pytest) | set(bare)),
        "identical": bool(bare) and not differ,
        "differ": differ[:20],
        "calls": [sum(bare_n for bare_n, _ in counts.values()), sum(n for _, n in counts.values())],
        "per_verb": {verb: pair for verb, pair in sorted(counts.items())},
    }


def where_time_goes(profile: Path) -> dict[str, float]:
    """Own time (tottime) per area of code, in seconds."""
    stats = pstats.Stats(str(profile)).stats  # type: ignore[attr-defined]
    areas: dict[str, float] = {}
    for (file, _line, name), (_cc, _nc, tottime, *_rest) in stats.items():
        areas[_area(file, name)] = areas.get(_area(file, name), 0.0) + tottime
    return dict(sorted(areas.items(), key=lambda item: -item[1]))


def _area(file: str, name: str) -> str:
    if file == "~":
        if "posix" in name or "io." in name or "_io" in name or "select" in name or "socket" in name:
            return "system calls (files, netlink, kmsg)"
        return "other built-ins"
    for marker, area in (
        ("/pytest_rdma/ibv/", "pytest_rdma ibv (the binding; a ctypes call's C time counts here)"),
        ("/pytest_rdma/calls/", "pytest_rdma calls (resolve, marshal, record)"),
        ("/pytest_rdma/kinds/", "pytest_rdma kinds (the checks' own Python)"),
        ("/pytest_rdma/provider/", "pytest_rdma provider (the device)"),
        ("/pytest_rdma/guard/", "pytest_rdma guards"),
        ("/pytest_rdma/report/", "pytest_rdma reporters"),
        ("/pytest_rdma/", "pytest_rdma (plugin, catalogue, generation)"),
        ("/_pytest/", "pytest"),
        ("/pluggy/", "pluggy"),
        ("/xdist/", "pytest-xdist"),
        ("/benchmarks/", "benchmark"),
        ("<frozen importlib", "imports"),
        ("/python3", "Python stdlib"),
    ):
        if marker in file:
            return area
    return "other"


def top_functions(profile: Path, checks: int = 0, count: int = 15) -> list[str]:
    stats = pstats.Stats(str(profile)).stats  # type: ignore[attr-defined]
    rows = sorted(stats.items(), key=lambda item: -item[1][2])[:count]
    return [
        f"{tt:7.3f} s own"
        + (f" ({tt / checks * 1000:5.2f} ms/check)" if checks else "")
        + f", {nc:7d} calls  {_where(file, line, name)}"
        for (file, line, name), (_cc, nc, tt, *_rest) in rows
    ]


def _where(file: str, line: int, name: str) -> str:
    if file == "~":
        return name
    for root in ("site-packages/", "dist-packages/", str(REPO) + "/", "python3.11/"):
        if root in file:
            file = file.split(root, 1)[1]
            break
    return f"{file}:{line} {name}"


# -- the report --------------------------------------------------------------------------------
def report(results: Path, busy: dict[str, Any], watch: dict[str, Any], exit_code: int) -> tuple[str, dict]:
    steps = load_steps(results)
    timing = lab_timing(results)
    out: list[str] = []
    figures: dict[str, Any] = {
        "machine": {"before": busy, "during": watch, "cpus": os.cpu_count()},
        "goals": GOALS,
        "checks": {},
    }
    say = out.append
    busy_note = (
        "idle (no other VM"
        + (f" after waiting {busy['waited_s']:.0f} s" if busy["waited_s"] else "")
        + f"; load {busy['loadavg_when_starting'][0]:.2f})"
    )
    if busy["vms_when_starting"]:
        waited = "waited the 15 min limit" if busy["waited_s"] else "did not wait: --no-wait"
        busy_note = f"BUSY: {busy['vms_when_starting']} other VM(s) running at start ({waited})"
    if watch["max_other_vms"]:
        busy_note += (
            f"; BUSY during the run: other VMs in {watch['share_busy']:.0%} of samples (up to {watch['max_other_vms']})"
        )
    say(
        f"pytest-rdma benchmark (issue 17), one lab VM boot ({timing.get('accel', '?').upper()}), "
        f"{os.cpu_count()} host cores; machine: {busy_note}"
    )
    overlapped = busy_steps(steps, timing, watch.get("busy_at", []))
    figures["machine"]["busy_steps"] = overlapped
    if overlapped:
        say(f"BUSY: other VMs ran during these steps (their figures are inflated): {', '.join(overlapped)}")
    if exit_code not in (0, 1):
        say(f"WARNING: the VM run ended with exit code {exit_code}; figures may be incomplete")

    # (1) overhead
    say("\n(1) Overhead: generated ibv_modify_qp + ibv_create_qp_ex checks on rxe0")
    pairs = [
        (steps[f"checks-{i}"], steps[f"bare-{i}"])
        for i in range(1, 100)
        if f"checks-{i}" in steps and f"bare-{i}" in steps
    ]
    if pairs:
        tests, outcomes = tests_of(pairs[0][0])
        bare = pairs[0][1].get("bare", {})
        same = _same_cases(pairs[0][0], bare)
        calls = same_calls(recorded_steps(results / "overhead" / "checks-1" / "results.json"), bare.get("steps", {}))
        say(
            f"    pytest: {tests} checks {outcomes}; bare loop: {bare.get('cases')} cases {bare.get('outcomes')}; "
            f"same cases: {same}"
        )
        say(
            f"    verb calls (call records: the results file's steps, the bare loop's): bare {calls['calls'][0]}, "
            f"under pytest {calls['calls'][1]}; "
            + ("the same verbs per check, in order" if calls["identical"] else f"DIFFER in {calls['differ']}")
        )
        walls = [(phases(c), b["wall_s"], b.get("bare", {}).get("loop_s", float("nan"))) for c, b in pairs]
        for index, (ph, bare_wall, bare_loop) in enumerate(walls, 1):
            say(
                f"    run {index}: pytest process {ph['wall']:.2f} s (checks {ph.get('checks', 0):.2f} s) | "
                f"bare process {bare_wall:.2f} s (loop {bare_loop:.2f} s)"
            )
        best_pytest = min(ph["wall"] for ph, _, _ in walls)
        best_checks = min(ph.get("checks", float("inf")) for ph, _, _ in walls)
        best_bare = min(w for _, w, _ in walls)
        best_loop = min(loop for _, _, loop in walls)
        end_to_end = best_pytest / best_bare
        in_session = best_checks / best_loop
        figures["checks"]["overhead_run"] = tests
        figures["overhead"] = {
            "end_to_end": end_to_end,
            "checks_vs_loop": in_session,
            "runs": walls,
            "tests": tests,
            "outcomes": outcomes,
            "bare_outcomes": bare.get("outcomes"),
            "same_cases": same,
            "same_calls": calls,
        }
        say(
            f"    OVERHEAD end to end (pytest process / bare process, best of {len(walls)}): "
            f"{best_pytest:.2f} / {best_bare:.2f} = {end_to_end:.2f}x  {_goal(end_to_end, 'overhead')}"
        )
        say(
            f"    OVERHEAD of the checks (first check's start to last check's end / the bare loop): "
            f"{best_checks:.2f} / {best_loop:.2f} = {in_session:.2f}x  {_goal(in_session, 'overhead')}"
        )
        first = phases(pairs[0][0])
        say(
            f"    the pytest process: {first.get('to_sessionstart', 0):.2f} s to start pytest, "
            f"{first.get('collection', 0):.2f} s collecting, {first.get('to_first_test', 0):.2f} s to the first "
            f"check, {first.get('checks', 0):.2f} s of checks, {first.get('after_last_test', 0):.2f} s after the last"
        )
        for name, what in (
            ("checks-noreports", "no reporters (no --rdma-json/--rdma-junit/--rdma-allure)"),
            ("checks-noreports-noguards", "no reporters, --rdma-leaks=off --rdma-kernel-log=off"),
        ):
            if name in steps:
                ph = phases(steps[name])
                say(
                    f"    variant, {what}: process {ph['wall']:.2f} s ({ph['wall'] / best_bare:.2f}x), "
                    f"checks {ph.get('checks', 0):.2f} s ({ph.get('checks', 0) / best_loop:.2f}x)"
                )
                figures["overhead"][name] = ph
        cost = plugin_cost_figures(results, steps, best_checks, best_loop, tests)
        if cost is not None:
            figures["overhead"].update(cost)
            say(
                f"    PLUGIN'S OWN COST per check: ({best_checks:.2f} s - {best_loop:.2f} s) / {tests} = "
                f"{cost['beyond_bare_loop_ms_per_check']:.1f} ms beyond the verbs, less pytest's floor "
                f"{cost['pytest_floor_ms_per_test']:.1f} ms per empty test = {cost['plugin_ms_per_check']:.1f} ms  "
                f"[goal <= {plugin_cost.PLUGIN_MS_GOAL:g}: {'met' if cost['met'] else 'MISSED'}]"
            )
            if "parts_ms_per_check" in cost:
                say(
                    "    its parts (own time of their hooks, a run of its own): "
                    + "; ".join(f"{part} {ms:.2f} ms" for part, ms in cost["parts_ms_per_check"].items())
                )
        on_host = allure_on_host_ms(results / "overhead" / "checks-1" / "results.json")
        if on_host is not None:
            figures["overhead"]["allure_on_host_ms_per_check"] = on_host
            say(
                f"    Allure, written by the lab on the host from the results file after the run (not under TCG, "
                f"not in the figure above): {on_host:.2f} ms per check"
            )

    # (2) xdist
    pair = ("suite-n0", "suite-n2") if "suite-n2" in steps else ("checks-1", "checks-n2")
    if pair[1] == "checks-n2":
        say("\n(2) pytest-xdist: the overhead checks on rxe0 (quick plan: checks-1 is -n 0, checks-n2 is -n 2)")
    else:
        say("\n(2) pytest-xdist: the whole suite on rxe0 (lab reporters on), warm")
    if all(name in steps for name in pair):
        n0, n2 = phases(steps[pair[0]]), phases(steps[pair[1]])
        speedup = n0["wall"] / n2["wall"]
        t0, o0 = tests_of(steps[pair[0]])
        t2, o2 = tests_of(steps[pair[1]])
        figures["xdist"] = {
            "n0": n0,
            "n2": n2,
            "speedup": speedup,
            "tests": [t0, t2],
            "outcomes": [o0, o2],
            "scope": "whole suite" if pair[0] == "suite-n0" else "overhead checks",
        }
        say(f"    -n 0: {n0['wall']:.2f} s ({t0} checks {o0}); -n 2: {n2['wall']:.2f} s ({t2} checks {o2})")
        say(f"    SPEEDUP {n0['wall']:.2f} / {n2['wall']:.2f} = {speedup:.2f}x  {_goal(speedup, 'speedup', True)}")
        if "checks" in n0 and "checks" in n2:
            say(
                f"    the checks alone (first start to last end): {n0['checks']:.2f} s vs {n2['checks']:.2f} s = "
                f"{n0['checks'] / n2['checks']:.2f}x; before the first check: {n0['to_first_test']:.2f} s vs "
                f"{n2['to_first_test']:.2f} s (-n 2 starts two workers, each imports and collects)"
            )
    ceiling = bare_ceiling(steps)
    if ceiling is not None:
        figures.setdefault("xdist", {})["ceiling"] = ceiling
        say(
            f"    CEILING: the bare loop's cases in 2 processes at once: {ceiling['one_s']:.2f} s of verbs in one "
            f"process, the slower of two halves {ceiling['slowest_half_s']:.2f} s = {ceiling['speedup']:.2f}x "
            "(no runner of these checks can scale further on this VM)"
        )
        if "speedup" in figures["xdist"]:
            figures["xdist"].update(plugin_cost.share_of_ceiling(figures["xdist"]["speedup"], ceiling["speedup"]))
            met = "met" if figures["xdist"]["share_met"] else "MISSED"
            say(
                f"    SHARE OF THE CEILING: {figures['xdist']['speedup']:.2f}x / {ceiling['speedup']:.2f}x (best of "
                f"{ceiling['runs']}) = {figures['xdist']['share_of_ceiling']:.2f}  "
                f"[goal >= {plugin_cost.SHARE_OF_CEILING_GOAL:g}: {met}]"
            )

    # (3) cold start and lab runs
    say("\n(3) The lab: cold start and each device's run")
    boot = steps.get("boot", {})
    first_host = _float(timing.get("first_test_s"))
    total_host = _float(timing.get("total_s"))
    lab_rxe = first_run(steps)
    if lab_rxe and first_host is not None:
        # Guest times are monotonic; uptime (from the kernel's start) = monotonic + this.
        to_uptime = boot["runner_start_uptime"] - boot["runner_start"]
        first_guest = lab_rxe["pytest"]["marks"]["first_test_start"]
        offset = first_host - (first_guest + to_uptime)  # host seconds when the kernel started
        runner = boot["runner_start_uptime"]
        setup = boot["devices_ready"] - boot["runner_start"]
        to_first = first_guest - lab_rxe["start"]
        end_guest = steps.get("end", {}).get("end", lab_rxe["end"]) + to_uptime
        shutdown = (total_host - offset - end_guest) if total_host is not None else 0.0
        figures["cold_start"] = {
            "run": lab_rxe["name"],
            "first_test_s": first_host,
            "host_until_kernel_s": offset,
            "kernel_boot_to_runner_s": runner,
            "device_setup_s": setup,
            "pytest_start_to_first_test_s": to_first,
            "shutdown_s": shutdown,
        }
        say(f"    COLD START to the first test: {first_host:.1f} s (host clock)  {_goal(first_host, 'cold_start_s')}")
        say(
            f"      = host side until the kernel starts {offset:.1f} s (prerequisite checks, vng, QEMU)"
            f" + kernel boot and init until the runner starts {runner:.1f} s"
            f" + creating rxe0 and siw0 {setup:.1f} s + pytest start to first test {to_first:.1f} s"
        )
        lab_end = steps.get("lab-siw0", lab_rxe)["end"] + to_uptime
        whole = offset + lab_end + shutdown
        if "lab-siw0" in steps:
            figures["lab_run_s"] = whole
            say(
                f"    the whole lab run (as `pytest-rdma lab`: boot, rxe0, siw0, power off): {whole:.1f} s "
                f"(host start to the end of the siw0 run, plus the VM's power-off of {shutdown:.1f} s)"
            )
        for dev in ("rxe0", "siw0"):
            step = steps.get(f"lab-{dev}")
            if step:
                ph = phases(step)
                tests, outcomes = tests_of(step)
                figures[f"lab_{dev}"] = {**ph, "tests": tests, "outcomes": outcomes}
                figures["checks"][dev] = tests
                say(
                    f"    {dev}: pytest run {ph['wall']:.1f} s: start to first test {ph.get('to_first_test', 0):.1f}"
                    f" s, checks {ph.get('checks', 0):.1f} s, after the last {ph.get('after_last_test', 0):.1f} s; "
                    f"{tests} checks {outcomes}  {_goal(ph['wall'], 'device_run_s')}"
                )

    # (4) scaling
    say("\n(4) Run time vs number of generated checks (ibv_modify_qp + ibv_create_qp_ex on rxe0, -k by QP type)")
    rows = []
    for types in (*QP_TYPE_SETS, 4):
        step = steps.get(f"scale-{types}" if types in QP_TYPE_SETS else "checks-1")
        if step:
            ph = phases(step)
            tests, outcomes = tests_of(step)
            ran = tests - outcomes.get("skipped", 0)
            rows.append({"qp_types": types, "tests": tests, "ran": ran, **ph})
            per = f"{ph['checks'] / tests * 1000:.1f} ms/check" if tests and "checks" in ph else "-"
            say(
                f"    {types} QP type(s): {tests:4d} checks ({ran} not skipped): {ph['wall']:6.2f} s "
                f"(checks {ph.get('checks', 0):.2f} s, {per})"
            )
    figures["scaling"] = rows
    if len(rows) >= 2 and rows[-1]["tests"] and rows[0]["tests"] == 0:
        fixed = rows[0]["wall"]
        slope = (rows[-1]["wall"] - fixed) / rows[-1]["tests"]
        say(f"    fit: {fixed:.2f} s fixed (startup, collection, reports) + {slope * 1000:.1f} ms per check")

    # (5) profiles
    profile_dir = results / "profile"
    if (profile_dir / "bare.prof").exists() and (profile_dir / "checks.prof").exists():
        say("\n(5) Profiles (cProfile; slower than the timed runs; files in profile/)")
        for name in ("bare", "checks"):
            areas = where_time_goes(profile_dir / f"{name}.prof")
            figures[f"profile_{name}"] = areas
            whole = sum(areas.values())
            say(
                f"    {name}: {whole:.2f} s profiled; own time by area: "
                + "; ".join(
                    f"{area} {seconds:.2f} s ({seconds / whole:.0%})" for area, seconds in list(areas.items())[:8]
                )
            )
        checks = tests_of(steps["profile-checks"])[0] if "profile-checks" in steps else 0
        say(f"    top functions under pytest (own time; per check over its {checks} checks):")
        out.extend("      " + line for line in top_functions(profile_dir / "checks.prof", checks))
    return "\n".join(out), figures


def allure_on_host_ms(results_file: Path) -> float | None:
    """What the lab's Allure results cost per check, written on the host from a run's results file, as the
    lab writes them (lab.write_allure); None without that file."""
    if not results_file.exists():
        return None
    with tempfile.TemporaryDirectory(prefix="bench-allure-") as out:
        started = time.perf_counter()
        write_from_results(results_file, Path(out), results_file.parent / "reproducers", ["rxe0"])
        seconds = time.perf_counter() - started
        count = sum(1 for _ in Path(out).glob("*-result.json"))
    return seconds / count * 1000 if count else None


def plugin_cost_figures(
    results: Path, steps: dict[str, dict[str, Any]], checks_s: float, loop_s: float, checks: int
) -> dict[str, Any] | None:
    """overhead.plugin_ms_per_check and its parts, from the floor step and the parts file (None without a floor)."""
    floor = steps.get(plugin_cost.FLOOR)
    floor_s = plugin_cost.seconds_of(floor) if floor else None
    empty = tests_of(floor)[0] if floor else 0
    if floor_s is None or not empty or not checks:
        return None
    path = plugin_cost.parts_path(results)
    parts = json.loads(path.read_text())["seconds"] if path.exists() else None
    return plugin_cost.plugin_cost(checks_s, loop_s, checks, floor_s, empty, parts)


def busy_steps(steps: dict[str, dict[str, Any]], timing: dict[str, str], busy_at: list[float]) -> list[str]:
    """Steps during which the host saw other VMs (host clock: seconds since the lab started)."""
    first_host = _float(timing.get("first_test_s"))
    boot, lab_rxe = steps.get("boot"), first_run(steps)
    if not busy_at or first_host is None or not boot or not lab_rxe or "pytest" not in lab_rxe:
        return []
    # Guest monotonic time -> host seconds since the lab started, through the first test's mark.
    shift = first_host - lab_rxe["pytest"]["marks"]["first_test_start"]
    return [
        name
        for name, step in steps.items()
        if "start" in step and "end" in step and any(step["start"] + shift <= t <= step["end"] + shift for t in busy_at)
    ]


def _same_cases(step: dict[str, Any], bare: dict[str, Any]) -> bool:
    """The pytest run's checks, by stable id (test_<verb>[<case id>]), are the bare loop's, in order."""
    ids = []
    for nodeid in step.get("pytest", {}).get("nodeids", []):
        function, _, params = nodeid.split("::")[-1].partition("[")
        device, _, case = params[:-1].partition("-")
        ids.append(f"{function}[{case}]")  # the record's stable_id, as the bare loop gives it
    return bool(ids) and ids == bare.get("ids")


def _float(value: str | None) -> float | None:
    try:
        return float(value) if value not in (None, "None") else None
    except ValueError:
        return None


def _goal(value: float, goal: str, at_least: bool = False) -> str:
    target = GOALS[goal]
    met = value >= target if at_least else value <= target
    return f"[goal {'>=' if at_least else '<='} {target:g}: {'met' if met else 'MISSED'}]"


# -- the README's table -------------------------------------------------------------------------
def _verdict(value: float | None, goal: str, at_least: bool = False) -> str:
    if value is None:
        return "not measured"
    target = GOALS[goal]
    return "met" if (value >= target if at_least else value <= target) else "missed"


def machine_note(figures: dict[str, Any]) -> str:
    """The machine's load while measuring, in words (pure)."""
    machine = figures.get("machine", {})
    before, during = machine.get("before", {}), machine.get("during", {})
    load = before.get("loadavg_when_starting") or [float("nan")]
    text = f"{machine.get('cpus', '?')} host cores; load {load[0]:.2f} at the start"
    if before.get("waited_s"):
        text += f" after waiting {before['waited_s']:.0f} s for other VMs"
    if before.get("vms_when_starting"):
        text += f"; {before['vms_when_starting']} other VM(s) still running at the start"
    if during.get("max_other_vms"):
        text += (
            f"; other VMs ran in {during['share_busy']:.0%} of the samples during the run "
            f"(up to {during['max_other_vms']} at once)"
        )
    else:
        text += "; no other VM during the run"
    busy = machine.get("busy_steps") or []
    if busy:
        text += f"; steps that overlapped them: {', '.join(busy)}"
    return text


def readme_table(figures: dict[str, Any]) -> str:
    """The README's performance table, from benchmark.json's figures only (pure)."""
    rows = ["| what | measured | goal |", "|---|---|---|"]
    overhead = figures.get("overhead")
    if overhead:
        runs = overhead["runs"]
        best_wall = min(ph["wall"] for ph, _, _ in runs)
        best_checks = min(ph.get("checks", float("inf")) for ph, _, _ in runs)
        best_bare, best_loop = min(w for _, w, _ in runs), min(loop for _, _, loop in runs)
        tests = overhead.get("tests") or 0
        per = (
            f" (bare {best_loop / tests * 1000:.1f} ms per check; under pytest {best_checks / tests * 1000:.1f} ms)"
            if tests
            else ""
        )
        calls = overhead.get("same_calls") or {}
        rows.append(
            f"| overhead, end to end ({tests} checks) | {best_wall:.2f} s / {best_bare:.2f} s = "
            f"**{overhead['end_to_end']:.2f}×** | ≤ {GOALS['overhead']:g}× — "
            f"{_verdict(overhead['end_to_end'], 'overhead')} |"
        )
        rows.append(
            f"| overhead, checks only | {best_checks:.2f} s / {best_loop:.2f} s = "
            f"**{overhead['checks_vs_loop']:.2f}×**{per} | ≤ {GOALS['overhead']:g}× — "
            f"{_verdict(overhead['checks_vs_loop'], 'overhead')} |"
        )
        variants = [
            overhead[name]
            for name in ("checks-noreports", "checks-noreports-noguards")
            if name in overhead and "checks" in overhead[name]
        ]
        if len(variants) == 2:
            rows.append(
                "| the same without reporters / without reporters and guards | "
                + " / ".join(f"{v['wall'] / best_bare:.2f}×" for v in variants)
                + " end to end ("
                + " / ".join(f"{v['checks'] / best_loop:.2f}×" for v in variants)
                + " checks only) | |"
            )
        if "plugin_ms_per_check" in overhead:
            own = overhead["plugin_ms_per_check"]
            parts = overhead.get("parts_ms_per_check") or {}
            shares = "; its parts: " + ", ".join(f"{part} {ms:.2f}" for part, ms in parts.items()) if parts else ""
            if "allure_on_host_ms_per_check" in overhead:
                shares += f"; Allure, on the host after the run: {overhead['allure_on_host_ms_per_check']:.2f}"
            rows.append(
                f"| the plugin's own cost per check | **{own:.1f} ms** "
                f"({overhead['beyond_bare_loop_ms_per_check']:.1f} ms beyond the verbs, less pytest's floor of "
                f"{overhead['pytest_floor_ms_per_test']:.1f} ms per empty test){shares} | "
                f"≤ {GOALS['plugin_ms_per_check']:g} ms — {_verdict(own, 'plugin_ms_per_check')} |"
            )
        if calls:
            rows.append(
                f"| same verb calls on both sides (call records) | "
                f"{'yes' if calls.get('identical') else 'NO'}: {calls['calls'][0]} calls bare, "
                f"{calls['calls'][1]} under pytest | |"
            )
    xdist = figures.get("xdist")
    if xdist and "n0" in xdist:
        n0, n2 = xdist["n0"], xdist["n2"]
        alone = (
            f" (the checks alone {n0['checks']:.1f} s → {n2['checks']:.1f} s = {n0['checks'] / n2['checks']:.2f}×)"
            if "checks" in n0 and "checks" in n2
            else ""
        )
        rows.append(
            f"| xdist, {xdist.get('scope', 'whole suite')} on rxe0 ({xdist['tests'][0]} checks) | "
            f"`-n 0` {n0['wall']:.1f} s, `-n 2` {n2['wall']:.1f} s: "
            f"**{xdist['speedup']:.2f}×**{alone} | ≥ {GOALS['speedup']:g}× — "
            f"{_verdict(xdist['speedup'], 'speedup', True)} |"
        )
    ceiling = (xdist or {}).get("ceiling")
    if ceiling:
        rows.append(
            f"| the bare verbs in 2 processes at once (no pytest: the most any runner can scale here) | "
            f"{ceiling['one_s']:.1f} s → {ceiling['slowest_half_s']:.1f} s: **{ceiling['speedup']:.2f}×** | |"
        )
        if xdist and "share_of_ceiling" in xdist:
            share = xdist["share_of_ceiling"]
            rows.append(
                f"| xdist's share of that ceiling (`-n 2` end to end) | {xdist['speedup']:.2f}× / "
                f"{ceiling['speedup']:.2f}× = **{share:.2f}** | ≥ {GOALS['xdist_share_of_ceiling']:g} — "
                f"{_verdict(share, 'xdist_share_of_ceiling', True)} |"
            )
    cold = figures.get("cold_start")
    if cold:
        rows.append(
            f"| cold start to first test ({cold.get('run', 'lab-rxe0')}) | **{cold['first_test_s']:.1f} s** = "
            f"{cold['host_until_kernel_s']:.1f} s host"
            f" + {cold['kernel_boot_to_runner_s']:.1f} s kernel and init + {cold['device_setup_s']:.1f} s creating"
            f" the devices + {cold['pytest_start_to_first_test_s']:.1f} s pytest start to first check | "
            f"≤ {GOALS['cold_start_s']:g} s — {_verdict(cold['first_test_s'], 'cold_start_s')} |"
        )
    for dev in ("rxe0", "siw0"):
        run = figures.get(f"lab_{dev}")
        if run:
            rows.append(
                f"| lab run, whole catalogue on {dev} ({run['tests']} checks) | **{run['wall']:.1f} s** "
                f"({run.get('checks', 0):.1f} s of checks) | ≤ {GOALS['device_run_s']:g} s — "
                f"{_verdict(run['wall'], 'device_run_s')} |"
            )
    if "lab_run_s" in figures:
        rows.append(f"| whole lab run (boot, rxe0, siw0, power off) | {figures['lab_run_s']:.1f} s | |")
    readme = (figures.get("lab") or {}).get("readme_run_s")
    if readme is not None:
        goal = figures["lab"].get("readme_run_goal_s", readme_run.README_RUN_GOAL_S)
        rows.append(
            f"| the README's command (`./pytest-rdma lab`: both devices with their peers, the runs as nobody, the HTML "
            f"report) | **{readme:.1f} s** | ≤ {goal:g} s — {'met' if readme <= goal else 'missed'} |"
        )
    scaling = [row for row in figures.get("scaling", []) if "wall" in row]
    if len(scaling) >= 2 and scaling[0]["tests"] == 0 and scaling[-1]["tests"]:
        slope = (scaling[-1]["wall"] - scaling[0]["wall"]) / scaling[-1]["tests"]
        rows.append(
            "| run time vs checks | "
            + " / ".join(f"{row['tests']} checks {row['wall']:.1f} s" for row in scaling)
            + f": {scaling[0]['wall']:.1f} s fixed + {slope * 1000:.0f} ms per check | |"
        )
    return "\n".join(rows) + f"\n\nMachine: {machine_note(figures)}.\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="pytest-rdma's overhead, xdist speedup, cold start and scaling, measured in one lab VM boot"
    )
    parser.add_argument("--results", type=Path, default=REPO / "results" / "bench", metavar="DIR")
    parser.add_argument("--repeat", type=int, default=2, metavar="N", help="pytest/bare pairs (default 2)")
    parser.add_argument("--no-profile", action="store_true", help="skip the cProfile runs")
    parser.add_argument("--no-wait", action="store_true", help="do not wait for other VMs to finish")
    parser.add_argument("--no-scaling", action="store_true", help="skip the runs limited to 0, 1, 2 QP types")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="only the overhead pair, the profiles and the same checks with -n 2 (no lab runs, no whole suite)",
    )
    parser.add_argument("--report-only", action="store_true", help="print the report of an earlier run")
    parser.add_argument(
        "--no-readme-run", action="store_true", help="do not time the README's command (a second boot, after this one)"
    )
    parser.add_argument("--table", action="store_true", help="print the README's table from DIR/benchmark.json")
    options = parser.parse_args(argv)
    results = options.results.resolve()
    if options.table:
        print(readme_table(json.loads((results / "benchmark.json").read_text())), end="")
        return 0
    os.chdir(REPO)  # the VM runs `python -m benchmarks.lab_guest` from the lab's working directory
    state = results / "bench-machine.json"
    if options.report_only:
        saved = json.loads(state.read_text())
        text, figures = report(results, saved["before"], saved["during"], saved["exit_code"])
        print("\n".join([text, *readme_run.add_to(results, figures)]))
        return 0
    busy = (
        {
            "vms_at_start": 0,
            "waited_s": 0.0,
            "vms_when_starting": len(other_vms()),
            "loadavg_when_starting": os.getloadavg(),
        }
        if options.no_wait
        else wait_for_idle()
    )
    results.mkdir(parents=True, exist_ok=True)
    (results / "bench-steps.jsonl").unlink(missing_ok=True)
    # The VM cannot write bytecode caches (its root is read-only); the lab compiles its own package.
    vm.precompile([REPO / "benchmarks", SUITE])
    watch = BusyWatch(str(results))
    watch.start()
    request = lab.LabRequest(
        devices=["rxe0", "siw0"],
        results=results,
        guest="benchmarks.lab_guest",
        plan_extra={
            "steps": quick_steps(results, not options.no_profile)
            if options.quick
            else plan_steps(results, options.repeat, not options.no_profile, not options.no_scaling)
        },
    )
    code = lab.run(request)
    (results / readme_run.RECORD).unlink(missing_ok=True)
    if not options.no_readme_run:
        readme_run.measure(REPO, results)
    watch.stop.set()
    state.write_text(json.dumps({"before": busy, "during": watch.summary(), "exit_code": code}))
    text, figures = report(results, busy, watch.summary(), code)
    text = "\n".join([text, *readme_run.add_to(results, figures)])
    print("\n" + text)
    (results / "benchmark.txt").write_text(text + "\n")
    (results / "benchmark.json").write_text(json.dumps(figures, indent=1, default=str) + "\n")
    print(f"\nbench: report in {results / 'benchmark.txt'}, figures in {results / 'benchmark.json'}")
    return 0 if code in (0, 1) else code


if __name__ == "__main__":
    sys.exit(main())
