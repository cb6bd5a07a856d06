"""pytest-rdma's Allure results beside allure-pytest's (`--alluredir DIR`): each check in DIR once, ours.

Our writer (allure_writer.py) writes every check's result into DIR, and allure-pytest's writer
leaves our checks out; the other tests of the run are allure-pytest's as usual. Why ours and not
allure-pytest's result, fed through `allure.dynamic`:
- a check that kills its xdist worker never reaches allure-pytest (its worker is gone); only the
  controller has its record (results.py), so only our writer can write it;
- a check's verdict (waived, unsupported from a named attribute, not exercised, a required
  capability) is decided from the record, not from pytest's pass/fail/skip that allure-pytest maps;
- one writer of our checks keeps the manifests and the `framework = pytest-rdma` label by which the
  release gate judges our checks in a folder shared with other tools (allure_gate.py).

How: each of our items carries allure-pytest's own `allure_label` mark (framework = pytest-rdma),
so allure-pytest's result of it carries our label; allure-pytest's `AllureFileLogger` in
allure-python-commons' plugin manager is swapped, in every process (xdist workers too), for one
that leaves such results unwritten. At the end the original is put back, so allure-pytest's own
cleanup unregisters what it registered.
"""

from __future__ import annotations

from pathlib import Path

import allure_commons
import pytest
from allure_commons.logger import AllureFileLogger
from allure_commons.model2 import TestResult

from pytest_rdma.report.allure_config import FRAMEWORK
from pytest_rdma.report.phase import is_rdma_item

LABEL_MARK = "allure_label"  # allure-pytest's mark: a label on the item's result
FRAMEWORK_LABEL = "framework"


def alluredir(config: pytest.Config) -> Path | None:
    """allure-pytest's results directory, when allure-pytest is installed and asked to write (--alluredir)."""
    directory = getattr(config.option, "allure_report_dir", None)
    return Path(directory) if directory else None


def is_ours(labels: list[tuple[str, str]]) -> bool:
    """Whether a result's labels (name, value) say pytest-rdma writes it."""
    return (FRAMEWORK_LABEL, FRAMEWORK) in labels


class LeavingOursOut(AllureFileLogger):
    """allure-pytest's file writer, less the results of our checks (our writer writes those)."""

    @allure_commons.hookimpl  # an override is no hook implementation until marked again
    def report_result(self, result: TestResult) -> None:
        if not is_ours([(label.name, label.value) for label in result.labels]):
            super().report_result(result)


class BesideAllurePytest:
    """Registered in every process (xdist workers too) when --alluredir is given."""

    def __init__(self, config: pytest.Config, directory: Path) -> None:
        self.config = config
        self.directory = directory

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            if is_rdma_item(item):
                item.add_marker(getattr(pytest.mark, LABEL_MARK)(FRAMEWORK, label_type=FRAMEWORK_LABEL))

    def pytest_sessionstart(self) -> None:
        """After every plugin's configure, allure-pytest's among them: its writer is swapped for ours."""
        manager = allure_commons.plugin_manager
        theirs = [plugin for plugin in manager.get_plugins() if type(plugin) is AllureFileLogger]
        if not theirs:
            return
        ours = LeavingOursOut(self.directory)
        for plugin in theirs:
            manager.unregister(plugin)
        manager.register(ours)

        def restore() -> None:  # allure-pytest's own cleanup unregisters what it registered
            manager.unregister(ours)
            for plugin in theirs:
                manager.register(plugin)

        self.config.add_cleanup(restore)
