"""--rdma-explore on a real provider: the exploration ends, is recorded per driver, and its seed repeats it.

Two inner runs of 20 s with one seed: both end with a record of test_explore[explored] for the device (its
seed in the record), and their journals hold the same sequences, call for call, as far as the shorter one
goes (a run's time decides how many sequences it makes, not which).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SEED = "5"


def _steps(journal: Path) -> list[dict[str, object]]:
    events = [json.loads(line) for line in journal.read_text().splitlines() if line.strip()]
    return [event["step"] for event in events if event.get("event") == "step"]


def test_an_exploration_ends_is_recorded_per_driver_and_repeats_with_its_seed(
    pytester: pytest.Pytester, device: str
) -> None:
    # Only the exploration's checks: the suite's other 1318 would be collected to be deselected (minutes in TCG).
    pytester.makepyfile(
        test_explore="from pytest_rdma.explore.items import explore_tests\n\nglobals().update(explore_tests())\n"
    )
    journals = []
    for run in ("first", "second"):
        result = pytester.runpytest_subprocess(
            "--rdma-dev", device, "--rdma-explore", "20", "--rdma-explore-seed", SEED,
            "--rdma-json", f"{run}/results.json", "-p", "no:xdist",
        )  # fmt: skip
        assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), result.stdout.str()[-3000:]
        result.stdout.fnmatch_lines([f"rdma: explored {device}: * seed {SEED}: *"])  # before the header
        result.stdout.fnmatch_lines([f"rdma: explore 20 s per device, seed {SEED}"])
        document = json.loads((pytester.path / run / "results.json").read_text())
        explored = [r for r in document["results"] if r["stable_id"] == "test_explore[explored]"]
        assert len(explored) == 1 and explored[0]["device"] == device and explored[0]["driver"], explored
        assert explored[0]["outcome"] == "conforms" and explored[0]["params"]["seed"] == SEED, explored[0]
        journals.append(_steps(pytester.path / run / "explore" / f"explore-{device}.jsonl"))
    first, second = journals
    common = min(len(first), len(second))
    assert common >= 3, f"only {common} calls in 20 s"
    assert first[:common] == second[:common]
