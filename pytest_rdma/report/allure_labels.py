"""Allure at run time: suites by driver / verb / claim, and each check as a step.

Used only when --alluredir is given (allure-pytest is then active in the same process).
Labels set here replace allure-pytest's default suites (it adds its own only when a test
has none), so the report tree reads driver > verb > claim.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_rdma.outcomes import Deviation, Unsupported


def label_test(info: Mapping[str, Any]) -> None:
    import allure

    identity = info.get("identity") or {}
    allure.dynamic.parent_suite(info.get("driver") or "no device")
    allure.dynamic.suite(info.get("verb") or info.get("test") or "")
    allure.dynamic.sub_suite(info.get("claim") or info.get("stable_id") or "")
    allure.dynamic.label("driver", info.get("driver") or "")
    allure.dynamic.label("device", info.get("device") or "")
    if info.get("claim_text"):
        allure.dynamic.description(f"{info['claim_text']}\n\n[{info.get('ref', '')}]")
    for key in ("firmware", "node_type", "transport", "kernel", "rdma_core"):
        if identity.get(key):
            allure.dynamic.parameter(f"{key}", identity[key], excluded=True)


def _step(title: str, params: Mapping[str, Any]) -> Any:
    # allure.step() gives a plain context-manager step no parameters; StepContext takes them.
    from allure_commons._allure import StepContext

    return StepContext(title, {str(k): str(v) for k, v in params.items()})


def _exit(step: Any, exc: BaseException | None) -> None:
    # No traceback: the step keeps its status and message, and the test result already carries
    # the check's trace. Given one, allure formats it again for each step, reading every frame's
    # source file: the largest cost of a skipped or waived check in the lab (issue 6).
    step.__exit__(type(exc) if exc else None, exc, None)


class CheckStep:
    """The check as one step (its arguments: the case parameters and device), ending with a
    child step that states the result: conforms, or what deviated."""

    def __init__(self, info: Mapping[str, Any]) -> None:
        args = dict(info.get("params") or {})
        args["device"] = info.get("device", "")
        title = f"{info.get('verb') or info.get('test')}: {info.get('case_id') or info.get('stable_id')}"
        self.step = _step(title, args)
        self.step.__enter__()

    def finish(self, exc: BaseException | None) -> None:
        if exc is None:
            title, params = "result: conforms", {}
        elif isinstance(exc, Deviation):
            title = f"result: deviates from {exc.ref}"
            params = {"expected": exc.expected, "observed": exc.observed, **exc.details}
        elif isinstance(exc, Unsupported):
            title, params = f"result: unsupported ({exc.capability})", {}
        else:
            title, params = f"result: {type(exc).__name__}", {"message": str(exc)[:500]}
        result = _step(title, params)
        result.__enter__()
        _exit(result, exc)
        _exit(self.step, exc)
