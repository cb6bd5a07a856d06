"""The exploration's place in a pytest session: the controller explores before any check is collected.

Each device under test is explored in turn (session.py), in the controller, before xdist starts its workers
and before the suite is collected: the findings are the suite's `test_explore[...]` checks (items.py), so
every process must know them at collection. A worker gets the controller's explorations in its workerinput.
"""

from __future__ import annotations

import importlib.util
import json
import random
import tempfile
from pathlib import Path

import pytest

from pytest_rdma import settings
from pytest_rdma.explore import items
from pytest_rdma.explore.session import Exploration, explore

WORKER_KEY = "rdma_explore"
SEED = pytest.StashKey[int]()


def register(config: pytest.Config) -> None:
    """Explore in the controller when --rdma-explore asks; in a worker, take the controller's explorations."""
    options = settings.get(config)
    if not options.explore:
        return
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        explored = json.loads(workerinput.get(WORKER_KEY, "[]"))
        items.activate([Exploration.from_dict(data) for data in explored])
        return
    if importlib.util.find_spec("hypothesis") is None:
        raise pytest.UsageError(
            "rdma_explore: the exploration needs Hypothesis, which is not installed: pip install 'pytest-rdma[explore]'"
        )
    # A new seed unless one is given: printed in the header, kept in every explore check's record.
    config.stash[SEED] = options.explore_seed if options.explore_seed is not None else random.randrange(1 << 31)
    config.pluginmanager.register(Controller(), "rdma-explore")
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(ToWorkers(), "rdma-explore-workers")


def header_line(config: pytest.Config) -> str:
    options = settings.get(config)
    if not options.explore or SEED not in config.stash:
        return ""
    return f"rdma: explore {options.explore} s per device, seed {config.stash[SEED]}"


def workdir(options: settings.Settings) -> Path:
    """Where the explorer's journal and output go: beside the JSON results, else a new temporary directory
    (never the user's tree unasked)."""
    if options.json is not None:
        return options.json.parent / "explore"
    return Path(tempfile.mkdtemp(prefix="pytest-rdma-explore-"))


class Controller:
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        config = session.config
        if config.option.collectonly:
            return
        options = settings.get(config)
        seed = config.stash[SEED]
        where = workdir(options)
        terminal = config.pluginmanager.get_plugin("terminalreporter")
        done: list[Exploration] = []
        for device in options.devices:
            if terminal is not None:
                terminal.write_line(f"rdma: exploring {device} for {options.explore} s (seed {seed}) ...")
            found = explore(device, options.explore, seed, where, port=options.port, gid_index=options.gid_index)
            done.append(found)
            if terminal is not None:
                terminal.write_line(f"rdma: explored {found.summary()}")
        items.activate(done)


class ToWorkers:
    def pytest_configure_node(self, node: object) -> None:
        explored = [exploration.as_dict() for exploration in items.active()]
        node.workerinput[WORKER_KEY] = json.dumps(explored)  # type: ignore[attr-defined]  # an xdist WorkerController
