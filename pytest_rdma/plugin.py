"""pytest-rdma's pytest plugin: settings, device selection, the suite, the report header.

Hooks only: each role lives in its own module (settings.py, generate.py, fixtures.py,
report/, guard/). Errors a user can make (no device named, a device that is not there, a
bad option value) are usage errors, pytest's exit 4, in one line that says what to do.
"""

from __future__ import annotations

import gc
import importlib
import os
from pathlib import Path

import pytest

from pytest_rdma import generate, guard, hooks, outputs, report, settings
from pytest_rdma.catalogue import validated as validated_sources
from pytest_rdma.catalogue.index import Catalogue
from pytest_rdma.catalogue.model import Verb
from pytest_rdma.catalogue.validate import CatalogueError, validate
from pytest_rdma.explore import hooks as explore_hooks
from pytest_rdma.kinds import load as builtin_kinds
from pytest_rdma.kinds.load import kind_behaviours, kind_schemas, known_kinds, validation_key
from pytest_rdma.kinds.registry import KINDS, install
from pytest_rdma.report import usage_error
from pytest_rdma.selection import device_list, no_device_error, validate_devices
from pytest_rdma.user_claims import MARKER_HELP

SUITE_PACKAGE = "pytest_rdma.suites"

# Python's cyclic collector walks every object it tracks at each full collection, and a pytest start makes
# about 100,000 that live until the process ends and are never garbage: the modules imported
# above, the catalogue, one item per check with its parameters. A collection of the suite walked them four
# times, two of them pytest's own at unconfigure. gc.freeze() takes every object made so far out
# of the collector's reach, here and again at the session's start and after collection; what a check makes
# is collected as before. A cycle among the frozen objects that becomes garbage stays until the process ends.
gc.freeze()


def suite_dir() -> Path:
    """Where the packaged suite is (the checkout's suites/, or site-packages/pytest_rdma/suites)."""
    spec = importlib.util.find_spec(SUITE_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise pytest.UsageError(f"the packaged suite {SUITE_PACKAGE} is missing: reinstall pytest-rdma")
    return Path(list(spec.submodule_search_locations)[0])


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hooks)


def pytest_addoption(parser: pytest.Parser) -> None:
    settings.add_options(parser)


def validate_ports(names: tuple[str, ...], catalogue: Catalogue, port: int, gid_index: int) -> None:
    """A usage error, before any check runs, for a port that is absent or down or a GID index that is empty."""
    from pytest_rdma.provider.describe import remember
    from pytest_rdma.provider.device import DeviceNotUsable, DeviceUnderTest

    for name in names:
        try:
            dut = DeviceUnderTest(name, catalogue, port, gid_index)
        except DeviceNotUsable as exc:
            raise pytest.UsageError(str(exc)) from None
        remember(dut.identity)  # the report header's, without opening the device a second time
        dut.close()


def load_extra(specs: tuple[str, ...]) -> tuple[Verb, ...]:
    """The Verb records named by `specs` ("module.path:NAME")."""
    verbs: list[Verb] = []
    for spec in specs:
        module_name, _, attr = spec.partition(":")
        try:
            value = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError, ValueError) as exc:
            raise pytest.UsageError(f"rdma_catalogue_extra = {spec!r}: cannot load it ({exc})") from None
        found = [value] if isinstance(value, Verb) else value
        if not isinstance(found, (list, tuple)) or not found or not all(isinstance(v, Verb) for v in found):
            raise pytest.UsageError(f"rdma_catalogue_extra = {spec!r}: is neither a Verb nor a sequence of Verbs")
        verbs += found
    return tuple(verbs)


def catalogue_of(options: settings.Settings, validated: bool = True) -> Catalogue:
    """pytest_rdma.verbs plus the extra descriptions, validated together (unless `validated` is False:
    an xdist worker, whose controller validated the same catalogue before starting it)."""
    from pytest_rdma.verbs import CATALOGUE

    extra = load_extra(options.catalogue_extra)
    verbs = CATALOGUE + extra
    # Validated once per version of the catalogue's sources (catalogue/validated.py), unless extended.
    key = "" if extra else validated_sources.sources_key(validation_key())
    if validated and not (key and validated_sources.already_validated(key)):
        try:
            validate(verbs, kinds=known_kinds(), schemas=kind_schemas(), behaviours=kind_behaviours())
        except CatalogueError as exc:
            raise pytest.UsageError(f"rdma_catalogue_extra: {exc}" if extra else str(exc)) from None
        if key:
            validated_sources.remember(key)
    return Catalogue.of(verbs)


def targets_suite(config: pytest.Config) -> bool:
    """Whether the run's arguments name the packaged suite (its directory, a file in it, or its package)."""
    here = suite_dir().resolve()
    for arg in config.args:
        path = Path(str(arg).split("::")[0])
        if str(arg).startswith(SUITE_PACKAGE):
            return True
        try:
            resolved = (config.invocation_params.dir / path).resolve()
        except OSError:
            continue
        if resolved == here or here in resolved.parents:
            return True
    return False


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    try:
        configure(config)
    except pytest.UsageError as exc:
        # A CI dashboard shows a failed run, not "no report": the JUnit and JSON asked for say why.
        if not hasattr(config, "workerinput"):
            usage_error.write_reports(config, exc)
        raise


def configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "rdma_verb(name): the verb a generated check exercises")
    config.addinivalue_line(
        "markers",
        "rdma_process: a check about the process running it (unprivileged, memlock): the lab runs it as nobody",
    )
    config.addinivalue_line("markers", MARKER_HELP)
    options = settings.read(config)
    config.stash[settings.SETTINGS] = options
    add_kinds(config)
    catalogue = catalogue_of(options, validated=not hasattr(config, "workerinput"))
    before = generate.activate(catalogue)
    # A session in the same process later (pytester's in-process runs) starts from what was active.
    config.add_cleanup(lambda: generate.activate(before))  # type: ignore[arg-type]  # its return value is unused
    # `pytest --rdma-dev=rxe0` with no test path (and no testpaths setting): the packaged suite.
    if options.devices and config.args_source == pytest.Config.ArgsSource.INVOCATION_DIR:
        config.args[:] = [str(suite_dir())]
    # Collecting needs no device: the case ids name the devices given, but none is opened or checked.
    if not hasattr(config, "workerinput") and not config.option.collectonly:  # workers inherit the checks
        if not options.devices and targets_suite(config):
            raise no_device_error()
        # The peer is checked as the devices are: a name this host lists, its port up, its GID there
        # (a peer on another host is checked there, when the first two-device check opens it).
        local_peer = options.peer if options.peer and not options.peer_host else None
        chosen = options.devices + ((local_peer,) if local_peer else ())
        if options.peer_host and not options.peer:
            raise pytest.UsageError(
                f"--rdma-peer-host {options.peer_host}: give --rdma-peer NAME too, the device of that host to send to"
            )
        validate_devices(options.devices)
        if local_peer:
            validate_devices((local_peer,), flag="--rdma-peer")
        if starts_workers(config):
            # Opening each device takes a good part of a second under an emulated CPU: an xdist controller
            # checks the ports once its workers are starting (pytest_collection), so both overlap; no check
            # runs before the controller's collection hook has returned.
            config.stash[PORTS_PENDING] = (chosen, catalogue, options.port, options.gid_index)
        else:
            validate_ports(chosen, catalogue, options.port, options.gid_index)
        # Collecting writes nothing, so its outputs need not be writable (a read-only checkout).
        outputs.check(config, options)
    from pytest_rdma import fixtures, user_fixtures

    config.pluginmanager.register(fixtures, "rdma-fixtures")
    config.pluginmanager.register(user_fixtures, "rdma-user-fixtures")
    report.register(config)
    guard.register(config)
    explore_hooks.register(config)


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    gc.freeze()  # what every plugin's configure made (see gc.freeze() above); an xdist controller collects nothing


def pytest_collection_finish(session: pytest.Session) -> None:
    gc.freeze()  # the items and their parameters (see gc.freeze() above)


PORTS_PENDING = pytest.StashKey[tuple[tuple[str, ...], Catalogue, int, int]]()


def starts_workers(config: pytest.Config) -> bool:
    """Whether this process is an xdist controller that will start workers (-n N, --tx; xdist's own
    pytest_cmdline_main has turned -n into a --dist mode by now)."""
    return not hasattr(config, "workerinput") and getattr(config.option, "dist", "no") != "no"


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> None:
    """The xdist controller's port check, deferred from pytest_configure (see there): still before any check."""
    pending = session.config.stash.get(PORTS_PENDING, None)
    if pending is None:
        return
    del session.config.stash[PORTS_PENDING]
    try:
        validate_ports(*pending)
    except pytest.UsageError as error:
        session.config.stash[STOPPED] = error  # the reports say why, at unconfigure (as for a test wanting a device)
        raise


def add_kinds(config: pytest.Config) -> None:
    """Every plugin's kinds (pytest_rdma_kinds, the built-in ones among them), before the catalogue is validated."""
    if not config.pluginmanager.has_plugin("rdma-kinds"):
        config.pluginmanager.register(builtin_kinds, "rdma-kinds")
    try:
        returned = config.hook.pytest_rdma_kinds()  # one sequence per plugin (a lone Kind is taken too)
        added = install(kind for kinds in returned for kind in (kinds if isinstance(kinds, (list, tuple)) else [kinds]))
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None

    # In-process sessions (pytester) share the registry: a plugin's kinds last as long as its session.
    def remove() -> None:
        for name in added:
            KINDS.pop(name, None)

    config.add_cleanup(remove)


def pytest_report_header(config: pytest.Config) -> list[str]:
    options = settings.get(config)
    # Where each setting that is not its default came from: a CI's variable and a project's ini line can
    # both set one, and the run says which won.
    given = [options.header_line()] if options.given else []
    if not options.devices:
        return [*given, f"rdma: no device chosen (--rdma-dev NAME); devices on this host: {device_list()}"]
    if config.option.collectonly:
        return [*given, f"rdma: collecting for {', '.join(options.devices)} (no device is opened)"]
    from pytest_rdma.provider.describe import describe

    lines = [*given, f"rdma: port {options.port}, gid index {options.gid_index}"]
    explored = explore_hooks.header_line(config)
    if explored:
        lines.append(explored)
    if options.peer:
        where = f" on {options.peer_host}" if options.peer_host else ""
        lines.append(f"rdma: peer {options.peer}{where} (two-device checks send from each device to it)")
    from pytest_rdma.provider.device import DeviceNotUsable

    for name in options.devices:
        try:
            lines.append("rdma: " + describe(name).header_line())
        except DeviceNotUsable as exc:  # an xdist controller checks the ports after the header: its error follows
            lines.append(f"rdma: {name}: {exc}")
    return lines


STOPPED = pytest.StashKey[pytest.UsageError]()


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test of the user's own that asks for rdma_dut when no device was named: a usage error before any test
    runs (under xdist the workers collect, and the fixture says the same for each such test)."""
    if config.option.collectonly or settings.get(config).devices or hasattr(config, "workerinput"):
        return
    wanting = next((item for item in items if _wants_a_device(item)), None)
    if wanting is not None:
        error = pytest.UsageError(f"{wanting.nodeid} uses the fixture rdma_dut, but {no_device_error()}")
        config.stash[STOPPED] = error
        raise error


def _wants_a_device(item: pytest.Item) -> bool:
    """The item asks for rdma_dut and names no device for it itself (a parametrization of its own)."""
    callspec = getattr(item, "callspec", None)
    named = callspec is not None and "rdma_dut" in callspec.params
    return "rdma_dut" in getattr(item, "fixturenames", ()) and not named


def pytest_unconfigure(config: pytest.Config) -> None:
    # After every reporter's session end, which wrote its (empty) files: they say why the run stopped.
    stopped = config.stash.get(STOPPED, None)
    if stopped is not None:
        usage_error.write_reports(config, stopped)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "rdma_dut" not in metafunc.fixturenames:
        return
    names = settings.get(metafunc.config).devices
    if names:
        metafunc.parametrize("rdma_dut", names, indirect=True, scope="session", ids=list(names))


_first_test_marked = False


def pytest_runtest_logstart(nodeid: str, location: tuple) -> None:
    # The lab measures cold start to the first test from the host: it watches for this file.
    # Checked once per process, not per test: in the lab each check is a round trip to the share.
    global _first_test_marked
    marks = os.environ.get("PYTEST_RDMA_LAB_MARKS")
    if marks and not _first_test_marked:
        _first_test_marked = True
        first = os.path.join(marks, "first-test")
        if not os.path.exists(first):
            with open(first, "w") as handle:
                handle.write(nodeid + "\n")
