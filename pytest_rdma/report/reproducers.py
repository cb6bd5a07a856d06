"""A deviation's reproducers, written as files: a C program and a Python replay of its calls.

Both are rendered from the one record of the check's calls (pytest_rdma/calls/render.py) into
`<reproducers dir>/<device>/<stable id>.c` and `.py`; the record names them by paths relative
to that directory, so no machine's absolute path travels in a result. A check whose peer was on
another host (--rdma-peer-host) gets its pair of programs instead (calls/pair.py), `.receiver.c` for
the peer's host and `.sender.c` for this one: only what runs across the two hosts is written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pytest_rdma.calls.pair import c_pair, commands, is_pair
from pytest_rdma.calls.render import c_program, python_script
from pytest_rdma.catalogue.model import Verb
from pytest_rdma.observations import Observation
from pytest_rdma.outcomes import Deviation
from pytest_rdma.report.confirm_pair import address_of
from pytest_rdma.report.record import CheckInfo, PairFiles, Reproducer
from pytest_rdma.report.redact import redact
from pytest_rdma.running import Run
from pytest_rdma.settings import Settings


def file_stem(stable_id: str) -> str:
    """A file name for a stable id: "test_ibv_modify_qp[to-err-RC-INIT>ERR]" -> "ibv_modify_qp.to-err-RC-INIT-ERR".

    Without "test_": a later pytest run in the same directory would collect "test_*.py" reproducers.
    """
    inside = stable_id.removeprefix("test_").replace("[", ".").rstrip("]")
    return re.sub(r"[^A-Za-z0-9._+=-]+", "-", inside).strip("-")[:180]


def header(info: CheckInfo, exc: BaseException | None) -> list[str]:
    lines = [
        f"check:    {info['stable_id']} on {info['device']} (driver {info['driver']})",
        f"claim:    {info['claim_text']}",
        f"source:   {info['ref']}",
    ]
    if isinstance(exc, Deviation):
        lines += [f"expected: {exc.expected}", f"observed: {exc.observed}"]
    return lines


def write(settings: Settings, info: CheckInfo, run: Run, exc: BaseException | None) -> Reproducer:
    """Write the reproducers; their paths (relative to the reproducers directory) and the C text.

    A check between two hosts gets only its pair: the one-host programs open both devices in one process,
    and the peer is not on this host (a device here of the peer's name would make them run, between the
    wrong devices)."""
    from pytest_rdma.generate import active

    deviation = exc if isinstance(exc, Deviation) else None
    decisive = deviation.call if deviation is not None else None
    observation = deviation.observation if deviation is not None else None
    lines = header(info, exc)
    calls = run.calls
    steps = {name: call.index for name, call in run.steps.items() if call.index >= 0}
    folder = settings.reproducers / (run.device or "no-device")
    stem = file_stem(info["stable_id"])
    pair = _pair(active().by_name, settings, run, lines, decisive, observation, steps, stem) if is_pair(calls) else None
    if pair is None:
        c_text = c_program(
            active().by_name,
            run.device,
            calls,
            header=lines,
            decisive=decisive,
            observation=observation,
            steps=steps,
            peer=run.peer,
        )
        py_text = python_script(
            run.device, calls, header=lines, decisive=decisive, observation=observation, steps=steps, peer=run.peer
        )
        files = {folder / f"{stem}.c": c_text, folder / f"{stem}.py": py_text}
    else:
        files = {folder / f"{stem}.{side}.c": text for side, text in pair.items()}
        c_text = "\n".join(files.values())
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for path, text in files.items():
            path.write_text(text, encoding="utf-8")
    except OSError as error:
        for path in files:  # a half-written program would not build, or would run half a replay
            try:
                path.unlink(missing_ok=True)
            except OSError:
                pass
        # Named by the file it was writing: a full disk fails a write(), which names none.
        raise OSError(error.errno, error.strerror, error.filename or str(folder)) from None
    relative = f"{run.device or 'no-device'}/{stem}"
    written: Reproducer = {"dir": redact(str(settings.reproducers)), "decisive_call": decisive, "c_text": c_text}
    if pair is None:
        written.update({"c": f"{relative}.c", "python": f"{relative}.py"})
    else:
        # The sending side connects to the host the gateway reached, which resolves from here; the name the
        # peer host gives itself may not (the lab's VMs have no names for each other).
        host = address_of(settings.peer_host) if settings.peer_host else run.ends.get("peer", {}).get("host", "")
        written["pair"] = PairFiles(
            receiver=f"{relative}.receiver.c", sender=f"{relative}.sender.c", commands=commands(stem, pair, host)
        )
    return written


def _pair(
    verbs: Mapping[str, Verb],
    settings: Settings,
    run: Run,
    header: list[str],
    decisive: int | None,
    observation: Observation | None,
    steps: dict[str, int],
    stem: str,
) -> dict[str, str]:
    """The receiving and the sending side's programs of a check whose peer was on another host."""
    peer = run.peer_device
    gid = peer.fact("gid") if peer is not None else b""
    lid = peer.fact("port.lid") if peer is not None else 0
    return c_pair(
        verbs,
        run.device,
        run.peer,
        run.calls,
        header=[*header, f"files:    {stem}.receiver.c (the peer's host), {stem}.sender.c (this host)"],
        decisive=decisive,
        observation=observation,
        steps=steps,
        peer_gid=gid if isinstance(gid, bytes) else b"",
        peer_lid=int(lid) if isinstance(lid, int) else 0,
        port=settings.port,
        gid_index=settings.gid_index,
    )
