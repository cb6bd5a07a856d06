"""Shared by the lab's tests: the device the outer lab run was given."""

from __future__ import annotations

import pytest

from pytest_rdma.provider.identity import sysfs_devices


@pytest.fixture(scope="module")
def device(request: pytest.FixtureRequest) -> str:
    """The first --rdma-dev of the outer run (rxe0 when none): the inner sessions test this one."""
    name = (request.config.getoption("rdma_dev") or ["rxe0"])[0]
    if name not in sysfs_devices():
        where = request.path.relative_to(request.config.rootpath)
        pytest.fail(f"these tests run in the lab (pytest-rdma lab -- {where}); no {name} here")
    return name
