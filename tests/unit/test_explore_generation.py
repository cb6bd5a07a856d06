"""The explorer's generation on the host: rules from the catalogue's contracts, sequences from a seed.

No device: a recording performer stands where the device would run each step (the generation is pure; what
a step does on a provider is judged in the lab, tests/lab/test_explore.py).
"""

from __future__ import annotations

import io
import json
import time

from pytest_rdma.catalogue.index import Catalogue
from pytest_rdma.explore.machine import Done, Found, machine
from pytest_rdma.explore.rules import DESTROY, MAKE, MOVE, rules
from pytest_rdma.explore.runner import Journal, initial_states, run_batches
from pytest_rdma.explore.sequence import LEAK, Finding, Step
from pytest_rdma.explore.session import keep, without
from pytest_rdma.verbs import CATALOGUE

CAT = Catalogue.of(CATALOGUE)


class Recorder:
    """Every step succeeds; what was asked is kept. `leak_after` makes finish() report a leak whenever a
    sequence called that verb (a finding Hypothesis must shrink to the one step)."""

    def __init__(self, leak_after: str = "") -> None:
        self.sequences: list[list[Step]] = []
        self.leak_after = leak_after

    def start(self) -> None:
        self.sequences.append([])

    def perform(self, step: Step, state: str) -> Done:
        self.sequences[-1].append(step)
        return Done(True)

    def failing(self, found: Found) -> None:
        pass

    def finish(self) -> list[tuple[str, str]]:
        if self.leak_after and any(step.verb == self.leak_after for step in self.sequences[-1]):
            return [(LEAK, f"1 {self.leak_after} left")]
        return []


def explore(performer: Recorder, seed: int, batches: int = 3) -> list[dict[str, object]]:
    found = rules(CAT)
    explorer = machine(found, initial_states(CAT, found))
    explorer.performer = performer
    stream = io.StringIO()

    class Counted(Journal):
        def write(self, event: dict[str, object]) -> None:  # type: ignore[override]
            super().write(event)
            if event.get("event") == "batch" and int(str(event["batch"])) >= batches:
                raise StopIteration  # the test's own budget: a number of batches, not seconds

    try:
        run_batches(explorer, seed, 0, time.monotonic() + 3600, Counted(stream))
    except StopIteration:
        pass
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_rules_come_from_the_contracts() -> None:
    found = {rule.name: rule for rule in rules(CAT)}
    assert found["make_ibv_alloc_pd"].makes == "pd"
    assert found["make_ibv_create_qp"].inputs == (("pd", "pd"), ("qp_init_attr.send_cq", "cq"))
    assert found["destroy_ibv_destroy_qp"].role == DESTROY and found["destroy_ibv_destroy_qp"].destroys == "qp"
    assert found["move_ibv_modify_qp_RESET_INIT"].role == MOVE
    # The blocking event readers are never called; an unimport frees nothing a sequence made.
    assert not [name for name in found if "get_cq_event" in name or "unimport" in name]
    # Domains: the claims' own values, the enum's members and one value beyond them.
    access = dict(found["make_ibv_reg_mr"].domains)["access"]
    assert "IBV_ACCESS_REMOTE_WRITE" in access and max(v for v in access if isinstance(v, int)) > 1 << 20
    assert dict(found["make_ibv_create_qp"].variables)["qp_type"][0] == "IBV_QPT_RC"
    assert all(rule.role == MAKE for rule in found.values() if rule.makes)


def test_one_seed_gives_the_same_sequences() -> None:
    first, second, other = Recorder(), Recorder(), Recorder()
    explore(first, seed=7)
    explore(second, seed=7)
    explore(other, seed=8)
    assert first.sequences == second.sequences
    assert sum(len(s) for s in first.sequences) > 20  # sequences with steps, not empty runs
    assert first.sequences != other.sequences


def test_objects_are_used_only_while_alive() -> None:
    """A destroyed object is never passed again: the bundles give only what was made and not freed."""
    recorder = Recorder()
    explore(recorder, seed=3)
    for sequence in recorder.sequences:
        freed: set[int] = set()
        for index, step in enumerate(sequence):
            used = {at for _, at in step.uses}
            assert not used & freed, f"step {index} {step.text()} uses a freed object"
            assert all(at < index for at in used)
            if step.verb in {"ibv_dealloc_pd", "ibv_destroy_qp", "ibv_destroy_cq", "ibv_dereg_mr"}:
                freed |= {at for path, at in step.uses if path == step.uses[-1][0]}


def test_a_finding_is_shrunk_to_its_shortest_sequence() -> None:
    """Hypothesis shrinks each batch's finding; the explorer keeps the shortest of those that showed the same."""
    events = explore(Recorder(leak_after="ibv_alloc_mw"), seed=11, batches=5)
    findings: list[Finding] = []
    for event in events:
        if event["event"] == "finding":
            keep(findings, Finding.from_dict(event))
    assert len(findings) == 1, "one planted leak, one finding"
    shortest = findings[0]
    # alloc_mw needs a PD: the shortest sequence that calls it is those two steps.
    assert [step.verb for step in shortest.steps] == ["ibv_alloc_pd", "ibv_alloc_mw"]
    assert shortest.case_id == "leak-ibv_alloc_pd-ibv_alloc_mw"
    assert Finding.from_dict(json.loads(json.dumps(shortest.as_dict()))) == shortest


def test_step_text() -> None:
    step = Step("ibv_alloc_mw", (("pd", 0),), (("type", "IBV_MW_TYPE_2"),))
    assert step.text() == "ibv_alloc_mw(pd=s0, type=IBV_MW_TYPE_2)"


def test_a_crash_is_shrunk_by_leaving_out_steps_whose_objects_nothing_later_uses() -> None:
    steps = (
        Step("ibv_alloc_pd"),
        Step("ibv_create_cq"),
        Step("ibv_alloc_mw", (("pd", 0),)),
        Step("ibv_dealloc_mw", (("mw", 2),)),
    )
    assert without(steps, 1) == (steps[0], steps[2], Step("ibv_dealloc_mw", (("mw", 1),)))
    assert without(steps, 0) is None  # the MW is allocated on step 0's PD
    assert without(steps, 2) is None


def test_a_step_taking_a_checks_arguments_names_it() -> None:
    step = Step("ibv_create_srq_ex", (("srq_init_attr_ex.pd", 0),), case="xrc-srq-XRC-in-private-xrcd")
    assert step.text() == "ibv_create_srq_ex[xrc-srq-XRC-in-private-xrcd](srq_init_attr_ex.pd=s0)"
    assert Step.from_dict(json.loads(json.dumps(step.as_dict()))) == step


def test_shrinking_past_the_time_given_takes_at_most_that_time_again(tmp_path, monkeypatch) -> None:
    """`--rdma-explore 20` ran 140 s under TCG, Hypothesis shrinking its last batch's finding: now at most 40 s."""
    from pytest_rdma.explore import session

    assert [session.shrink_margin(s) for s in (1, 20, 300)] == [10.0, 20.0, 120.0]
    ends: list[float] = []

    class Child:
        returncode = 0

    def watch(child: object, journal: object, offset: int, hard_end: float) -> str:
        ends.append(hard_end - time.monotonic())
        return session.OVERTIME  # still shrinking at the margin's end: ended

    monkeypatch.setattr(session.subprocess, "Popen", lambda *args, **kwargs: Child())
    monkeypatch.setattr(session, "_watch", watch)
    found = session.explore("rxe0", 20.0, 7, tmp_path)
    assert len(ends) == 1 and 39.0 < ends[0] <= 40.0, ends
    assert found.error == "" and found.findings == []
