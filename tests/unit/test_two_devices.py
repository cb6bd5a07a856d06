"""A two-device check's pieces that need no device (host only): the peer setting, the reproducers
that open both devices, and the lab's peers (its commands and the runs' arguments)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_rdma.calls.marshal import marshal
from pytest_rdma.calls.record import Call, Handle
from pytest_rdma.calls.render import c_program, python_script
from pytest_rdma.catalogue.index import Catalogue
from pytest_rdma.lab.guest import batches, device_commands, failed_command, peer_args, peer_of
from pytest_rdma.settings import _name
from pytest_rdma.verbs import CATALOGUE

VERBS = Catalogue.of(CATALOGUE)
HEADER = Path("/usr/include/infiniband/verbs.h")
PEER_CTX = Handle("peer_ctx", "context", "struct ibv_context *", 0x100)


def _peer_pd() -> list[Call]:
    """A record whose one call is made on the peer's context, as a two-device check's receiver side is."""
    pd = Handle("pd1", "pd", "struct ibv_pd *", 0x200)
    shown = marshal(
        [(p.name, p.ctype, p.direction) for p in VERBS.by_name["ibv_alloc_pd"].params], {"context": PEER_CTX}
    )
    return [Call(0, "ibv_alloc_pd", tuple(shown.shown), pd.address, pd, 0, "provider:x", True, "", {}, "setup")]


def test_the_peer_is_one_device_name() -> None:
    assert _name(["rxe0p"]) == "rxe0p"
    for bad in ("", "rxe0,rxe1"):
        with pytest.raises(ValueError, match="not one device name"):
            _name([bad])


def test_the_c_reproducer_opens_the_peer_it_names_and_compiles() -> None:
    text = c_program(VERBS.by_name, "rxe0", _peer_pd(), peer="rxe0p")
    assert 'if (!strcmp(ibv_get_device_name(list[i]), "rxe0p"))' in text
    assert "struct ibv_context *peer_ctx = ibv_open_device(peer_device);" in text
    assert "ibv_alloc_pd(peer_ctx)" in text
    assert "peer_ctx" not in c_program(VERBS.by_name, "rxe0", []), "a one-device check opens one device"
    gcc = shutil.which("gcc")
    if gcc is None or not HEADER.exists():
        pytest.skip(f"needs gcc and {HEADER} (Debian: apt-get install gcc libibverbs-dev)")
    done = subprocess.run(
        [gcc, "-fsyntax-only", "-Wall", "-Werror", "-x", "c", "-"], input=text, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_the_python_reproducer_replays_on_both_devices() -> None:
    text = python_script("rxe0", _peer_pd(), peer="rxe0p")
    compile(text, "reproducer.py", "exec")
    assert "replay('rxe0', CALLS, decisive=None, observation={}, peer='rxe0p')" in text
    assert "peer=" not in python_script("rxe0", [])


def test_the_lab_puts_an_rxe_and_its_peer_on_the_two_ends_of_a_veth() -> None:
    commands = device_commands(["rxe0", "siw0"])
    veth = ("ip", "link", "add", "rdmalab0", "address", "02:00:c6:12:00:01", "type", "veth", "peer", "name")
    assert (*veth, "rdmalab0p", "address", "02:00:c6:12:00:02") in commands, "MACs given: udev must not change them"
    assert ("rdma", "link", "add", "rxe0", "type", "rxe", "netdev", "rdmalab0") in commands
    assert ("rdma", "link", "add", "rxe0p", "type", "rxe", "netdev", "rdmalab0p") in commands
    # siw's traffic is TCP: two dummies, each with its address (rdma_cm connects addresses).
    assert ("ip", "link", "add", "rdmalab1p", "address", "02:00:c6:12:01:02", "type", "dummy") in commands
    assert ("rdma", "link", "add", "siw0p", "type", "siw", "netdev", "rdmalab1p") in commands
    assert ("ip", "addr", "add", "198.18.1.2/32", "dev", "rdmalab1p") in commands
    # Every netdev is up before its RDMA device is added on it.
    for netdev in ("rdmalab0", "rdmalab0p", "rdmalab1", "rdmalab1p"):
        up = commands.index(("ip", "link", "set", netdev, "up"))
        added = next(i for i, c in enumerate(commands) if c[:3] == ("rdma", "link", "add") and c[-1] == netdev)
        assert up < added


def test_each_runs_device_is_given_its_own_peer_unless_the_user_names_one() -> None:
    assert peer_of("siw0") == "siw0p"
    assert peer_args(["rxe0"], ["-k", "between"]) == ["--rdma-peer=rxe0p"]
    assert peer_args(["rxe0"], ["--rdma-peer=rxe7"]) == []
    assert peer_args(["rxe0", "siw0"], []) == [], "one peer cannot serve two transports"


def test_the_device_commands_run_as_one_batch_per_program_in_order() -> None:
    commands = device_commands(["rxe0", "siw0"])
    grouped = batches(commands)
    assert [program for program, _ in grouped] == ["ip", "rdma"], "every netdev exists before a device is added"
    assert grouped[0][1][0] == (
        "link add rdmalab0 address 02:00:c6:12:00:01 type veth peer name rdmalab0p address 02:00:c6:12:00:02"
    )
    assert sum(len(lines) for _, lines in grouped) == len(commands)
    said = failed_command("rdma", grouped[1][1], "Error: already exists\nCommand failed -:2\n")
    assert said == "rdma link add rxe0p type rxe netdev rdmalab0p: Error: already exists"
    assert failed_command("ip", ["link x"], "odd failure") == "odd failure"
