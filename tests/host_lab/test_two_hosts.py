"""The two-host lab with its second host killed mid-check: the run on host 1 goes on and keeps every result.

Runs on the host and boots two VMs joined by a wire (`pytest-rdma lab --hosts 2`), rxe0 only (no siw.ko
to build) and one verb's two-device checks. Once host 1 has a check's record, host 2's QEMU is killed: the
machine the peer ends live on is gone, mid-way through the next check. That check must end naming the
peer's end (host 2's gateway spec), every later check must say at once that the peer host is gone, every
selected check must have its record in results.json, and the lab must exit 1 (checks failed), not 3.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from pytest_rdma.lab import hosts, wire

REPO = Path(__file__).resolve().parents[2]
DEVICE = "rxe0"
SLICE = "ibv_post_send and between"
WAIT_S = 1200.0  # two boots under TCG, with other VMs on the machine
PEER_END = f"peer host ({wire.peer_host_spec(wire.wire_address(2))})"


def results_so_far(path: Path) -> int:
    if not path.exists():
        return 0
    return sum('"type": "result"' in line for line in path.read_text().splitlines())


def selected() -> list[str]:
    """The slice's checks, as pytest collects them on this host (collecting needs no device)."""
    listed = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q", f"--rdma-dev={DEVICE}",
         f"--rdma-peer={DEVICE}", "-k", SLICE],
        cwd=REPO, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return [line for line in listed.stdout.splitlines() if "::" in line]


def test_a_peer_host_killed_mid_check_costs_its_checks_not_the_run(tmp_path: Path) -> None:
    results = tmp_path / "results"
    port = hosts.free_port(None)
    argv = [sys.executable, "-m", "pytest_rdma.cli", "lab", "--hosts", "2", "--wire-port", str(port), "--no-html",
            "--no-install", "--results", str(results), "--dev", DEVICE, "--timeout", str(WAIT_S)]  # fmt: skip
    if os.environ.get("PYTEST_RDMA_LAB_CACHE"):
        argv += ["--cache", os.environ["PYTEST_RDMA_LAB_CACHE"]]
    argv += ["--", "-k", SLICE]
    lines = results / DEVICE / "results.jsonl"
    log = tmp_path / "lab.txt"
    with log.open("w") as out:
        lab = subprocess.Popen(argv, cwd=REPO, stdout=out, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + WAIT_S
        try:
            while results_so_far(lines) < 1:
                assert lab.poll() is None, f"the lab ended before a result:\n{log.read_text()[-3000:]}"
                assert time.monotonic() < deadline, f"no result after {WAIT_S:.0f} s:\n{log.read_text()[-3000:]}"
                time.sleep(0.2)
            qemu = hosts.qemu_of(port)
            assert qemu is not None, "host 2's QEMU is not running"
            os.kill(qemu, signal.SIGKILL)
            killed = time.monotonic()
            lab.wait(timeout=WAIT_S)
            after_kill_s = time.monotonic() - killed
        finally:
            if lab.poll() is None:
                lab.kill()
                lab.wait()
    said = log.read_text()
    assert lab.returncode == 1, said[-3000:]
    records = json.loads((results / DEVICE / "results.json").read_text())["results"]
    assert len(records) == len(selected()) and all("between-devices" in r["stable_id"] for r in records), records
    assert any(r["outcome"] == "conforms" for r in records), "nothing ran before the kill"
    lost = [r for r in records if r["outcome"] in ("error", "timeout")]
    assert lost, [(r["stable_id"], r["outcome"]) for r in records]
    for record in lost:
        assert PEER_END in (record.get("message") or record.get("reason") or ""), record
    assert "gone" in said or "did not answer" in said
    print(
        f"host 2 killed after 1 result; {len(records)} records ({len(lost)} lost to the peer's end); "
        f"the lab ended {after_kill_s:.0f} s after the kill"
    )
