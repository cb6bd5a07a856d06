"""A killed lab VM leaves the results of every finished check on the host.

Runs on the host, and boots the lab VM once (about a minute under TCG): `pytest-rdma selftest`
runs it after the in-VM lab tests. It starts `pytest-rdma lab` on a slice of the suite, kills
the VM's QEMU process once K results have reached the host's results directory, and checks:
- the lines are on the host's disk, whole, as they were while the VM ran: the guest writes
  each line through the 9p share at once (no guest page cache holds them back);
- the lab command exits non-zero and says which results it kept.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_rdma.cli import main as cli_main
from pytest_rdma.lab import EXIT_LAB_FAILED

REPO = Path(__file__).resolve().parents[2]
K = 5
DEVICE = "rxe0"  # rxe needs no siw.ko build: the cheapest lab boot
SLICE = "test_ibv_modify_qp"
WAIT_S = 900.0  # boot plus K checks under TCG, with other VMs on the machine


def result_count(path: Path) -> int:
    """Result lines written so far (a half-written last line is not counted)."""
    if not path.exists():
        return 0
    count = 0
    for line in path.read_text().splitlines():
        try:
            count += json.loads(line).get("type") == "result"
        except json.JSONDecodeError:
            break
    return count


def whole_lines(text: str) -> list[dict[str, object]]:
    """The parsed lines of a results.jsonl; a last line cut short is left out, any other is an error."""
    lines = text.splitlines()
    entries = []
    for number, line in enumerate(lines, start=1):
        try:
            entries.append(json.loads(line))
        except json.JSONDecodeError:
            assert number == len(lines) and not text.endswith("\n"), f"line {number} of {len(lines)} is not whole"
    return entries


def descendants(root: int) -> dict[int, str]:
    """pid -> command name of every process below `root`."""
    parents: dict[int, tuple[int, str]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        name = text[text.index("(") + 1 : text.rindex(")")]
        parents[int(stat.parent.name)] = (int(text[text.rindex(")") + 2 :].split()[1]), name)
    found: dict[int, str] = {}
    frontier = [root]
    while frontier:
        pid = frontier.pop()
        for child, (parent, name) in parents.items():
            if parent == pid and child not in found:
                found[child] = name
                frontier.append(child)
    return found


def test_killed_vm_keeps_the_finished_checks_on_the_host(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "results"
    argv = [
        sys.executable,
        "-m",
        "pytest_rdma.cli",
        "lab",
        "--no-html",
        "--no-install",
        "--results",
        str(results),
        "--dev",
        DEVICE,
        "--timeout",
        str(WAIT_S),
    ]
    if os.environ.get("PYTEST_RDMA_LAB_CACHE"):
        argv += ["--cache", os.environ["PYTEST_RDMA_LAB_CACHE"]]
    argv += ["--", str(REPO / "suites"), "-k", SLICE, "-p", "no:xdist"]
    lines = results / DEVICE / "results.jsonl"
    log = (tmp_path / "lab.txt").open("w")
    lab = subprocess.Popen(argv, cwd=REPO, stdout=log, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + WAIT_S
    try:
        while result_count(lines) < K:
            assert lab.poll() is None, (
                f"the lab ended before {K} results:\n{(tmp_path / 'lab.txt').read_text()[-3000:]}"
            )
            assert time.monotonic() < deadline, f"fewer than {K} results on the host after {WAIT_S:.0f} s"
            time.sleep(0.2)
        seen = result_count(lines)
        qemu = [pid for pid, name in descendants(lab.pid).items() if name.startswith("qemu-system")]
        assert len(qemu) == 1, descendants(lab.pid)
        os.kill(qemu[0], signal.SIGKILL)
        killed = time.monotonic()
        _, stderr = lab.communicate(timeout=120)
        exit_s = time.monotonic() - killed
    finally:
        if lab.poll() is None:
            lab.kill()
            lab.wait()
        log.close()
    # Every line the host saw while the VM ran is still there, whole; none was lost with the guest.
    # Only the last line may be cut short: the kill can land while the guest writes it.
    entries = whole_lines(lines.read_text())
    kept = [entry for entry in entries if entry["type"] == "result"]
    assert entries[0]["type"] == "session" and len(kept) >= seen >= K
    assert len({entry["nodeid"] for entry in kept}) == len(kept)
    assert all(entry["device"] == DEVICE and entry["driver"] == "rxe" for entry in kept)
    # The lab says it failed, and where the finished checks are.
    assert lab.returncode == EXIT_LAB_FAILED
    assert "the lab VM did not finish its run" in stderr
    assert f"results of the finished checks are kept in {lines} ({len(kept)} finished checks)" in stderr
    assert not (results / DEVICE / "results.json").exists()
    assert cli_main(["finish", str(lines)]) == 0
    capsys.readouterr()
    assert len(json.loads((results / DEVICE / "results.json").read_text())["results"]) == len(kept)
    print(
        f"VM killed after {seen} results seen on the host; {len(kept)} kept; lab exited "
        f"{lab.returncode} {exit_s:.1f} s after the kill"
    )
