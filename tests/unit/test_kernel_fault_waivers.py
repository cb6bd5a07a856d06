"""Waivers of a kernel fault (observed = { kernel_fault = KIND }): what they hold for, and what they do not (pure)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_rdma.expectations import (
    KERNEL_FAULT_KINDS,
    Expectations,
    parse,
    vm_ending_variants,
    without_vm_ending,
)
from pytest_rdma.guard.kmsg import PATTERNS
from pytest_rdma.lab.fault import Fault, fault_record
from pytest_rdma.observations import KernelFaulted, from_dict
from pytest_rdma.report.recorder import kernel_fault_phase
from pytest_rdma.report.resume import with_fault_waiver

ID = "test_ibv_post_send[enum-outside-RC-opcode-large]"
IDENTITY = {"driver": "rxe", "kernel": "6.1.0-56-amd64"}


def waiver_file(kind: str, extra: str = "") -> str:
    return (
        f'driver = "rxe"\n[[waiver]]\nid = "{ID}"\nreason = "r"\nlink = "l"\n'
        f'observed = {{ kernel_fault = "{kind}"{extra} }}\n'
    )


def expectations_of(kind: str) -> Expectations:
    expectations = Expectations()
    expectations.add(parse(waiver_file(kind), Path("rxe.toml")))
    return expectations


def test_the_kinds_are_the_guards_and_the_labs() -> None:
    assert {kind for kind, _ in PATTERNS} | {"oops", "bug", "panic", "hang"} == set(KERNEL_FAULT_KINDS)


def test_a_kernel_fault_waiver_stands_alone_and_names_a_known_kind() -> None:
    assert expectations_of("oops").find({"driver": "rxe", "stable_id": ID, "identity": IDENTITY}) is not None
    for bad in (waiver_file("oops", ', errno = "EINVAL"'), waiver_file("meltdown")):
        with pytest.raises(Exception, match="kernel_fault = KIND.*stands alone"):
            parse(bad, Path("rxe.toml"))


def test_the_observation_reads_back_what_the_lab_and_the_guard_write() -> None:
    lab = {"kernel_fault": "oops", "console": ["BUG: unable to handle page fault", "RIP: req_next_wqe"]}
    assert from_dict(lab) == KernelFaulted("oops", tuple(lab["console"]))
    assert from_dict({"kernel_fault": "warning"}).as_dict() == {"kernel_fault": "warning"}
    assert KernelFaulted("oops", ("x",)).matches({"kernel_fault": "oops"})
    assert not KernelFaulted("warning").matches({"kernel_fault": "oops"})


def phase(kinds: list[str] | None) -> dict:
    finding = {"kinds": kinds, "lines": ["WARNING: CPU: 0 PID: 1 at siw_qp_tx.c:1179"], "from_user_space": False}
    return {"when": "teardown", "outcome": "conforms", "waiver": None, **({"kernel_log": finding} if kinds else {})}


def test_the_guards_finding_of_exactly_the_waived_kind_is_waived() -> None:
    waiver = expectations_of("warning").find({"driver": "rxe", "stable_id": ID, "identity": IDENTITY})
    assert waiver is not None
    waived = kernel_fault_phase(phase(["warning"]), waiver)  # type: ignore[arg-type]
    assert (waived["outcome"], waived["waiver"]["status"]) == ("waived", "applied")
    assert waived["observation"] == {"kernel_fault": "warning"} and "siw_qp_tx.c" in waived["observed"]
    gone = kernel_fault_phase(phase(None), waiver)  # type: ignore[arg-type]
    assert (gone["outcome"], gone["waiver"]["status"]) == ("conforms", "fixed"), "no fault: the waiver is stale"
    other = kernel_fault_phase({**phase(["warning", "lockdep"]), "outcome": "error"}, waiver)  # type: ignore[arg-type]
    assert (other["outcome"], other["waiver"]["status"]) == ("error", "mismatch")


def lab_record(kind: str) -> dict:
    entry = {
        "nodeid": f"suites/test_verbs.py::test_ibv_post_send[rxe0-{ID[18:-1]}]",
        "info": {"stable_id": ID, "device": "rxe0"},
    }
    before = [{"device": "rxe0", "identity": IDENTITY}]
    return fault_record(entry, Fault(kind, ["BUG: unable to handle page fault"], 1.0, 300), before)  # type: ignore[arg-type]


def test_the_labs_record_of_a_fault_that_ended_the_vm_is_judged_by_the_same_waivers() -> None:
    record = lab_record("oops")
    assert (record["outcome"], record["driver"]) == ("deviates", "rxe")
    waived = with_fault_waiver(record, expectations_of("oops"))
    assert (waived["outcome"], waived["waiver"]["status"]) == ("waived", "applied")  # type: ignore[index]
    other = with_fault_waiver(record, expectations_of("hang"))
    assert (other["outcome"], other["waiver"]["status"]) == ("deviates", "mismatch")  # type: ignore[index]
    assert with_fault_waiver(record, Expectations()) == record


def test_a_fault_in_a_devices_first_check_is_judged_by_its_drivers_waivers_too() -> None:
    """No record before it to take the identity from: the running file's (the device opened at the start) gives it."""
    entry = {
        "nodeid": f"suites/test_verbs.py::test_ibv_post_send[rxe0-{ID[18:-1]}]",
        "info": {"stable_id": ID, "device": "rxe0", "identity": IDENTITY},
    }
    record = fault_record(entry, Fault("oops", ["BUG: unable to handle page fault"], 1.0, 300), [])  # type: ignore[arg-type]
    assert (record["driver"], record["identity"]) == ("rxe", IDENTITY)
    waived = with_fault_waiver(record, expectations_of("oops"))
    assert (waived["outcome"], waived["waiver"]["status"]) == ("waived", "applied")  # type: ignore[index]


@pytest.mark.parametrize("kind", ["oops", "bug", "panic", "hang"])
def test_a_waiver_of_a_fault_that_ends_the_vm_leaves_its_check_out_of_runs_that_are_not_about_it(kind: str) -> None:
    assert vm_ending_variants(expectations_of(kind)) == ["enum-outside-RC-opcode-large"]
    assert without_vm_ending(expectations_of(kind)) == "not enum-outside-RC-opcode-large"


@pytest.mark.parametrize("kind", ["warning", "kasan", "lockdep"])
def test_a_waiver_of_a_fault_the_vm_survives_leaves_nothing_out(kind: str) -> None:
    assert vm_ending_variants(expectations_of(kind)) == [] and without_vm_ending(expectations_of(kind)) == ""
