"""Results per provider driver: outcomes, expectations, summary, JSON, JUnit and Allure.

Roles, one module each:
- record.py: the record of one check and how its outcome is classified (pure);
- recorder.py: where checks run: puts a record on every report, applies waivers;
- deviation_report.py: a deviation's failure text is its own, not a traceback;
- results.py: where results are written: assembles records from reports (xdist-safe);
- terminal.py, jsonfile.py, junit.py, allure_env.py, allure_labels.py: the reporters;
- compare.py, allure_html.py: after the run (the `pytest-rdma compare` command, the HTML report).

`add_options` and `register` are the plugin's only entry points (called from plugin.py).
"""

from __future__ import annotations

import pytest

from pytest_rdma import expectations
from pytest_rdma.report.options import add_options, settings

__all__ = ["add_options", "register"]


def register(config: pytest.Config) -> None:
    """Register the recorder everywhere, and the reporters asked for only where results are written."""
    from pytest_rdma.report import deviation_report
    from pytest_rdma.report.recorder import Recorder

    options = settings(config)
    waivers = expectations.load(options.expectations)
    config.pluginmanager.register(Recorder(options, waivers), "rdma-recorder")
    config.pluginmanager.register(deviation_report, "rdma-deviation-report")
    if hasattr(config, "workerinput"):
        return  # an xdist worker: its records travel to the controller on the reports
    from pytest_rdma.plugin import chosen_devices
    from pytest_rdma.report.results import Results
    from pytest_rdma.report.terminal import Summary

    results = Results(chosen_devices(config))
    config.pluginmanager.register(results, "rdma-results")
    config.pluginmanager.register(Summary(results, options.strict), "rdma-summary")
    if options.json is not None:
        from pytest_rdma.report.jsonfile import JsonResults

        config.pluginmanager.register(JsonResults(options.json, results, options.strict, waivers.sources),
                                      "rdma-json")
    if options.junit:
        from pytest_rdma.report.junit import JunitProperties

        config.pluginmanager.register(JunitProperties(results), "rdma-junit")
    if options.allure_dir is not None:
        from pytest_rdma.report.allure_env import AllureFiles

        config.pluginmanager.register(AllureFiles(options.allure_dir, results), "rdma-allure")
