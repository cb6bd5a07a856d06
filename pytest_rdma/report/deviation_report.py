"""A deviation is reported as what it is, not as a Python traceback.

A `Deviation` already carries what a reader needs: what was expected and what the device did;
its record adds the source and the reproducers. pytest would also render the traceback of
every frame from the test function down to the `raise`, reading and parsing each frame's
source file: in the lab, under an emulated CPU, that cost more than the check itself
(benchmarks/). So the failure's representation is the deviation's own text and where it was
raised, as a plain string (public pytest API: a report's longrepr may be a str).

`--tb=long` or `--full-trace` bring pytest's traceback back, for debugging a check.
"""

from __future__ import annotations

import copy

import pytest

from pytest_rdma.outcomes import Deviation


def raised_at(excinfo: pytest.ExceptionInfo[BaseException]) -> tuple[str, int]:
    """The innermost frame's file and line, read from the traceback object (no file access)."""
    tb = excinfo.tb
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code.co_filename, tb.tb_lineno


def wants_traceback(config: pytest.Config) -> bool:
    return config.getoption("tbstyle", "auto") == "long" or bool(config.getoption("fulltrace", False))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> pytest.TestReport | None:
    excinfo = call.excinfo
    if excinfo is None or not isinstance(excinfo.value, Deviation) or wants_traceback(item.config):
        return None
    deviation = excinfo.value
    path, lineno = raised_at(excinfo)
    # A plain str, not a subclass: xdist sends a worker's report to the controller, and its
    # serialiser refuses any type it does not know (a str subclass ended the run with INTERNALERROR).
    text = f"{deviation}\n{path}:{lineno}: raised here"
    # pytest takes a call whose excinfo is not an ExceptionInfo as the representation itself; the
    # hook's own `call` keeps the exception, which xfail handling (waivers) and the recorder read.
    plain = copy.copy(call)
    plain.excinfo = text  # type: ignore[assignment]  # on purpose: see the comment above
    return pytest.TestReport.from_item_and_call(item, plain)
