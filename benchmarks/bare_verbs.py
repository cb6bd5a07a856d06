"""The bare loop: the generated checks of some verbs, run without pytest.

The same cases as the suite (each verb's claims expanded by their kinds, in catalogue order),
each run as `running.run_case` runs it: a `Check` (kinds/check.py) on one opened
`DeviceUnderTest`, the kind's `run(check)`, then `check.close()`. What is missing is pytest,
the plugin, its guards and its reporters; no pytest module is imported (generate.py and
running.py import pytest, so their few lines are mirrored here and a unit test holds them equal).

Each case's calls are kept as the call layer recorded them (calls/record.py), rendered as the
results file renders them (`[index] phase: call -> result`), so the benchmark can show that
both sides made the same verb calls.

    python -m benchmarks.bare_verbs --dev rxe0 --verb ibv_modify_qp --verb ibv_create_qp_ex --out bare.json

With `--shard K/N` it runs every Nth case from the Kth (0-based): N such processes at once do
the work of one, which measures how far the bare verbs themselves scale over N processes.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import sys
import time
from collections.abc import Iterable
from typing import Any

from pytest_rdma.calls.render import step_line
from pytest_rdma.cases import Case
from pytest_rdma.catalogue.derived import derived_claims
from pytest_rdma.catalogue.index import Catalogue
from pytest_rdma.catalogue.model import Verb
from pytest_rdma.kinds.check import Check
from pytest_rdma.kinds.load import KINDS
from pytest_rdma.kinds.registry import UNTESTABLE
from pytest_rdma.outcomes import Blocked, Deviation, NotExercised, Unsupported

# The families whose checks run here (generate.family_blocker blocks every other one).
RUNNABLE_FAMILIES = ("ibv", "rdmacm")


def cases_of(verbs: Iterable[Verb]) -> list[Case]:
    """What generate.expand yields for these verbs, in the same order (verbs of a runnable family only)."""
    cases: list[Case] = []
    for verb in verbs:
        if verb.family not in RUNNABLE_FAMILIES:
            raise ValueError(f"{verb.name}: the {verb.family!r} family has no runner; its checks are all blocked")
        for claim in (*verb.claims, *derived_claims(verb)):
            if claim.kind != UNTESTABLE:
                cases.extend(KINDS[claim.kind].expand(verb, claim))
    return cases


def run_one(case: Case, dut: Any) -> tuple[str, list[str]]:
    """The case's outcome and its calls as step lines, as running.run_case gets them (without pytest)."""
    if case.blocked:
        return "blocked", []
    check = Check(case, dut, dut.catalogue)
    try:
        KINDS[case.kind].run(check)
        outcome = "conforms"
    except Deviation:
        outcome = "deviates"
    except Unsupported:
        outcome = "unsupported"
    except NotExercised:
        outcome = "not_exercised"
    except Blocked:
        outcome = "blocked"
    except Exception as exc:  # noqa: BLE001 - counted, as pytest would report an error
        outcome = f"error: {type(exc).__name__}"
    finally:
        check.close()
    return outcome, [f"[{call.index}] {call.phase}: {step_line(call)}" for call in check.calls.log]


def run_cases(device: str, cases: list[Case], catalogue: Catalogue, port: int = 1, gid_index: int = 0) -> dict:
    """Open the device (as the session fixture does), run every case, close it; time all of it."""
    from pytest_rdma.provider.device import DeviceUnderTest

    outcomes: dict[str, str] = {}
    steps: dict[str, list[str]] = {}
    started = time.monotonic()
    dut = DeviceUnderTest(device, catalogue, port=port, gid_index=gid_index)
    for case in cases:
        outcomes[case.stable_id], steps[case.stable_id] = run_one(case, dut)
    dut.close()
    loop_s = time.monotonic() - started
    tally: dict[str, int] = {}
    for outcome in outcomes.values():
        key = "error" if outcome.startswith("error") else outcome
        tally[key] = tally.get(key, 0) + 1
    return {
        "device": device,
        "cases": len(cases),
        "loop_s": loop_s,
        "loop_start": started,
        "outcomes": tally,
        "ids": list(outcomes),
        "steps": steps,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dev", required=True, metavar="NAME")
    parser.add_argument("--verb", action="append", required=True, metavar="NAME", help="repeatable")
    parser.add_argument("--out", required=True, metavar="JSON")
    parser.add_argument("--profile", metavar="PATH", help="also write a cProfile of the loop here")
    parser.add_argument("--shard", metavar="K/N", help="run only every Nth case from the Kth (0-based)")
    options = parser.parse_args(argv)
    from pytest_rdma.verbs import CATALOGUE

    catalogue = Catalogue.of(CATALOGUE)  # what generate.active() gives with no extra descriptions
    unknown = [name for name in options.verb if name not in catalogue.by_name]
    if unknown:
        parser.error(f"unknown verb(s): {', '.join(unknown)}")
    cases = cases_of(catalogue[name] for name in options.verb)
    if options.shard:
        index, _, count = options.shard.partition("/")
        if not (index.isdigit() and count.isdigit() and int(index) < int(count)):
            parser.error(f"--shard {options.shard}: give K/N with 0 <= K < N, e.g. 0/2")
        cases = cases[int(index) :: int(count)]
    if options.profile:
        profile = cProfile.Profile()
        result = profile.runcall(run_cases, options.dev, cases, catalogue)
        profile.dump_stats(options.profile)
    else:
        result = run_cases(options.dev, cases, catalogue)
    with open(options.out, "w", encoding="utf-8") as handle:
        json.dump(result, handle)
    print(f"bare: {result['cases']} cases on {options.dev} in {result['loop_s']:.2f} s: {result['outcomes']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
