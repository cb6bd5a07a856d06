"""--rdma-confirm across two hosts, its plumbing on this host (no device: the lab runs it on one).

A popen gateway stands in for the peer host: the receiving side is sent there, built with that
host's compiler and run; what comes back is one clear line whichever way it ends.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import execnet
import pytest

from pytest_rdma.calls.pair import is_pair
from pytest_rdma.calls.record import Call, Handle
from pytest_rdma.peer.remote import RemoteEnd
from pytest_rdma.report.confirm_pair import address_of, confirm_pair

HEADER = Path("/usr/include/infiniband/verbs.h")
PROGRAM = """#include <stdio.h>
int main(void) { puts("%s"); return 2; }
"""


def _end(spec: str) -> Iterator[RemoteEnd]:
    gateway = execnet.makegateway(spec)
    try:
        yield RemoteEnd(spec, gateway, cast(execnet.Channel, None))  # its own channels: confirm opens one
    finally:
        gateway.exit()


@pytest.fixture
def programs(tmp_path: Path) -> tuple[Path, Path]:
    if shutil.which("cc") is None or not HEADER.exists():
        pytest.skip(f"needs cc and {HEADER} (Debian: apt-get install gcc libibverbs-dev)")
    receiver, sender = tmp_path / "x.receiver.c", tmp_path / "x.sender.c"
    receiver.write_text(PROGRAM % "no peer device rxe0p", encoding="utf-8")
    sender.write_text(PROGRAM % "unused", encoding="utf-8")
    return receiver, sender


def test_a_peer_host_without_a_compiler_is_one_clear_line(programs: tuple[Path, Path]) -> None:
    for end in _end(f"popen//python={sys.executable}//env:PATH=/nonexistent"):
        said = confirm_pair(end, *programs)
    assert said["verdict"] == "not built", said
    assert said["detail"].startswith("no C compiler on the peer host "), said
    assert said["detail"].endswith(": install gcc and libibverbs-dev there"), said


def test_a_receiving_side_that_ends_before_it_listens_is_a_setup_failure_saying_why(
    programs: tuple[Path, Path],
) -> None:
    for end in _end(f"popen//python={sys.executable}"):
        said = confirm_pair(end, *programs)
    assert said == {"verdict": "setup failed", "detail": "no peer device rxe0p"}, said


def test_a_lost_peer_host_is_said_without_waiting() -> None:
    end = RemoteEnd("ssh=gone", cast(execnet.Gateway, None), cast(execnet.Channel, None))
    end.lost = "the peer host (ssh=gone) is gone: EOFError"
    said = confirm_pair(end, Path("/nonexistent.receiver.c"), Path("/nonexistent.sender.c"))
    assert said == {"verdict": "not built", "detail": "the peer host (ssh=gone) is gone: EOFError"}


def test_the_sending_side_connects_to_the_host_the_gateway_spec_names() -> None:
    assert address_of("ssh=ci@server2//python=/opt/venv/bin/python") == "server2"
    assert address_of("ssh=-p 2222 root@10.0.0.2") == "10.0.0.2"
    assert address_of("socket=192.0.2.7:8888") == "192.0.2.7"
    assert address_of(f"popen//python={sys.executable}") == "127.0.0.1"


def test_only_a_record_with_calls_on_the_peer_host_is_a_pair() -> None:
    here = Call(0, "ibv_alloc_pd", (), 1, Handle("pd0", "pd", "struct ibv_pd *", 1), 0, "x", True)
    made = Handle("pd1", "pd", "struct ibv_pd *", 1, at="peer")
    there = Call(1, "ibv_alloc_pd", (), 1, made, 0, "x", True, at="peer")
    assert not is_pair([here]) and is_pair([here, there])
