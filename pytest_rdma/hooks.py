"""pytest-rdma's hooks: where another plugin, or a conftest, adds a reporter or claim kinds.

Added with `pytest_addhooks` (plugin.py), as pytest-xdist adds its newhooks.py. The plugin's own
parts implement them as anyone else's would: the JSON, JUnit, Allure and terminal reporters receive
records through `pytest_rdma_record`, and the built-in kinds come through `pytest_rdma_kinds`
(kinds/load.py). Implement either in a conftest.py or in a plugin module (`-p`, an entry point)::

    def pytest_rdma_record(record):
        print(record["stable_id"], record["outcome"])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_rdma.kinds.registry import Kind
    from pytest_rdma.report.record import Record


@pytest.hookspec()
def pytest_rdma_record(record: Record) -> None:
    """A check's record is complete: its phases merged (docs/results-schema.md gives its fields).

    Called where results are written, once for each check: the only process, or under xdist the
    controller (never a worker), as each check's teardown is reported there, or at the session's end
    for a check cut short. A record is plain data; a reporter must not change it (the others read it
    too). An exception raised here stops the run, as one from any pytest hook does.
    """


@pytest.hookspec()
def pytest_rdma_kinds() -> Sequence[Kind]:
    """Return claim kinds to add to the catalogue's vocabulary (`pytest_rdma.kinds.registry.define`).

    Called once per process at configure, before the catalogue (with `rdma_catalogue_extra`) is
    validated, so a verb of the extra catalogue may use them. A name already taken by another kind
    is a usage error. Each kind declares its claims' data (`params=`, a frozen dataclass), which the
    validation checks every claim of the kind against.
    """
    return ()  # a spec's body never runs: the implementations' lists are what the hook returns
