"""The peer in another process, reached through execnet (--rdma-peer-host popen//python=...): the lab's
stand-in for a second host (the same VM, the peer device rxe0p/siw0p of this one, another interpreter).

The two-device checks must end as they do with the peer in-process: the same ids, the same outcomes,
each record naming both ends; the peer's process must free what it made. A peer killed mid-run costs
the checks it was in, each saying the peer host is gone, and not the run: every selected check has a
record and the run ends.

Each test runs on every device of the outer lab run (the selftest's lab step gives rxe0 and siw0): siw's
iWARP connects through rdma_cm, its listener on the peer's end, so its exchange through the gateway is
not rxe's.
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

from pytest_rdma import settings

REPO = Path(__file__).resolve().parents[2]
SPEC = f"popen//python={sys.executable}"
SELECTION = "between"  # the two-device claims of ibv_post_send: "*between-devices*"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "device" in metafunc.fixturenames:
        metafunc.parametrize("device", settings.get(metafunc.config).devices or ("rxe0",), scope="module")


def outcomes(path: Path) -> dict[str, dict]:
    return {r["stable_id"]: r for r in json.loads(path.read_text())["results"] if "between-devices" in r["stable_id"]}


INTERMITTENT = "conforms or waived (intermittent)"


def verdict(record: dict) -> str:
    """The record's outcome; a check whose waiver records an intermittent deviation (siw's, seen in some runs
    only) may conform in one run and be waived in the other: either is the same verdict."""
    if (record.get("waiver") or {}).get("intermittent") and record["outcome"] in ("conforms", "waived"):
        return INTERMITTENT
    return str(record["outcome"])


def run(pytester: pytest.Pytester, device: str, name: str, *more: str) -> tuple[dict[str, dict], str]:
    results = pytester.path / f"{name}.json"
    ran = pytester.runpytest_subprocess(
        str(REPO / "suites"), "--rdma-dev", device, "--rdma-json", str(results), "-k", SELECTION, *more
    )
    assert ran.ret == pytest.ExitCode.OK, ran.stdout.str()[-3000:]
    return outcomes(results), ran.stdout.str()


def test_a_peer_in_another_process_ends_every_check_as_an_in_process_peer(
    pytester: pytest.Pytester, device: str
) -> None:
    peer = f"{device}p"
    here, _ = run(pytester, device, "in-process", "--rdma-peer", peer)
    there, said = run(pytester, device, "remote", "--rdma-peer", peer, "--rdma-peer-host", SPEC)
    assert {k: verdict(r) for k, r in there.items()} == {k: verdict(r) for k, r in here.items()}
    assert any(r["outcome"] == "conforms" for r in there.values()), there
    for record in there.values():
        if record["outcome"] != "conforms":
            continue
        assert record["ends"]["peer"]["device"] == peer and record["ends"]["dut"]["device"] == device
        assert record["ends"]["peer"]["driver"] == record["driver"]
        assert any("ibv_alloc_pd(peer_ctx)" in step for step in record["steps"]), record["steps"]
    assert f"rdma: peer {peer} on {SPEC}: every object freed" in said


def _children(pid: int) -> list[int]:
    found = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(n) for n in found.read_text().split()] if found.exists() else []


def _descendants(pid: int) -> list[int]:
    return [child for direct in _children(pid) for child in (direct, *_descendants(direct))]


def _peer_process(pytest_pid: int) -> int | None:
    """The execnet peer interpreter the inner run started (its command line reads its code from stdin):
    the deepest such process, as an xdist worker (execnet's too) would start the peer's below it."""
    found = None
    for pid in _descendants(pytest_pid):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"exec(eval(sys.stdin" in command:
            found = pid
    return found


def test_a_peer_killed_mid_run_costs_its_checks_not_the_run(pytester: pytest.Pytester, device: str) -> None:
    peer = f"{device}p"
    results = pytester.path / "killed.json"
    inner = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", str(REPO / "suites"), "--rdma-dev", device,
         "--rdma-json", str(results), "-k", SELECTION, "--rdma-peer", peer, "--rdma-peer-host", SPEC],
        cwd=pytester.path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    lines = results.with_name(results.name + "l")
    deadline = time.monotonic() + 600
    killed = None
    while killed is None and time.monotonic() < deadline and inner.poll() is None:
        # After the first two-device check has a record, the peer is mid-way through the next one.
        done = lines.read_text().count('"result"') if lines.exists() else 0
        found = _peer_process(inner.pid) if done >= 1 else None
        if found is not None:
            os.kill(found, signal.SIGKILL)
            killed = found
        time.sleep(0.2)
    said, _ = inner.communicate(timeout=600)
    assert killed is not None, f"no peer process was found to kill:\n{said[-3000:]}"
    assert inner.returncode == pytest.ExitCode.TESTS_FAILED, said[-3000:]
    found = outcomes(results)
    lost = [r for r in found.values() if r["outcome"] == "error"]
    assert lost, [(k, r["outcome"]) for k, r in found.items()]
    assert all("is gone" in (r.get("message") or r.get("reason") or "") for r in lost), lost
    assert any(r["outcome"] == "conforms" for r in found.values()), "nothing ran before the kill"
    assert len(found) >= 15 if device.startswith("rxe") else len(found) >= 3  # every check has its record
