"""The exploring process: the catalogue's machine run on one device, under the guards, batch after batch.

`python -m pytest_rdma.explore.runner --dev rxe0 --seconds 300 --seed 7 --journal FILE` opens the device,
then runs batches of sequences until its time is up. Batch n is seeded with (seed, n), so one seed gives
the same sequences in the same order. Before each call it writes the step to the journal (one JSON object
a line, flushed): when this process dies in a call (a crash) or never returns from one (a hang, which the
controller ends), the journal holds the sequence that did it. A finding Hypothesis shrank is written there
too. Around each sequence the guards look: this process's kernel objects on the device (the leak guard's
count) and the kernel log. Nothing is written to the user's tree: Hypothesis keeps no database.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping
from typing import IO

from hypothesis import HealthCheck, Phase, settings
from hypothesis import seed as seeded
from hypothesis.errors import Flaky
from hypothesis.stateful import run_state_machine_as_test

from pytest_rdma.catalogue.index import Catalogue
from pytest_rdma.explore.execute import Sequence, check_for, explore_case
from pytest_rdma.explore.machine import Done, Explorer, Found, machine
from pytest_rdma.explore.rules import MOVE, Rule, rules
from pytest_rdma.explore.sequence import KERNEL, LEAK, Finding, Step
from pytest_rdma.guard import kmsg
from pytest_rdma.guard.leaks import leaked
from pytest_rdma.kinds.check import Check
from pytest_rdma.provider import netlink
from pytest_rdma.provider.device import DeviceUnderTest

BATCH = 8  # sequences per batch: each batch is one Hypothesis run with its own seed
STEPS = 16  # at most this many steps a sequence


def batch_seed(seed: int, batch: int) -> int:
    return seed * 1_000_003 + batch


def initial_states(catalogue: Catalogue, found: tuple[Rule, ...]) -> dict[str, str]:
    """The first state of each kind a move rule moves (its walk's path starts there)."""
    out: dict[str, str] = {}
    for item in found:
        if item.role == MOVE:
            kind = item.inputs[0][1]
            out[kind] = catalogue[item.verb].tables["walk"]["path"][0]
    return out


def run_batches(
    explorer: type[Explorer], seed: int, first: int, deadline: float, journal: Journal, steps: int = STEPS
) -> None:
    """Batches from `first` until `deadline` (time.monotonic()): each finding written as Hypothesis shrank it."""
    batch = first
    while time.monotonic() < deadline:
        journal.write({"event": "batch", "batch": batch})
        options = settings(
            max_examples=BATCH,
            stateful_step_count=steps,
            deadline=None,
            database=None,
            derandomize=False,
            phases=(Phase.generate, Phase.shrink),
            suppress_health_check=list(HealthCheck),
            report_multiple_bugs=False,
            print_blob=False,
        )
        try:
            run_state_machine_as_test(seeded(batch_seed(seed, batch))(explorer), settings=options)
        except Found as found:
            journal.write({"event": "finding", **Finding(found.cls, found.detail, found.steps).as_dict()})
        except Flaky as flaky:
            journal.write({"event": "flaky", "batch": batch, "detail": str(flaky).splitlines()[0]})
        batch += 1


class Journal:
    """The explorer's journal: one JSON object a line, flushed, so a controller reads it while we run."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream

    def write(self, event: Mapping[str, object]) -> None:
        self.stream.write(json.dumps(event) + "\n")
        self.stream.flush()


class DevicePerformer:
    """Runs each sequence on a fresh Check of the device, and the guards around it."""

    def __init__(self, dut: DeviceUnderTest, catalogue: Catalogue, journal: Journal) -> None:
        self.dut = dut
        self.catalogue = catalogue
        self.journal = journal
        self.counter = netlink.ProcessCounter()
        self.kernel_log = kmsg.KmsgReader() if kmsg.readable() else None
        self.check: Check | None = None
        self.sequence: Sequence | None = None
        self.start_counts: dict[str, dict[str, int]] = {}
        self.examples = 0
        self.calls = 0

    def start(self) -> None:
        self.examples += 1
        self.check = check_for(explore_case(), self.dut, self.catalogue, "ibv_alloc_pd")
        self.sequence = Sequence(self.check)
        self.start_counts = self.counter((self.dut.name,))
        if self.kernel_log is not None:
            self.kernel_log.mark()
        self.journal.write({"event": "start"})

    def perform(self, step: Step, state: str) -> Done:
        assert self.sequence is not None  # start() ran: Explorer.__init__ calls it
        self.journal.write({"event": "step", "step": step.as_dict()})
        self.calls += 1
        call = self.sequence.perform(step)
        if call is None:
            return Done(None)
        return Done(call.ok, call.problem)

    def failing(self, found: Found) -> None:
        self.journal.write({"event": "failing", **Finding(found.cls, found.detail, found.steps).as_dict()})

    def finish(self) -> list[tuple[str, str]]:
        seen: list[tuple[str, str]] = []
        self.journal.write({"event": "teardown"})  # the destroys of what is left are calls too: one may hang
        if self.check is not None:
            self.check.close()
            self.check = None
        left = leaked(self.start_counts, self.counter((self.dut.name,)), {}, self.dut.name)
        if left:
            seen.append((LEAK, ", ".join(f"{n} {kind}" for kind, n in left.items()) + " left after every destroy"))
        if self.kernel_log is not None:
            faults = kmsg.faults(self.kernel_log.scan())
            if faults:
                seen.append((KERNEL, faults[0].summary))
        return seen


def replay(performer: DevicePerformer, path: str) -> None:
    """Run one sequence as it is (the controller shrinking a crash or a hang, which Hypothesis cannot)."""
    with open(path, encoding="utf-8") as stream:
        steps = [Step.from_dict(step) for step in json.load(stream)]
    performer.start()
    for step in steps:
        performer.perform(step, "")
    performer.finish()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_rdma.explore.runner")
    parser.add_argument("--dev", required=True)
    parser.add_argument("--port", type=int, default=1)
    parser.add_argument("--gid-index", type=int, default=0)
    parser.add_argument("--seconds", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--replay", help="a JSON file of one sequence's steps: run it once, no Hypothesis")
    parser.add_argument("--first-batch", type=int, default=0)
    parser.add_argument("--journal", required=True)
    args = parser.parse_args(argv)
    deadline = time.monotonic() + args.seconds
    from pytest_rdma.verbs import CATALOGUE

    catalogue = Catalogue.of(CATALOGUE)
    found = rules(catalogue)
    with open(args.journal, "a", encoding="utf-8") as stream:
        journal = Journal(stream)
        dut = DeviceUnderTest(args.dev, catalogue, args.port, args.gid_index)
        try:
            performer = DevicePerformer(dut, catalogue, journal)
            if args.replay:
                replay(performer, args.replay)
                return 0
            explorer = machine(found, initial_states(catalogue, found))
            explorer.performer = performer
            run_batches(explorer, args.seed, args.first_batch, deadline, journal)
            journal.write({"event": "done", "examples": performer.examples, "calls": performer.calls})
        finally:
            dut.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
