"""The C reproducer of a missing asynchronous event judges itself on the context's async fd (host only)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_rdma.calls.marshal import marshal
from pytest_rdma.calls.record import Call, Handle
from pytest_rdma.calls.render import c_program
from pytest_rdma.catalogue.index import Catalogue
from pytest_rdma.observations import EVENT_WAIT_MS, MissingAsyncEvent
from pytest_rdma.verbs import CATALOGUE

VERBS = Catalogue.of(CATALOGUE)
CTX = Handle("ctx", "context", "struct ibv_context *", 0x100)
SRQ = Handle("srq0", "srq", "struct ibv_srq *", 0x300)


def _call(index: int, verb: str, values: dict, value: object, result: object = None, phase: str = "call") -> Call:
    entry = VERBS.by_name[verb]
    shown = marshal([(p.name, p.ctype, p.direction) for p in entry.params], values).shown
    return Call(
        index, verb, tuple(shown), value, value if result is None else result, 0, "provider:x", True, "", {}, phase
    )


def _record() -> list[Call]:
    pd = Handle("pd0", "pd", "struct ibv_pd *", 0x200)
    return [
        _call(0, "ibv_alloc_pd", {"context": CTX}, pd.address, pd, phase="setup"),
        _call(1, "ibv_create_srq", {"pd": pd, "srq_init_attr": {"attr.max_wr": 16, "attr.max_sge": 1}}, 0x300, SRQ),
        _call(2, "ibv_modify_srq", {"srq": SRQ, "srq_attr": {"srq_limit": 3}, "srq_attr_mask": 2}, 0),
    ]


def test_no_async_event_is_judged_on_the_contexts_async_fd() -> None:
    text = c_program(VERBS.by_name, "rxe0", _record(), decisive=2, observation=MissingAsyncEvent())
    assert f'if (!fd_ready(ctx->async_fd, {EVENT_WAIT_MS})) {{ puts("REPRODUCED"); return 0; }}' in text


def test_the_async_event_reproducer_compiles() -> None:
    gcc = shutil.which("gcc")
    if gcc is None or not Path("/usr/include/infiniband/verbs.h").exists():
        pytest.skip("needs gcc and <infiniband/verbs.h> (Debian: apt-get install gcc libibverbs-dev)")
    text = c_program(VERBS.by_name, "rxe0", _record(), decisive=2, observation=MissingAsyncEvent())
    done = subprocess.run(
        [gcc, "-fsyntax-only", "-Wall", "-Werror=implicit-function-declaration", "-x", "c", "-"],
        input=text,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
