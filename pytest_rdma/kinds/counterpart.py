"""The counterpart kind: claims of an API family that has no provider on this system.

DET (det_modify_qp) has no distribution, library or kernel driver today; its page's claims are
still generated, one case per variant the claim lists, so a coverage report shows them and
a system that gains a provider gains the checks. Each says which ibv verb has the same
semantics. The family's blocker (pytest_rdma/generate.py) makes them "blocked" before they run.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from pytest_rdma.cases import Case, make_case
from pytest_rdma.catalogue.model import Claim, Verb
from pytest_rdma.catalogue.params import read_params
from pytest_rdma.kinds.check import Check
from pytest_rdma.kinds.registry import kind
from pytest_rdma.outcomes import Blocked


@dataclass(frozen=True)
class CounterpartParams:
    variants: tuple[str, ...] = ("",)  # the cases' names
    counterpart_claim: str = ""  # the claim of the ibv counterpart with the same semantics


def variant_cases(verb: Verb, claim: Claim) -> Iterator[Case]:
    p = read_params(CounterpartParams, claim.params)
    for variant in p.variants:
        yield make_case(verb, claim, variant, {}, counterpart=verb.counterpart, counterpart_claim=p.counterpart_claim)


@kind("counterpart", variant_cases, params=CounterpartParams)
def counterpart(check: Check) -> None:
    """A claim of an API family without a runner here: see its ibv counterpart."""
    raise Blocked(f"no {check.case.family.upper()} runner: see {check.spec['counterpart']} for the same semantics")
