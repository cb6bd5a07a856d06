"""The pyverbs fixtures for users' own tests, on the lab's device (rxe0, then siw0): the examples/
directory run as a user would, its records per driver (the claim; conforms, unsupported from the
named attribute, not exercised, deviates with the assertion's message), nothing left behind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_rdma.provider import netlink

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
REGION = "test_two_regions_get_keys_of_their_own"
SEND = "test_a_send_arrives_intact"
STATE = "test_a_qp_reports_the_state_it_was_moved_to"
WINDOW = "test_a_type_1_window_is_allocated_and_freed"
# What each example is on each device: rxe does all of it. siw (iWARP) has no memory windows (an
# attribute says so), no UC or UD QPs, connects RC only through rdma_cm, and reads back another state
# than the one a QP was moved to (RESET for INIT and RTR on 6.1, INIT for RTR on 6.12: the catalogue's
# check of ibv_query_qp finds it too, and siw's waiver says why), so its QP cannot be walked to RTS.
EXPECTED = {
    "rxe0": {
        REGION: "conforms",
        f"{SEND}[RC]": "conforms",
        f"{SEND}[UC]": "conforms",
        f"{SEND}[UD]": "conforms",
        f"{STATE}[INIT]": "conforms",
        f"{STATE}[RTR]": "conforms",
        f"{STATE}[RTS]": "conforms",
        WINDOW: "conforms",
    },
    "siw0": {
        REGION: "conforms",
        f"{SEND}[RC]": "conforms",
        f"{SEND}[UC]": "not exercised",
        f"{SEND}[UD]": "not exercised",
        f"{STATE}[RTR]": "deviates",
        f"{STATE}[RTS]": "not exercised",
        WINDOW: "unsupported",
    },
}
KERNEL_DEPENDENT = {"siw0": f"{STATE}[INIT]"}  # conforms on 6.12, deviates on 6.1


def run(pytester: pytest.Pytester, device: str, *args: str) -> tuple[pytest.RunResult, dict[str, dict]]:
    result = pytester.runpytest_subprocess(*args, "--rdma-dev", device, "--rdma-json", "results.json")
    records = json.loads((pytester.path / "results.json").read_text())["results"]
    return result, {r["stable_id"]: r for r in records}


def test_the_examples_run_as_checks_of_their_claims(pytester: pytest.Pytester, device: str) -> None:
    before = netlink.resource_counts()
    result, records = run(pytester, device, str(EXAMPLES), "-v")
    after = netlink.resource_counts()
    outcomes = {stable_id: r["outcome"] for stable_id, r in records.items()}
    if device in KERNEL_DEPENDENT:
        assert outcomes.pop(KERNEL_DEPENDENT[device]) in ("conforms", "deviates")
    assert outcomes == EXPECTED[device], result.stdout.str()
    region = records[REGION]
    assert (region["verb"], region["ref"], region["device"]) == ("ibv_reg_mr", "ibv_reg_mr(3) DESCRIPTION", device)
    assert region["claim_text"] == "Each registered memory region has its own local and remote key."
    assert region["driver"] == device[:3] and region["identity"]["kernel"]
    if device == "siw0":
        assert records[WINDOW]["reason"] == "attr.device_cap_flags&IBV_DEVICE_MEM_WINDOW = 0"
        assert "only reliable connections" in records[f"{SEND}[UD]"]["reason"]
        # A failed assertion of the user's own: a deviation whose observation is the assertion's message.
        assert "IBV_QPS_RTR" in records[f"{STATE}[RTR]"]["observed"]
    assert not [r for r in records.values() if r["leak"]]
    assert before[device] == after[device]


FAILING = """
import pytest

@pytest.mark.rdma_claim(page="ibv_reg_mr(3)", section="DESCRIPTION")
def test_keys_are_odd(rdma_mr):
    mr = rdma_mr(4096)
    assert mr.lkey == -1, "the lkey is not -1"

@pytest.mark.rdma_claim(page="ibv_create_qp(3)", section="DESCRIPTION", needs="attr.max_qp")
def test_skips_for_its_own_reason(rdma_qp):
    rdma_qp("RC", state="INIT")
    pytest.skip("the author's own reason")

def test_skips_without_a_claim(rdma_pd):
    pytest.skip("no claim, the author's reason")
"""


def test_a_failed_assertion_is_a_deviation_and_a_plain_skip_is_not_unsupported(
    pytester: pytest.Pytester, device: str
) -> None:
    pytester.makepyfile(FAILING)
    result, records = run(pytester, device)
    assert result.ret == 1
    deviation = records["test_keys_are_odd"]
    assert deviation["outcome"] == "deviates" and "the lkey is not -1" in deviation["observed"]
    assert deviation["ref"] == "ibv_reg_mr(3) DESCRIPTION"
    skipped = records["test_skips_for_its_own_reason"]
    assert skipped["outcome"] == "not exercised" and "the author's own reason" in skipped["reason"]
    assert not skipped["leak"]
    # Unsupported is the device's word only: a plain skip of a test without the marker is not exercised too.
    unclaimed = records["test_skips_without_a_claim"]
    assert unclaimed["outcome"] == "not exercised" and "no claim" in unclaimed["reason"]
