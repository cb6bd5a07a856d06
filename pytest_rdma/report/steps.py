"""Verb calls as report steps, for checks that want each call they make shown in Allure.

    from pytest_rdma.report.steps import verb_call
    with verb_call("ibv_modify_qp", qp_state="RTR", attr_mask="IBV_QP_STATE|IBV_QP_AV") as call:
        call.returned(qp.modify(attr, mask))

Without --alluredir (allure-pytest not active) this costs nothing and records nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class VerbCall:
    def __init__(self) -> None:
        self.result: Any = None

    def returned(self, value: Any) -> Any:
        self.result = value
        return value


@contextmanager
def verb_call(verb: str, **args: Any) -> Iterator[VerbCall]:
    call = VerbCall()
    try:
        # With no Allure listener registered, a step is a no-op hook call.
        from allure_commons._allure import StepContext
    except ImportError:  # allure-pytest not installed: nothing to record into
        yield call
        return
    step = StepContext(f"{verb}({', '.join(f'{k}={v!r}' for k, v in args.items())})",
                       {k: repr(v) for k, v in args.items()})
    with step:
        yield call
        if call.result is not None:
            with StepContext(f"returned {call.result!r}"[:200], {}):
                pass
