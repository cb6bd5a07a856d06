"""A two-host check's reproducer as two C programs (host only: rendering, and gcc's word that both build).

The record is written by hand as a check with its peer on another host would make it: objects of the
peer made there (Call.at "peer"), a call here reading a field of one of them.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest

from pytest_rdma.calls.marshal import marshal
from pytest_rdma.calls.pair import c_pair, commands, is_pair
from pytest_rdma.calls.record import Call, Field, Handle, Resolved
from pytest_rdma.cases import Case
from pytest_rdma.catalogue.index import Catalogue
from pytest_rdma.observations import Errno
from pytest_rdma.report import junit, reproducers, terminal
from pytest_rdma.report.record import CheckInfo, Record
from pytest_rdma.running import Run
from pytest_rdma.settings import Settings
from pytest_rdma.verbs import CATALOGUE

VERBS = Catalogue.of(CATALOGUE)
HEADER = Path("/usr/include/infiniband/verbs.h")
PEER_CTX = Handle("peer_ctx", "context", "struct ibv_context *", 0x100, at="peer")
CTX = Handle("ctx", "context", "struct ibv_context *", 0x110)


def _call(index: int, verb: str, args: Mapping[str, Resolved], result: object, at: str) -> Call:
    shown = marshal([(p.name, p.ctype, p.direction) for p in VERBS.by_name[verb].params], args).shown
    value = result.address if isinstance(result, Handle) else result
    return Call(index, verb, tuple(shown), value, result, 0, "provider:x", True, "", {}, "setup", at=at)  # type: ignore[arg-type]


def _record() -> list[Call]:
    """The peer's PD and region made there, then a region here as long as the peer's (its field, sent over)."""
    pd1 = Handle("pd1", "pd", "struct ibv_pd *", 0x200, at="peer")
    buf0 = Handle("buf0", "buffer", "void *", 0x1000, size=64, at="peer")
    mr0 = Handle("mr0", "mr", "struct ibv_mr *", 0x300, at="peer")
    pd0 = Handle("pd0", "pd", "struct ibv_pd *", 0x400)
    buf1 = Handle("buf1", "buffer", "void *", 0x2000, size=64)
    access = 1
    return [
        _call(0, "ibv_alloc_pd", {"context": PEER_CTX}, pd1, "peer"),
        _call(1, "ibv_reg_mr", {"pd": pd1, "addr": buf0, "length": 64, "access": access}, mr0, "peer"),
        _call(2, "ibv_alloc_pd", {"context": CTX}, pd0, ""),
        _call(3, "ibv_reg_mr", {"pd": pd0, "addr": buf1, "length": Field(64, "mr0", "length"), "access": 1}, None, ""),
    ]


def _build(text: str) -> None:
    gcc = shutil.which("gcc")
    if gcc is None or not HEADER.exists():
        pytest.skip(f"needs gcc and {HEADER} (Debian: apt-get install gcc libibverbs-dev)")
    done = subprocess.run(
        [gcc, "-fsyntax-only", "-Wall", "-Werror", "-x", "c", "-"], input=text, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_each_side_makes_its_own_ends_calls_and_gets_the_others_fields_over_tcp() -> None:
    calls = _record()
    assert is_pair(calls) and not is_pair(calls[2:])
    both = c_pair(VERBS.by_name, "rxe0", "rxe0p", calls, decisive=3, observation=Errno("EINVAL"))
    receiver, sender = both["receiver"], both["sender"]
    assert '"rxe0p"' in receiver and '"rxe0"' not in receiver, "the receiving side opens the peer device only"
    assert '"rxe0"' in sender and '"rxe0p"' not in sender
    assert "= ibv_alloc_pd(peer_ctx);" in receiver and "= ibv_alloc_pd(peer_ctx);" not in sender
    assert "= ibv_alloc_pd(ctx);" in sender and "= ibv_alloc_pd(ctx);" not in receiver
    # The receiver's region's length crosses at the change of turn, and the sender's call reads what came.
    assert "give_turn(sock, (uint64_t[]){(uint64_t)(uintptr_t)mr0->length}, 1)" in receiver
    assert "take_turn(sock, (int[]){0}, 1)" in sender
    assert "ibv_reg_mr(pd0, buf1, (uintptr_t)got[0], 1)" in sender
    # The sending side judges its own call with the single-host program's condition, and tells the receiver.
    assert "int verdict = (e3 == 22) ? 0 : 1;" in sender
    assert "int verdict = (int)got[0];" in receiver
    assert "pair_connect(argc, argv, 1)" in receiver and "pair_connect(argc, argv, 0)" in sender
    for text in both.values():
        _build(text)


def test_an_observation_of_the_receivers_objects_is_judged_there() -> None:
    both = c_pair(VERBS.by_name, "rxe0", "rxe0p", _record(), decisive=1, observation=Errno("EINVAL"))
    assert "int verdict = (e1 == 22) ? 0 : 1;" in both["receiver"]
    assert "int verdict = (int)got[0];" in both["sender"]
    for text in both.values():
        _build(text)


def test_the_sender_addresses_the_gid_and_lid_the_receiver_sent() -> None:
    gid = bytes(range(16))
    pd0 = Handle("pd0", "pd", "struct ibv_pd *", 0x400)
    attr = {"grh.dgid": gid, "dlid": 7, "is_global": 1, "port_num": 1}
    ah = _call(4, "ibv_create_ah", {"pd": pd0, "attr": attr}, Handle("ah0", "ah", "struct ibv_ah *", 0x500), "")
    both = c_pair(VERBS.by_name, "rxe0", "rxe0p", [*_record(), ah], peer_gid=gid, peer_lid=7)
    assert "ibv_query_gid(peer_ctx, 1, 0, &my_gid)" in both["receiver"]
    assert "memcpy(peer_gid.raw, got, 16);" in both["sender"]
    assert "memcpy(&a4_attr.grh.dgid, peer_gid.raw, 16);" in both["sender"], "the GID it sent, not the record's"
    assert "a4_attr.dlid = peer_lid;" in both["sender"]
    _build(both["sender"])
    assert "int verdict = 3;" in both["sender"], "no observation: no automatic verdict, said by the sender"


def test_the_commands_run_the_receiver_first_and_name_its_host() -> None:
    said = commands("ibv_post_send.x", {"receiver": "", "sender": ""}, "server2")
    assert said["receiver"] == "gcc -o receiver ibv_post_send.x.receiver.c -libverbs && ./receiver 18516"
    assert said["sender"].endswith("./sender server2 18516")


def test_a_check_between_two_hosts_writes_only_its_pair(tmp_path: Path) -> None:
    """The one-host programs would open the peer device on this host: only the pair runs across two hosts."""
    settings = SimpleNamespace(reproducers=tmp_path, peer_host="socket=198.18.2.2:8888", port=1, gid_index=0)
    run = Run(cast(Case, None), device="rxe0", peer="rxe0", calls=_record())
    info = cast(CheckInfo, {"stable_id": "test_x[y]", "device": "rxe0", "driver": "rxe", "claim_text": "", "ref": ""})
    written = reproducers.write(cast(Settings, settings), info, run, None)
    assert sorted(path.name for path in (tmp_path / "rxe0").iterdir()) == ["x.y.receiver.c", "x.y.sender.c"]
    assert "c" not in written and "python" not in written
    pair = written["pair"]
    assert (pair["receiver"], pair["sender"]) == ("rxe0/x.y.receiver.c", "rxe0/x.y.sender.c")
    # The sending side is given the host the gateway reached, not the name the peer host gives itself.
    assert pair["commands"]["sender"].endswith("./sender 198.18.2.2 18516")
    assert written["c_text"].count("int main(") == 2


def test_a_pair_is_named_by_the_terminal_and_junit() -> None:
    pair = {
        "receiver": "rxe0/x.y.receiver.c",
        "sender": "rxe0/x.y.sender.c",
        "commands": commands("x.y", {"receiver": "", "sender": ""}, "198.18.2.2"),
    }
    record = cast(Record, {"stable_id": "test_x[y]", "outcome": "deviates", "reproducer": {"dir": "r", "pair": pair}})
    lines = terminal.deviation_lines(record, "r")
    assert "      reproduce: r/rxe0/x.y.receiver.c on the peer's host: gcc -o receiver x.y.receiver.c" in lines[-2]
    assert lines[-1].endswith(
        "then r/rxe0/x.y.sender.c here: gcc -o sender x.y.sender.c -libverbs && ./sender 198.18.2.2 18516"
    )
    props = dict(junit.case_properties(record))
    assert (props["reproducer_receiver"], props["reproducer_sender"]) == (pair["receiver"], pair["sender"])
    assert "reproducer_c" not in props
