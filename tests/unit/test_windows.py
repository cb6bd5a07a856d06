"""The window kind's data: where its probes land, and the catalogue's window claims (no device needed)."""

from __future__ import annotations

from pytest_rdma.generate import expand
from pytest_rdma.kinds import windows
from pytest_rdma.kinds.load import KINDS
from pytest_rdma.verbs import CATALOGUE

WINDOW_END = windows.WINDOW_OFFSET + windows.WINDOW_LENGTH


def test_window_kind_is_registered() -> None:
    assert KINDS["window"].run is windows.window


def test_inside_probe_lies_in_the_window() -> None:
    start = windows.WHERE["inside"]
    assert windows.WINDOW_OFFSET <= start and start + windows.PROBE <= WINDOW_END


def test_outside_probe_misses_the_window_but_not_the_region() -> None:
    # Past the window's end yet inside the region: only the window's own range can refuse it.
    start = windows.WHERE["outside"]
    assert start >= WINDOW_END and start + windows.PROBE <= windows.REGION


def test_across_end_probe_starts_inside_and_ends_outside() -> None:
    start = windows.WHERE["across-end"]
    assert windows.WINDOW_OFFSET <= start < WINDOW_END < start + windows.PROBE <= windows.REGION


def _window_cases() -> list:
    return [case for verb in CATALOGUE for case in expand(verb) if case.kind == "window"]


def test_window_claims_are_gated_on_windows() -> None:
    cases = _window_cases()
    assert cases
    for case in cases:
        attrs = [cap.attr for cap in case.spec["needs"]]
        assert any("IBV_DEVICE_MEM_WINDOW" in attr for attr in attrs), case.stable_id


def test_window_claims_use_known_steps_and_probes() -> None:
    opcodes = next(verb for verb in CATALOGUE if verb.name == "ibv_post_send").tables["opcodes"]
    for case in _window_cases():
        params, variables = case.spec["params"], case.spec["vars"]
        then = variables.get("then", params.get("then", ""))
        assert then in ("", *windows.THEN.names()), case.stable_id
        if then in ("local-inv", "send-with-inv"):
            assert any("MEM_MGT_EXTENSIONS" in cap.attr for cap in case.spec["needs"]), case.stable_id
        if then != "dereg-region" and params.get("probe", True):
            opcode = variables.get("opcode", params.get("opcode"))
            assert opcodes[opcode].get("remote"), case.stable_id
            assert variables.get("where", params.get("where", "inside")) in windows.WHERE
