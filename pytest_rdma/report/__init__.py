"""Results per provider driver: records, waivers, the terminal report, JSON, JUnit and Allure.

Roles, one module each:
- record.py: the record of one check and how its outcome is classified (pure);
- recorder.py: where checks run: puts a record on every report, applies waivers;
- reproducers.py: a deviation's C and Python reproducers, written from its recorded calls;
- deviation_report.py: a deviation's failure text is its own, not a traceback;
- results.py: where results are written: assembles records from reports (xdist-safe);
- whole_checks.py: a Ctrl-C waits until the check whose teardown has begun is reported everywhere;
- terminal.py, jsonfile.py, junit.py, allure_writer.py: the reporters (allure_model.py: a record as an
  Allure result of allure-python-commons' model; links.py: citations as URLs; redact.py: no machine's paths in
  a message); beside_allure_pytest.py: with allure-pytest's --alluredir, its writer leaves our checks to ours;
- output_failures.py: an output that fails mid-run (a full disk) is one line, and the run exits 3;
- resume.py: in the lab, the check in progress on the host's disk, and the records of the boots before replayed;
- usage_error.py: a run stopped by a usage error still writes the JUnit and JSON asked for, saying why;
- compare.py, allure_config.py + allure_html.py (`pytest-rdma report`), waivers.py: after the run.

`register` is the plugin's one entry point (called from plugin.py).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from pytest_rdma import expectations, settings

__all__ = ["register"]


def register(config: pytest.Config) -> None:
    """Register the recorder everywhere, and the reporters only where results are written."""
    from pytest_rdma.report import deviation_report, resume
    from pytest_rdma.report.profile import Requirements
    from pytest_rdma.report.recorder import Recorder
    from pytest_rdma.report.whole_checks import WholeChecks

    options = settings.get(config)
    waivers = expectations.load(options.expectations)
    requirements = Requirements(options.require, options.source("require"), waivers)
    config.pluginmanager.register(Recorder(options, waivers, requirements), "rdma-recorder")
    config.pluginmanager.register(deviation_report, "rdma-deviation-report")
    config.pluginmanager.register(WholeChecks(), "rdma-whole-checks")
    allure_dirs = allure_directories(config, options)
    if hasattr(config, "workerinput"):
        resume.register(config, options, None)  # the lab's running file, written where checks run
        return  # an xdist worker: its records travel to the controller on the reports
    from pytest_rdma.report.results import Results
    from pytest_rdma.report.terminal import Summary

    results = Results(options.devices, config.hook, waivers)
    config.pluginmanager.register(results, "rdma-results")
    results.output_failures.reproducers = options.reproducers
    config.pluginmanager.register(results.output_failures, "rdma-output-failures")
    summary = Summary(results, waivers, options.strict, str(options.reproducers), requirements)
    config.pluginmanager.register(summary, "rdma-summary")
    if config.option.collectonly:
        return  # collecting writes nothing: no output need be writable (a read-only checkout)
    resume.register(config, options, results)  # in the lab: the running check, the boots before (resume.py)
    if options.json is not None:
        from pytest_rdma.report.jsonfile import JsonResults

        config.pluginmanager.register(JsonResults(options.json, results, summary, waivers.sources), "rdma-json")
    if options.junit is not None:
        from pytest_rdma.report.junit import JunitFile

        config.pluginmanager.register(JunitFile(options.junit, results, summary), "rdma-junit")
    for index, allure_dir in enumerate(allure_dirs):
        from pytest_rdma.report.allure_writer import AllureWriter

        writer = AllureWriter(allure_dir, results, options.reproducers, summary)
        config.pluginmanager.register(writer, "rdma-allure" if index == 0 else f"rdma-allure-{index}")


ALLURE_EXTRA = "pip install 'pytest-rdma[allure]'"


def allure_directories(config: pytest.Config, options: settings.Settings) -> list[Path]:
    """Where our Allure results go: --rdma-allure, and allure-pytest's --alluredir (each check once in each).

    With --alluredir, allure-pytest's writer leaves our checks to ours in every process (beside_allure_pytest.py).
    """
    alluredir = getattr(config.option, "allure_report_dir", None)
    wanted = [options.allure_dir] if options.allure_dir is not None else []
    if alluredir and not (wanted and wanted[0].resolve() == Path(alluredir).resolve()):
        wanted.append(Path(alluredir))
    if wanted and importlib.util.find_spec("allure_commons") is None:
        asked = "--rdma-allure" if options.allure_dir is not None else "--alluredir"
        raise pytest.UsageError(f"{asked}: Allure results need allure-python-commons; install it: {ALLURE_EXTRA}")
    if alluredir:
        from pytest_rdma.report import beside_allure_pytest

        labelling = beside_allure_pytest.BesideAllurePytest(config, Path(alluredir))
        config.pluginmanager.register(labelling, "rdma-alluredir")
    return wanted
