"""The bare loop: the generated checks of some verbs, run without pytest.

The same cases as the suite (each verb's claims expanded by their check kinds, in catalogue
order), run by the same `kind.run(case, dut, res)` against one opened device, each with a fresh
`Resources` freed after it, exactly as the `rdma_resources` fixture does. So the verb calls are
the same (same QP types, attribute sets and count); what is missing is pytest, the plugin, its
guards and its reporters. No pytest module is imported.

    python -m benchmarks.bare_verbs --dev rxe0 --verb ibv_modify_qp --verb ibv_create_qp_ex --out bare.json
"""

from __future__ import annotations

import argparse
import cProfile
import json
import sys
import time
from collections.abc import Iterable

from pytest_rdma.checks.registry import KINDS, Case, known_kinds

from pytest_rdma.catalogue.model import Verb
from pytest_rdma.outcomes import Blocked, Deviation, Unsupported


def cases_of(verbs: Iterable[Verb]) -> list[Case]:
    """What generate.expand yields for ibv verbs (it imports pytest, so it is not called here)."""
    known_kinds()
    cases: list[Case] = []
    for verb in verbs:
        for claim in verb.claims:
            if claim.kind != "untestable":
                cases.extend(KINDS[claim.kind].expand(verb, claim))
    return cases


def run_cases(device: str, cases: list[Case], port: int = 1, gid_index: int = 0) -> dict:
    """Open the device (as the session fixture does), run every case, close it; time all of it."""
    from pytest_rdma.provider.device import DeviceUnderTest

    outcomes: dict[str, str] = {}
    started = time.monotonic()
    dut = DeviceUnderTest(device, port=port, gid_index=gid_index)
    for case in cases:
        res = dut.resources()
        try:
            KINDS[case.kind].run(case, dut, res)
            outcome = "conforms"
        except Deviation:
            outcome = "deviates"
        except (Unsupported, Blocked):
            outcome = "unsupported"
        except Exception as exc:  # noqa: BLE001 - counted, as pytest would report an error
            outcome = f"error: {type(exc).__name__}"
        finally:
            res.close()
        outcomes[f"{case.verb}[{case.id}]"] = outcome
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
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dev", required=True, metavar="NAME")
    parser.add_argument("--verb", action="append", required=True, metavar="NAME", help="repeatable")
    parser.add_argument("--out", required=True, metavar="JSON")
    parser.add_argument("--profile", metavar="PATH", help="also write a cProfile of the loop here")
    options = parser.parse_args(argv)
    from pytest_rdma.verbs import CATALOGUE

    verbs = [verb for name in options.verb for verb in CATALOGUE if verb.name == name]
    if len(verbs) != len(options.verb):
        parser.error(f"unknown verb among {options.verb}")
    cases = cases_of(verbs)
    if options.profile:
        profile = cProfile.Profile()
        result = profile.runcall(run_cases, options.dev, cases)
        profile.dump_stats(options.profile)
    else:
        result = run_cases(options.dev, cases)
    with open(options.out, "w", encoding="utf-8") as handle:
        json.dump(result, handle)
    print(f"bare: {result['cases']} cases on {options.dev} in {result['loop_s']:.2f} s: {result['outcomes']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
