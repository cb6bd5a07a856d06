"""The benchmark scripts (benchmarks/) still fit the tree: their imports, the bare loop's cases,
the plan's options, the call comparison and the README's table. No timing here: the scripts
measure, these tests only keep them from rotting."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

# benchmarks/ is scripts beside the package, not part of it: importable from the checkout only.
REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks import bare_verbs, lab_guest, lab_overhead, timing_plugin  # noqa: E402
from pytest_rdma import generate  # noqa: E402
from pytest_rdma.catalogue.index import Catalogue  # noqa: E402
from pytest_rdma.cli import LAB_REPORTS  # noqa: E402
from pytest_rdma.lab.guest import LAB_SETTINGS  # noqa: E402
from pytest_rdma.settings import OPTIONS  # noqa: E402
from pytest_rdma.verbs import CATALOGUE  # noqa: E402

CATALOG = Catalogue.of(CATALOGUE)


def test_every_benchmark_module_imports() -> None:
    assert timing_plugin.ENV == lab_guest.TIMING_ENV
    assert callable(bare_verbs.main) and callable(lab_overhead.main) and callable(lab_guest.main)


@pytest.mark.parametrize("verb", lab_overhead.VERBS)
def test_bare_loop_cases_are_the_generated_ones(verb: str) -> None:
    assert bare_verbs.cases_of([CATALOG[verb]]) == generate.expand(CATALOG[verb])


def test_bare_loop_cases_for_every_runnable_verb() -> None:
    runnable = [verb for verb in CATALOG.verbs if verb.family in bare_verbs.RUNNABLE_FAMILIES]
    assert bare_verbs.cases_of(runnable) == [case for verb in runnable for case in generate.expand(verb)]


def test_bare_loop_refuses_a_family_it_cannot_run() -> None:
    blocked = [verb for verb in CATALOG.verbs if verb.family not in bare_verbs.RUNNABLE_FAMILIES and verb.claims]
    if not blocked:
        pytest.skip("every verb of the catalogue is of a runnable family")
    with pytest.raises(ValueError, match="no runner"):
        bare_verbs.cases_of(blocked[:1])


def test_bare_loop_imports_no_pytest() -> None:
    import subprocess

    code = "import sys, benchmarks.bare_verbs; print('pytest' in sys.modules or '_pytest' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_plan_uses_the_lab_reporters_and_existing_options(tmp_path: Path) -> None:
    steps = lab_overhead.plan_steps(tmp_path, repeat=1, profile=True, scaling=True)
    names = [step["name"] for step in steps]
    assert names[:4] == ["lab-rxe0", "lab-siw0", "suite-n0", "suite-n2"]
    assert {"checks-1", "bare-1", "profile-bare", "profile-checks", "scale-0"} <= set(names)
    known = {option.flag for option in OPTIONS}
    for step in steps:
        for arg in [arg for argv in step.get("parallel", [step.get("argv", [])]) for arg in argv]:
            if arg.startswith("--rdma-"):
                assert arg.split("=", 1)[0] in known, arg
        assert "--junitxml" not in " ".join(step.get("argv", [])) and "--alluredir" not in " ".join(
            step.get("argv", [])
        )
    checks = next(step for step in steps if step["name"] == "checks-1")
    assert sum(arg.startswith(option.split("=")[0]) for arg in checks["argv"] for option in LAB_REPORTS) == len(
        LAB_REPORTS
    )
    for selection in lab_overhead.CHECKS:
        assert (REPO / selection.split("::")[0]).is_file()
    # The lab's own runs keep the lab's settings; the others do not build C reproducers.
    assert steps[0]["env"] == {"PYTEST_RDMA_LAB_MARKS": str(tmp_path)}
    assert checks["env"] == lab_overhead.NO_CONFIRM
    assert set(lab_overhead.NO_CONFIRM) <= {option.env for option in OPTIONS}
    # A run without reporters still names a writable place for reproducers: the default, the working
    # directory, is the read-only checkout in the VM (both such runs ended in a usage error once).
    for step in steps:
        if step["name"].startswith("checks-noreports"):
            assert any(arg.startswith("--rdma-reproducers=/tmp/") for arg in step["argv"]), step["name"]
    # The whole-suite runs give each device its peer, as the lab does: the two-device checks run too.
    for step in steps[:4]:
        device = next(arg.split("=", 1)[1] for arg in step["argv"] if arg.startswith("--rdma-dev="))
        assert f"--rdma-peer={device}p" in step["argv"], step["name"]


def test_quick_plan_marks_its_first_run_for_the_cold_start(tmp_path: Path) -> None:
    steps = lab_overhead.quick_steps(tmp_path, profile=True)
    assert [step["name"] for step in steps] == [
        "checks-1",
        "bare-1",
        "floor",
        "checks-parts",
        "bare-x2",
        "bare-x2-2",
        "bare-x2-3",
        "profile-bare",
        "profile-checks",
        "checks-n2",
    ]
    assert steps[0]["env"]["PYTEST_RDMA_LAB_MARKS"] == str(tmp_path)
    recorded = {"boot": {}, "checks-1": {"name": "checks-1", "pytest": {}}, "bare-1": {"name": "bare-1"}}
    assert lab_overhead.first_run(recorded) == recorded["checks-1"]


def test_guest_steps_get_the_lab_settings() -> None:
    env = lab_guest.lab_env({"env": {"EXTRA": "1"}}, {"RDMA_CONFIRM": "false", "PATH": "/bin"})
    assert env["RDMA_KERNEL_LOG"] == LAB_SETTINGS["RDMA_KERNEL_LOG"]
    assert env["RDMA_CONFIRM"] == "false"  # already set: kept, as the lab does
    assert env["EXTRA"] == "1" and env["PATH"] == "/bin"
    assert set(LAB_SETTINGS) <= {option.env for option in OPTIONS}


def test_same_calls_compares_verbs_not_values() -> None:
    bare = {"test_v[a]": ["[0] setup: ibv_alloc_pd(ctx) -> pd0", "[1] call: ibv_dealloc_pd(pd0) -> 0"]}
    same = {"test_v[a]": ["[0] setup: ibv_alloc_pd(ctx) -> pd7", "[1] call: ibv_dealloc_pd(pd7) -> 22"]}
    other = {"test_v[a]": ["[0] setup: ibv_alloc_pd(ctx) -> pd0", "[1] teardown: ibv_dealloc_pd(pd0) -> 0"]}
    result = lab_overhead.same_calls(same, bare)
    assert result["identical"] and result["calls"] == [2, 2]
    assert result["per_verb"] == {"ibv_alloc_pd": [1, 1], "ibv_dealloc_pd": [1, 1]}
    assert lab_overhead.same_calls(other, bare)["differ"] == ["test_v[a]"]
    assert not lab_overhead.same_calls({}, {})["identical"]


def test_recorded_steps_read_a_results_file(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"results": [{"stable_id": "test_v[a]", "steps": ["[0] call: f() -> 0"]}]}))
    assert lab_overhead.recorded_steps(path) == {"test_v[a]": ["[0] call: f() -> 0"]}
    assert lab_overhead.recorded_steps(tmp_path / "missing.json") == {}


def _phases(wall: float, checks: float) -> dict[str, float]:
    return {"wall": wall, "checks": checks, "to_first_test": 1.0}


SAMPLE = {
    "machine": {
        "before": {"vms_at_start": 3, "waited_s": 120.0, "vms_when_starting": 0, "loadavg_when_starting": [4.5, 3, 2]},
        "during": {"samples": 10, "max_other_vms": 1, "share_busy": 0.3, "busy_at": [5.0]},
        "cpus": 2,
        "busy_steps": ["suite-n2"],
    },
    "goals": lab_overhead.GOALS,
    "checks": {"overhead_run": 484, "rxe0": 1242, "siw0": 1242},
    "overhead": {
        "end_to_end": 3.0,
        "checks_vs_loop": 2.5,
        "runs": [[_phases(30.0, 25.0), 10.0, 10.0]],
        "tests": 484,
        "same_calls": {"identical": True, "calls": [9000, 9000]},
        "checks-noreports": _phases(24.0, 20.0),
        "checks-noreports-noguards": _phases(15.0, 12.0),
    },
    "xdist": {"n0": _phases(100.0, 90.0), "n2": _phases(50.0, 45.0), "speedup": 2.0, "tests": [1242, 1242]},
    "cold_start": {
        "first_test_s": 14.0,  # under issue 29's 15 s
        "host_until_kernel_s": 3.0,
        "kernel_boot_to_runner_s": 8.0,
        "device_setup_s": 1.0,
        "pytest_start_to_first_test_s": 2.0,
    },
    "lab_rxe0": {**_phases(130.0, 120.0), "tests": 1242},
    "lab_siw0": {**_phases(110.0, 100.0), "tests": 1242},
    "lab_run_s": 260.0,
}


def test_readme_table_from_a_benchmark_json_sample() -> None:
    table = lab_overhead.readme_table(json.loads(json.dumps(SAMPLE)))  # as read back from the file
    lines = table.splitlines()
    assert lines[0] == "| what | measured | goal |"
    row = {line.split("|")[1].strip(): line for line in lines if line.startswith("| ")}
    assert "30.00 s / 10.00 s = **3.00×**" in row["overhead, end to end (484 checks)"]
    assert row["overhead, end to end (484 checks)"].endswith("missed |")
    assert "(bare 20.7 ms per check; under pytest 51.7 ms)" in row["overhead, checks only"]
    assert "2.40× / 1.50× end to end (2.00× / 1.20× checks only)" in table
    xdist = row["xdist, whole suite on rxe0 (1242 checks)"]
    assert "**2.00×**" in xdist and xdist.endswith("met |")
    assert row["cold start to first test (lab-rxe0)"].endswith("met |")
    assert row["lab run, whole catalogue on rxe0 (1242 checks)"].endswith("missed |")
    assert row["lab run, whole catalogue on siw0 (1242 checks)"].endswith("met |")
    assert "yes: 9000 calls bare" in row["same verb calls on both sides (call records)"]
    assert "load 4.50 at the start after waiting 120 s" in table
    assert "other VMs ran in 30% of the samples" in table and "suite-n2" in table


def test_readme_table_leaves_out_what_was_not_measured() -> None:
    table = lab_overhead.readme_table({"machine": {"cpus": 2}, "goals": lab_overhead.GOALS})
    assert table.splitlines()[2:] == ["", "Machine: 2 host cores; load nan at the start; no other VM during the run."]


def test_table_mode_prints_the_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "benchmark.json").write_text(json.dumps(SAMPLE))
    assert lab_overhead.main(["--table", "--results", str(tmp_path)]) == 0
    assert capsys.readouterr().out == lab_overhead.readme_table(SAMPLE)


def test_the_bare_loop_shards_split_the_cases_between_processes(tmp_path: Path) -> None:
    step = lab_overhead.bare_shards_step("bare-x2", "rxe0", tmp_path / "bare-x2.json")
    assert [argv[-2:] for argv in step["parallel"]] == [["--shard", "0/2"], ["--shard", "1/2"]]
    assert step["json_outs"] == [str(tmp_path / "bare-x2-0.json"), str(tmp_path / "bare-x2-1.json")]
    assert step["mkdirs"] == [str(tmp_path)], "the shards' directory may not exist yet"
    # Each shard runs every other case; together, every case once.
    cases = bare_verbs.cases_of(Catalogue.of(CATALOGUE)[v] for v in lab_overhead.VERBS)
    halves = [cases[0::2], cases[1::2]]
    assert sorted(c.stable_id for half in halves for c in half) == sorted(c.stable_id for c in cases)


def test_the_ceiling_is_one_process_over_the_slower_half() -> None:
    steps = {
        "bare-1": {"bare": {"loop_s": 10.0}},
        "bare-2": {"bare": {"loop_s": 9.0}},
        "bare-x2": {"shards": [{"loop_s": 6.0, "cases": 50}, {"loop_s": 7.5, "cases": 49}]},
    }
    ceiling = lab_overhead.bare_ceiling(steps)
    assert ceiling is not None
    assert {key: ceiling[key] for key in ("one_s", "slowest_half_s", "speedup", "cases", "runs")} == {
        "one_s": 9.0,
        "slowest_half_s": 7.5,
        "speedup": 1.2,
        "cases": 99,
        "runs": 1,
    }
    assert lab_overhead.bare_ceiling({"bare-1": {"bare": {"loop_s": 1.0}}}) is None
    table = lab_overhead.readme_table({"xdist": {"ceiling": ceiling}})
    assert "the bare verbs in 2 processes at once" in table and "**1.20×**" in table


def test_a_parallel_step_starts_its_commands_together_and_reads_each_out(tmp_path: Path) -> None:
    outs = [tmp_path / "new" / "a.json", tmp_path / "new" / "b.json"]
    # Each waits for the other's file: they finish only if both run at once.
    script = (
        "import json, pathlib, sys, time\n"
        "mine, other = map(pathlib.Path, sys.argv[1:3])\n"
        "mine.with_suffix('.started').touch()\n"
        "deadline = time.time() + 20\n"
        "while not other.with_suffix('.started').exists() and time.time() < deadline: time.sleep(0.01)\n"
        "mine.write_text(json.dumps({'loop_s': 1.0, 'both': other.with_suffix('.started').exists()}))\n"
    )
    step = {
        "name": "x2",
        "parallel": [[sys.executable, "-c", script, str(a), str(b)] for a, b in (outs, outs[::-1])],
        "json_outs": [str(path) for path in outs],
        "mkdirs": [str(tmp_path / "new")],
    }
    record = lab_guest.run_step(step, tmp_path, {})
    assert record["exit_code"] == 0
    assert [shard["both"] for shard in record["shards"]] == [True, True]


def test_readme_table_shows_issue_29s_figures_with_their_goals() -> None:
    figures = json.loads(json.dumps(SAMPLE))
    figures["overhead"].update(
        plugin_ms_per_check=20.0,
        beyond_bare_loop_ms_per_check=30.0,
        pytest_floor_ms_per_test=10.0,
        parts_ms_per_check={"allure": 5.75, "recorder": 5.18},
    )
    figures["xdist"]["share_of_ceiling"] = 0.74
    figures["xdist"]["ceiling"] = {"one_s": 10.0, "slowest_half_s": 6.0, "speedup": 1.68}
    figures["lab"] = {"readme_run_s": 170.0, "readme_run_goal_s": 180.0}
    row = {line.split("|")[1].strip(): line for line in lab_overhead.readme_table(figures).splitlines() if "|" in line}
    own = row["the plugin's own cost per check"]
    assert "**20.0 ms** (30.0 ms beyond the verbs, less pytest's floor of 10.0 ms" in own and own.endswith("missed |")
    assert "its parts: allure 5.75, recorder 5.18" in own
    assert "**0.74** | ≥ 0.9 — missed |" in row["xdist's share of that ceiling (`-n 2` end to end)"]
    readme = next(line for name, line in row.items() if name.startswith("the README's command"))
    assert "**170.0 s** | ≤ 180 s — met |" in readme
    figures["lab"]["readme_run_s"] = 431.7
    slow = lab_overhead.readme_table(figures)
    assert "**431.7 s** | ≤ 180 s — missed |" in slow


def test_the_lab_s_allure_on_the_host_is_timed_per_check(tmp_path: Path) -> None:
    """The benchmark says what the Allure results cost where the lab writes them now: on the host, after the run."""
    from allure_records import cases, record

    from pytest_rdma.report import jsonfile
    from pytest_rdma.report.record import SCHEMA_VERSION

    assert lab_overhead.allure_on_host_ms(tmp_path / "results.json") is None  # no run, no figure
    checks = [record(case, "rxe0") for case in cases() if case.verb == "ibv_modify_qp"][:5]
    jsonfile.write(tmp_path / "results.json", {"schema_version": SCHEMA_VERSION, "devices": {}, "results": checks})
    ms = lab_overhead.allure_on_host_ms(tmp_path / "results.json")
    assert ms is not None and 0 < ms < 1000
