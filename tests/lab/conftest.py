"""Shared by the lab's tests: the device the outer lab run was given."""

from __future__ import annotations

import pytest

from pytest_rdma import settings
from pytest_rdma.provider.identity import sysfs_devices


@pytest.fixture(scope="module")
def device(request: pytest.FixtureRequest) -> str:
    """The first --rdma-dev of the outer run (rxe0 when none): the inner sessions test this one."""
    name = (settings.get(request.config).devices or ("rxe0",))[0]
    if name not in sysfs_devices():
        where = request.path.relative_to(request.config.rootpath)
        pytest.fail(f"these tests run in the lab (pytest-rdma lab -- {where}); no {name} here")
    return name


@pytest.fixture(autouse=True)
def inner_runs_collect_their_own_files(request: pytest.FixtureRequest) -> None:
    """An inner `pytest --rdma-dev X` given no path collects the packaged suite, as a user's would;
    the lab's tests run files of their own, so their projects name them with testpaths."""
    if "pytester" in request.fixturenames:
        request.getfixturevalue("pytester").makeini("[pytest]\ntestpaths = .\n")
