"""Expansion of the flow steering kinds and the rule encoding they send (host only)."""

from __future__ import annotations

from types import SimpleNamespace

from pytest_rdma.checks.flow import rule_fields
from pytest_rdma.generate import expand
from pytest_rdma.verbs import ibv_create_flow, ibv_destroy_flow


def test_flow_cases() -> None:
    got = [c.id for c in expand(ibv_create_flow)]
    assert "no-steering-errno-UD-valid-rule-without-steering" in got
    assert "qp-type-not-allowed-RC-qp-not-allowed" in got
    assert "invalid-rules-RAW_PACKET-dont-trap-with-SNIFFER" in got
    assert "create-valid-UD-dont-trap-with-NORMAL" in got
    assert [c.id for c in expand(ibv_destroy_flow)] == [
        "destroy-returns-zero-UD-eth-dst-mac",
        "destroy-returns-zero-RAW_PACKET-eth-dst-mac",
    ]
    assert len(got) == len(set(got))


def test_rule_fields_resolve_names_and_overrides() -> None:
    dut = SimpleNamespace(port=1, attr=SimpleNamespace(phys_port_cnt=1))
    cases = {c.variant: c for c in expand(ibv_create_flow) if c.claim == "invalid-rules"}
    dont_trap = rule_fields(dut, cases["UD-dont-trap-with-MC_DEFAULT"].params["rule"])
    assert dont_trap == {"flow_type": 2, "priority": 0, "port": 1, "flags": 2, "num_of_specs": 0}
    assert rule_fields(dut, cases["UD-port-beyond-last"].params["rule"])["port"] == 2
    assert rule_fields(dut, cases["UD-fewer-specs-than-declared"].params["rule"])["num_of_specs"] == 2
    assert rule_fields(dut, cases["UD-unknown-flag-bit31"].params["rule"])["flags"] == 1 << 31
