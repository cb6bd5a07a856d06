"""The C reproducer of bytes that arrived wrong compares the right places of both regions (host only)."""

from __future__ import annotations

from pytest_rdma.calls.marshal import marshal
from pytest_rdma.calls.record import Call, Handle
from pytest_rdma.calls.render import c_program
from pytest_rdma.catalogue.index import Catalogue
from pytest_rdma.observations import from_dict
from pytest_rdma.verbs import CATALOGUE

VERBS = Catalogue.of(CATALOGUE)
CTX = Handle("ctx", "context", "struct ibv_context *", 0x100)


def _program(observation: dict) -> str:
    pd = Handle("pd0", "pd", "struct ibv_pd *", 0x200)
    shown = marshal([(p.name, p.ctype, p.direction) for p in VERBS.by_name["ibv_alloc_pd"].params], {"context": CTX})
    call = Call(0, "ibv_alloc_pd", tuple(shown.shown), pd.address, pd, 0, "provider:x", True, "", {}, "call")
    return c_program(VERBS.by_name, "rxe0", [call], decisive=0, observation=from_dict(observation))


def test_bytes_are_compared_at_the_target_offset() -> None:
    text = _program({"data": "differs", "first": 0, "region": "mr1", "offset": 40, "source": "mr0", "length": 64})
    assert "memcmp((char *)mr1->addr + 40, mr0->addr, 64) != 0" in text


def test_bytes_read_from_inside_the_source_are_compared_there() -> None:
    observation = {"data": "differs", "first": 0, "region": "mr0", "offset": 0, "source": "mr1", "source_offset": 1536}
    text = _program({**observation, "length": 64})
    assert "memcmp((char *)mr0->addr + 0, (char *)mr1->addr + 1536, 64) != 0" in text
