"""Running one case: its kind exercises the device, and its verdict becomes pytest's outcome.

The verdict itself (and the evidence, the check's recorded calls) is kept on the item's stash,
so the reporters read it as data: a skip's message is for people, never parsed back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

import pytest

from pytest_rdma.calls.record import Call
from pytest_rdma.cases import Case
from pytest_rdma.catalogue.model import Cap
from pytest_rdma.kinds.check import Check
from pytest_rdma.kinds.load import KINDS
from pytest_rdma.outcomes import NOT_EXERCISED, UNSUPPORTED, Blocked, NotExercised, Unsupported
from pytest_rdma.provider.device import Device, DeviceUnderTest, end_facts


@dataclass
class Run:
    """What a reporter needs of a case's run besides pytest's outcome."""

    case: Case
    device: str = ""
    peer: str = ""  # the second device, for a check that sent to one (--rdma-peer)
    ends: dict[str, dict[str, str]] = field(default_factory=dict)  # a two-device check's ends: "dut", "peer"
    peer_device: Device | None = None  # the peer itself: its GID for a two-host reproducer, its host to confirm on
    calls: list[Call] = field(default_factory=list)
    steps: dict[str, Call] = field(default_factory=dict)  # the check's named calls (expectations read them)
    skipped_as: str = ""  # UNSUPPORTED or NOT_EXERCISED, when the case did not conform or deviate
    reason: str = ""  # the capability the device lacks, why the precondition was not reached, ...
    lacking: Cap | None = None  # unsupported: the attribute that decided it, as the catalogue names it
    blocked: bool = False
    teardown_failures: list[Call] = field(default_factory=list)


RUN = pytest.StashKey[Run]()


def run_case(request: pytest.FixtureRequest, case: Case, dut: DeviceUnderTest | None) -> None:
    """Run `case` on `dut` (None for a case blocked everywhere); pytest's outcome follows its verdict."""
    run = request.node.stash[RUN] = Run(case, getattr(dut, "name", ""))
    if case.blocked:
        run.skipped_as, run.reason, run.blocked = UNSUPPORTED, case.blocked, True
        pytest.skip(f"blocked: {case.blocked}")
    dut = cast(DeviceUnderTest, dut)  # None only for a blocked case, which skipped above
    # Only a two-device check opens the peer (a session fixture: once, by the first that needs it).
    peer = request.getfixturevalue("rdma_peer") if case.spec.get("params", {}).get("peer") else None
    check = Check(case, dut, dut.catalogue, peer)
    run.peer = peer.name if peer is not None else ""
    run.peer_device = peer
    if peer is not None:
        run.ends = {"dut": end_facts(dut), "peer": end_facts(peer)}
    run.calls = check.calls.log
    run.steps = check.steps
    try:
        check.require_process(case.spec.get("when", ()))
        KINDS[case.kind].run(check)
    except Unsupported as exc:
        run.skipped_as, run.reason, run.lacking = UNSUPPORTED, exc.capability, exc.cap
    except NotExercised as exc:
        run.skipped_as, run.reason = NOT_EXERCISED, exc.reason
    except Blocked as exc:
        run.skipped_as, run.reason, run.blocked = UNSUPPORTED, str(exc), True
    finally:
        run.teardown_failures = check.close()
    # Skipped outside the except blocks, so the skip does not chain the exception it came from:
    # reporters format a chained exception's traceback too, which is most of a skip's cost.
    if run.skipped_as:
        pytest.skip(f"{run.skipped_as}: {run.reason}")
