"""The controller's side of an exploration: the explorer in a process of its own, watched.

The explorer (runner.py) runs in a child process, as a check runs in an xdist worker: a provider that kills
the process that called it costs that process, not the run. Its journal says what it was doing: when it dies
in a call, that sequence is a crash finding; when a call has not returned after CALL_LIMIT_S, the child is
ended and the sequence is a hang finding. Either way the explorer starts again, with the next batch, while
time is left. Hypothesis cannot follow a sequence into a process that died, so a crash or a hang is shrunk here: each
step is left out in turn (with the steps that use what it made), the shorter sequence run in a new
process, and kept when it still dies the same way.
"""

from __future__ import annotations

import dataclasses
import json
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pytest_rdma.explore.sequence import CRASH, HANG, Finding, Step

# One verb call: a call of rxe or siw takes well under a second, but the lab's emulated CPU on a loaded
# machine (load 48 on 2 cores) stretched some past 30 s, which a first limit of 30 s called hangs.
CALL_LIMIT_S = 120.0
# Shrinking a finding made near the end of the time given runs past it; past this margin the explorer is ended
# (its unshrunk findings are kept). At most the time given itself: `--rdma-explore 20` ran 140 s under TCG, most of
# it Hypothesis shrinking a finding of the last batch, which a user who gave 20 s did not ask for.
SHRINK_MARGIN_S = 120.0
SHRINK_MARGIN_MIN_S = 10.0  # a few seconds given still leave Hypothesis a few sequences to shrink with


def shrink_margin(seconds: float) -> float:
    """How long past `seconds` an exploration may shrink what it found: the time given, within 10 s to 120 s."""
    return min(SHRINK_MARGIN_S, max(seconds, SHRINK_MARGIN_MIN_S))


OVERTIME = "overtime"
MAX_RESTARTS = 8  # a provider that dies in every sequence is shown by the first few
SHRINK_TRIES = 24  # runs of a shorter sequence, each in a new process, to shrink one crash or hang


@dataclass
class Exploration:
    """One device's exploration, as the checks report it."""

    device: str
    seed: int
    seconds: float
    examples: int = 0
    calls: int = 0
    findings: list[Finding] = field(default_factory=list)
    flaky: int = 0  # findings that did not show again when Hypothesis ran their sequence again
    error: str = ""  # the explorer itself failed (not a finding): the end of what it printed

    def as_dict(self) -> dict[str, object]:
        return {
            "device": self.device,
            "seed": self.seed,
            "seconds": self.seconds,
            "examples": self.examples,
            "calls": self.calls,
            "findings": [finding.as_dict() for finding in self.findings],
            "flaky": self.flaky,
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Exploration:
        found = data.get("findings")
        return cls(
            device=str(data["device"]),
            seed=int(str(data["seed"])),
            seconds=float(str(data["seconds"])),
            examples=int(str(data.get("examples", 0))),
            calls=int(str(data.get("calls", 0))),
            findings=[Finding.from_dict(f) for f in (found if isinstance(found, list) else [])],
            flaky=int(str(data.get("flaky", 0))),
            error=str(data.get("error", "")),
        )

    def summary(self) -> str:
        found = ", ".join(f.case_id for f in self.findings) or "no finding"
        text = f"{self.device}: {self.examples} sequences, {self.calls} calls in {self.seconds:g} s, seed {self.seed}"
        return f"{text}: {self.error}" if self.error else f"{text}: {found}"


@dataclass
class _Read:
    """What the journal said since the child started."""

    batch: int = -1
    current: list[Step] = field(default_factory=list)
    teardown: bool = False  # the current sequence's steps are done: the destroys of what it left run
    failing: list[Finding] = field(default_factory=list)  # failed sequences Hypothesis has not finished shrinking
    done: bool = False


def explore(device: str, seconds: float, seed: int, workdir: Path, *, port: int = 1, gid_index: int = 0) -> Exploration:
    """Explore `device` for `seconds`; the journal and the explorer's output stay in `workdir`."""
    workdir.mkdir(parents=True, exist_ok=True)
    journal = workdir / f"explore-{device}.jsonl"
    output = workdir / f"explore-{device}.log"
    journal.write_text("")
    result = Exploration(device, seed, seconds)
    end = time.monotonic() + seconds
    margin = shrink_margin(seconds)
    first = 0
    base = [sys.executable, "-m", "pytest_rdma.explore.runner", "--dev", device, "--port", str(port)]
    base += ["--gid-index", str(gid_index)]
    for _ in range(MAX_RESTARTS + 1):
        command = [
            *base, "--seconds", f"{max(end - time.monotonic(), 0.0):.1f}",
            "--seed", str(seed), "--first-batch", str(first), "--journal", str(journal),
        ]  # fmt: skip
        offset = journal.stat().st_size
        with output.open("a", encoding="utf-8") as log:
            child = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
            ended = _watch(child, journal, offset, end + margin)
        read = _read(journal, offset, result)
        if ended == OVERTIME:
            break
        hung = ended == HANG
        if hung or child.returncode < 0:
            how = HANG if hung else signal.Signals(-child.returncode).name
            steps = shrink(tuple(read.current), how, base, workdir, time.monotonic() + margin)
            where = steps[-1].verb if steps else "starting"
            where = f"the destroys after {where}" if read.teardown else where
            if hung:
                detail = f"{where} did not return within {CALL_LIMIT_S:g} s"
                keep(result.findings, Finding(HANG, detail, steps, device))
            else:
                keep(result.findings, Finding(CRASH, f"the process died of {how} in {where}", steps, device))
        elif child.returncode != 0:
            tail = output.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-1:]
            result.error = f"the explorer failed (exit {child.returncode}): {' '.join(tail)} (see {output})"
            break
        if read.done or time.monotonic() >= end:
            break
        first = read.batch + 1
    return result


def shrink(steps: tuple[Step, ...], how: str, base: list[str], workdir: Path, deadline: float) -> tuple[Step, ...]:
    """The shortest sequence found, leaving steps out one at a time, that still dies `how` (a signal's name,
    or "hang"), until `deadline` (time.monotonic())."""
    tries = 0
    at = len(steps) - 2  # the last step is the one it died in
    while at >= 0 and tries < SHRINK_TRIES and time.monotonic() < deadline:
        shorter = without(steps, at)
        if shorter is not None:
            tries += 1
            if _dies(shorter, how, base, workdir):
                steps = shorter
        at -= 1
    return steps


def without(steps: tuple[Step, ...], at: int) -> tuple[Step, ...] | None:
    """`steps` less step `at`, later steps' object indexes renumbered; None when a later step uses what it made."""
    out: list[Step] = []
    for index, step in enumerate(steps):
        if index == at:
            continue
        if any(used == at for _, used in step.uses):
            return None
        uses = tuple((path, used - 1 if used > at else used) for path, used in step.uses)
        out.append(dataclasses.replace(step, uses=uses))
    return tuple(out)


def _dies(steps: tuple[Step, ...], how: str, base: list[str], workdir: Path) -> bool:
    sequence = workdir / "shrinking.json"
    sequence.write_text(json.dumps([step.as_dict() for step in steps]))
    journal = workdir / "shrinking.jsonl"
    journal.write_text("")
    with (workdir / "shrinking.log").open("a", encoding="utf-8") as log:
        child = subprocess.Popen(
            [*base, "--replay", str(sequence), "--journal", str(journal)], stdout=log, stderr=subprocess.STDOUT
        )
        ended = _watch(child, journal, 0, time.monotonic() + CALL_LIMIT_S * (len(steps) + 4))
    if how == HANG:
        return ended == HANG
    return not ended and child.returncode < 0 and signal.Signals(-child.returncode).name == how


def keep(findings: list[Finding], found: Finding) -> None:
    """Add `found`, or let it replace a longer sequence that showed the same (class and what was seen):
    batches find one fault again and again, each shrunk on its own; the shortest of them is the finding."""
    for at, known in enumerate(findings):
        if (known.cls, known.detail) == (found.cls, found.detail):
            if len(found.steps) < len(known.steps):
                findings[at] = found
            return
    findings.append(found)


def _watch(child: subprocess.Popen[bytes], journal: Path, offset: int, hard_end: float) -> str:
    """Wait for the child; end it when a call has not returned in CALL_LIMIT_S ("hang") or past `hard_end`
    ("overtime": the time given is over, nothing of the provider's); "" when it ended by itself.

    Only a step the child itself wrote (past `offset`) counts: a child still starting (under a loaded
    emulated CPU, importing and opening the device take a while) is in no call yet."""
    size, since = journal.stat().st_size, time.monotonic()
    while child.poll() is None:
        time.sleep(0.2)
        now = time.monotonic()
        grown = journal.stat().st_size
        if grown != size:
            size, since = grown, now
        hung = now - since > CALL_LIMIT_S and _in_call(journal, offset)
        if hung or now > hard_end:
            child.kill()
            child.wait()
            return HANG if hung else OVERTIME
    return ""


def _in_call(journal: Path, offset: int) -> bool:
    """The last line the child wrote is a step or a teardown: it is inside that step's call, or a destroy."""
    with journal.open("rb") as stream:
        stream.seek(offset)
        lines = stream.read().splitlines()
    return bool(lines) and (b'"event": "step"' in lines[-1] or b'"event": "teardown"' in lines[-1])


def _read(journal: Path, offset: int, result: Exploration) -> _Read:
    read = _Read()
    with journal.open("r", encoding="utf-8") as stream:
        stream.seek(offset)
        for line in stream:
            try:
                event = json.loads(line)
            except ValueError:
                continue  # a line cut short by the child's death
            kind = event.get("event")
            if kind == "batch":
                read.batch = int(event["batch"])
            elif kind == "start":
                result.examples += 1
                read.current, read.teardown = [], False
            elif kind == "teardown":
                read.teardown = True
            elif kind == "step":
                result.calls += 1
                read.current.append(Step.from_dict(event["step"]))
            elif kind == "failing":
                read.failing.append(Finding.from_dict(event))
            elif kind == "finding":
                found = Finding.from_dict(event)
                keep(result.findings, Finding(found.cls, found.detail, found.steps, result.device))
                read.failing = []
            elif kind == "flaky":
                result.flaky += 1
                read.failing = []
            elif kind == "done":
                read.done = True
    # The child ended while Hypothesis was shrinking (cut at the time limit, or dead): as far as it got.
    for found in read.failing:
        keep(result.findings, Finding(found.cls, found.detail, found.steps, result.device))
    return read
