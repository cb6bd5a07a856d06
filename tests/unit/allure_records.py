"""Records as the controller assembles them, for the reporters' host tests: no device needed.

Each record is built from a real case of the catalogue (phase.case_facts), on a device whose
identity is that of the lab's rxe0 or siw0, with an outcome and the evidence a check of that
outcome carries (steps, expected/observed, the waiver, the reproducers). The shapes are those
of records from a lab run (docs/results-schema.md).
"""

from __future__ import annotations

from typing import Any

from pytest_rdma.generate import active, expand
from pytest_rdma.outcomes import CONFORMS, CRASH, DEVIATES, ERROR, NOT_EXERCISED, TIMEOUT, UNSUPPORTED, WAIVED
from pytest_rdma.report.phase import case_facts

IDENTITIES = {
    "rxe0": {
        "name": "rxe0",
        "driver": "rxe",
        "node_type": "CA",
        "transport": "roce",
        "firmware": "0.0.0",
        "vendor_id": "0xffffff",
        "vendor_part_id": "0",
        "kernel": "6.1.0-56-amd64",
        "rdma_core": "44.0",
    },
    "siw0": {
        "name": "siw0",
        "driver": "siw",
        "node_type": "RNIC",
        "transport": "iw",
        "firmware": "0.0.0",
        "vendor_id": "0x626d74",
        "vendor_part_id": "1",
        "kernel": "6.1.0-56-amd64",
        "rdma_core": "44.0",
    },
}
STEPS = [
    "[0] setup: ibv_alloc_pd(ctx) -> pd0",
    "[1] setup: ibv_create_cq(ctx, 16, NULL, NULL, 0) -> cq0",
    "[2] setup: ibv_create_qp(pd0, {qp_type=IBV_QPT_RC, cap.max_send_wr=1}) -> qp0",
    "[3] call: ibv_modify_qp(qp0, {qp_state=IBV_QPS_INIT, pkey_index=0, port_num=1}, IBV_QP_STATE) -> 0",
    "[4] teardown: ibv_destroy_qp(qp0) -> 0",
]
C_TEXT = "#include <infiniband/verbs.h>\nint main(void)\n{\n\treturn 0; /* REPRODUCED */\n}\n"
PY_TEXT = "# replay of the recorded calls\nfrom pytest_rdma.replay import main\nmain()\n"


def cases() -> list[Any]:
    """Every case of the catalogue, in its order."""
    return [case for verb in active().verbs for case in expand(verb)]


def find(stable_id: str) -> Any:
    return next(case for case in cases() if case.stable_id == stable_id)


def record(case: Any, device: str = "rxe0", outcome: str = CONFORMS, **extra: Any) -> dict[str, Any]:
    """A finished check's record: `case` on `device`, ending as `outcome`."""
    identity = IDENTITIES.get(device)
    facts = case_facts(case)
    out: dict[str, Any] = {
        **facts,
        "nodeid": f"suites/test_verbs.py::test_{case.verb}[{device}-{case.id}]"
        if device
        else f"suites/test_verbs.py::{facts['stable_id']}",
        "device": device if identity else "",
        "driver": identity["driver"] if identity else "",
        "identity": dict(identity) if identity else None,
        "outcome": outcome,
        "when": "call",
        "reason": "",
        "expected": "",
        "observed": "",
        "observation": {},
        "details": {},
        "message": "",
        "blocked": False,
        "pytest_outcome": "passed",
        "waiver": None,
        "duration": 0.05,
        "worker": "gw0",
        "steps": list(STEPS),
        "routes": ["provider (librxe-rdmav34.so)"],
        "decided_by": case.layer,
        "teardown_failures": [],
        "leak": None,
        "kernel_log": None,
    }
    if outcome in (DEVIATES, WAIVED):
        out.update(
            expected="the call fails with EINVAL",
            observed="returned 0",
            observation={"returned": 0},
            decisive_call=3,
            pytest_outcome="failed" if outcome == DEVIATES else "xfailed",
            reproducer={
                "dir": "reproducers",
                "c": f"{device}/{facts['stable_id']}.c",
                "python": f"{device}/{facts['stable_id']}.py",
                "decisive_call": 3,
                "c_text": C_TEXT,
            },
        )
    if outcome == WAIVED:
        out.update(
            reason="waived: rxe accepts it (a known provider bug)",
            waiver={
                "pattern": facts["stable_id"],
                "reason": "rxe accepts it (a known provider bug)",
                "link": "https://bugzilla.kernel.org/show_bug.cgi?id=1",
                "observed": {"returned": 0},
                "file": "rxe.toml",
                "line": 5,
                "scopes": {},
                "status": "applied",
            },
        )
    if outcome == UNSUPPORTED:
        out.update(reason="attr_ex.raw_packet_caps = 0", pytest_outcome="skipped", steps=[])
    if outcome == NOT_EXERCISED:
        out.update(reason="the QP could not be moved to RTS first", pytest_outcome="skipped")
    if outcome in (CRASH, TIMEOUT, ERROR):
        out.update(
            reason=f"{outcome}: worker 'gw0' crashed while running",
            pytest_outcome="failed",
            message='Traceback:\n  File "/home/ci/builds/42/pytest_rdma/kinds/check.py", line 9\n',
            when="???",
        )
    out.update(extra)
    return out
