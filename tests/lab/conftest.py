"""Shared by the lab's tests: the device the outer lab run was given, and warm inner runs."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_rdma import settings
from pytest_rdma.lab import warm, warm_client
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


@pytest.fixture(scope="session")
def warm_pytest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[warm.WarmPytest]:
    """One warm-start server for the session's inner runs (lab/warm.py), as the lab's runner has one per boot."""
    starter = warm.WarmPytest(sys.executable, tmp_path_factory.mktemp("warm"))
    yield starter
    starter.close()


@pytest.fixture(autouse=True)
def inner_runs_start_warm(request: pytest.FixtureRequest, warm_pytest: warm.WarmPytest) -> Iterator[None]:
    """pytester's `python -m pytest` subprocesses become lab/warm_client.py: a fork of the server, not a Python start
    and its imports (about 4 s each under TCG, some seventy times in this directory). The inner runs still are
    processes of their own, with pytester's arguments, directory and environment; a run whose environment changes
    how Python starts is started cold by the server (warm.starts_differently)."""
    if "pytester" not in request.fixturenames or not warm_pytest.ready():
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(warm_client.SOCKET_ENV, warm_pytest.path)
        patch.setattr(pytest.Pytester, "_getpytestargs", lambda _self: (sys.executable, "-S", CLIENT))
        yield


CLIENT = str(Path(warm_client.__file__))
