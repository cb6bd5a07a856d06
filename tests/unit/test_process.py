"""Claims about the process, not the device: `when` preconditions and the facts they read.

A claim such as "an unprivileged process is held to RLIMIT_MEMLOCK" is not exercised as root
(the lab runs it again unprivileged); it is never "unsupported", which is the device's word.
"""

from __future__ import annotations

import dataclasses
import re
import resource

import pytest

from pytest_rdma import generate
from pytest_rdma.catalogue.index import Catalogue
from pytest_rdma.catalogue.model import Cap
from pytest_rdma.catalogue.validate import CatalogueError, validate
from pytest_rdma.kinds.load import known_kinds
from pytest_rdma.provider.process import CAP_IPC_LOCK, effective_capabilities, process_facts
from pytest_rdma.verbs import CATALOGUE

ROOT_CAPS = 0x000001FFFFFFFFFF


def test_root_is_privileged_and_a_user_is_not() -> None:
    assert process_facts(capabilities=ROOT_CAPS, memlock=8 << 20)["unprivileged"] == 0
    assert process_facts(capabilities=ROOT_CAPS & ~(1 << CAP_IPC_LOCK), memlock=8 << 20)["unprivileged"] == 1
    assert process_facts(capabilities=0, memlock=8 << 20)["unprivileged"] == 1


def test_the_memlock_limit_and_one_page_over_it() -> None:
    facts = process_facts(capabilities=0, memlock=8 << 20)
    assert facts["memlock"] == 8 << 20
    assert facts["over_memlock"] == (8 << 20) + resource.getpagesize()
    unlimited = process_facts(capabilities=0, memlock=resource.RLIM_INFINITY)
    assert (unlimited["memlock"], unlimited["over_memlock"]) == (0, 0)


def test_capabilities_come_from_proc_status() -> None:
    assert effective_capabilities("Name:\tpython\nCapEff:\t0000000000004000\n") == 1 << CAP_IPC_LOCK
    assert effective_capabilities("Name:\tpython\n") == 0


def test_the_memlock_claim_runs_only_in_an_unprivileged_limited_process() -> None:
    verb = Catalogue.of(CATALOGUE).by_name["ibv_reg_mr"]
    (case,) = [c for c in generate.expand(verb) if c.claim == "memlock-limit"]
    assert case.spec["when"] == (Cap("process.unprivileged"), Cap("process.memlock"))
    assert case.spec["needs"] == ()
    assert case.layer == "kernel"


def with_claim(verb_name: str, **changes: object) -> list:
    verbs = list(CATALOGUE)
    index = next(i for i, v in enumerate(verbs) if v.name == verb_name)
    verb = verbs[index]
    claims = list(verb.claims)
    claims[0] = dataclasses.replace(claims[0], **changes)
    verbs[index] = dataclasses.replace(verb, claims=tuple(claims))
    return verbs


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"needs": (Cap("process.unprivileged"),)}, "is a fact of the process, not the device: put it in 'when'"),
        ({"when": (Cap("attr.max_mr"),)}, "'when' names facts of the process (process.*), not attr.max_mr"),
    ],
)
def test_device_and_process_facts_are_not_mixed(changes: dict, says: str) -> None:
    with pytest.raises(CatalogueError, match=re.escape(says)):
        validate(with_claim("ibv_reg_mr", **changes), kinds=known_kinds())
