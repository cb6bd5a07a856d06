"""Every option of pytest-rdma, read once into one frozen `Settings`, kept in pytest's stash.

One table (`OPTIONS`) defines each setting once: its command-line flag, ini name, environment
variable, parser, default and help. One precedence for all of them: command line, then the
environment, then the ini file (pytest.ini, pyproject.toml, tox.ini, setup.cfg of any project),
then the default, as pytest-django and pytest-timeout order theirs: a CI job's RDMA_* variables
override a project's checked-in file, and its own command line overrides both. The report header
says where each setting that is not its default came from (`Settings.header_line`). A value that
does not parse is a usage error (pytest's exit 4) in one line that names the setting, where it
came from, the value, and what to give instead.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict, Union, cast

import pytest

from pytest_rdma import capabilities

GUARD_MODES = ("fail", "report", "off")
# An option's value once read: what its parse function returns, or its default.
Value = Union[tuple[str, ...], int, bool, str, None]


def _names(values: Sequence[str]) -> tuple[str, ...]:
    """Device names: repeated, or comma separated ("rxe0,siw0"); order kept, duplicates dropped."""
    flat = [name.strip() for value in values for name in value.split(",") if name.strip()]
    return tuple(dict.fromkeys(flat))


def _name(values: Sequence[str]) -> str:
    """One device name (a peer is one device, whatever the number of devices under test)."""
    text = values[-1].strip()
    if not text or "," in text:
        raise ValueError("not one device name (give one, e.g. rxe1)")
    return text


GATEWAY_KINDS = ("ssh", "popen", "socket", "vagrant_ssh")


def _gateway(values: Sequence[str]) -> str:
    """An execnet gateway spec ("ssh=root@host2//python=python3"): it must say how to reach the host."""
    text = values[-1].strip()
    first = text.split("//", 1)[0].split("=", 1)[0]
    if first not in GATEWAY_KINDS:
        raise ValueError(
            "not an execnet gateway spec (give e.g. ssh=root@host2//python=python3, socket=HOST:PORT, or "
            "popen//python=PYTHON for another process of this host)"
        )
    return text


def _port(values: Sequence[str]) -> int:
    text = values[-1].strip()
    if not text.isdigit() or not 1 <= int(text) <= 255:
        raise ValueError("not a port number (give an integer from 1 to 255; ports are numbered from 1)")
    return int(text)


def _gid_index(values: Sequence[str]) -> int:
    text = values[-1].strip()
    if not text.isdigit():
        raise ValueError("not a GID table index (give an integer from 0 up)")
    return int(text)


def _bool(values: Sequence[str]) -> bool:
    text = values[-1].strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off", ""):
        return False
    raise ValueError("not a boolean (give true or false)")


def _mode(values: Sequence[str]) -> str:
    text = values[-1].strip().lower()
    if text not in GUARD_MODES:
        raise ValueError(f"not a guard mode (give one of {', '.join(GUARD_MODES)})")
    return text


def _path(values: Sequence[str]) -> str:
    text = values[-1].strip()
    if not text:
        raise ValueError("empty path")
    return text


def _seconds(values: Sequence[str]) -> int:
    text = values[-1].strip()
    if not text.isdigit():
        raise ValueError("not a number of seconds (give an integer from 0 up; 0: no exploration)")
    return int(text)


def _limit(values: Sequence[str]) -> int:
    text = values[-1].strip()
    if not text.isdigit():
        raise ValueError("not a number of seconds (give an integer from 0 up; 0: no limit)")
    return int(text)


def _seed(values: Sequence[str]) -> int:
    text = values[-1].strip()
    if not text.isdigit():
        raise ValueError("not a seed (give an integer from 0 up)")
    return int(text)


def _paths(values: Sequence[str]) -> tuple[str, ...]:
    return tuple(path.strip() for value in values for path in value.split(",") if path.strip())


@dataclass(frozen=True)
class Option:
    name: str  # the Settings field
    flag: str  # "--rdma-port"
    ini: str  # "rdma_port"
    env: str  # "RDMA_PORT"
    parse: Callable[[Sequence[str]], Value]
    default: Value
    help: str
    metavar: str = ""
    many: bool = False  # repeatable on the command line, a line list in ini files, comma separated in env
    switch: bool = False  # a flag without a value (--rdma-strict)
    # Earlier names of the environment variable, still read after `env` (scripts already set them).
    env_aliases: tuple[str, ...] = ()


OPTIONS: tuple[Option, ...] = (
    Option(
        "devices",
        "--rdma-dev",
        "rdma_devices",
        "RDMA_DEV",
        _names,
        (),
        "RDMA device to test, e.g. rxe0 (repeatable, or comma separated: every device check runs once per "
        "device); without a test path the packaged suite runs",
        "NAME",
        many=True,
    ),
    Option(
        "peer",
        "--rdma-peer",
        "rdma_peer",
        "RDMA_PEER",
        _name,
        None,
        "a second RDMA device of this host that the device under test reaches (rxe on the other end of a veth, "
        "a second port's device): the data path's two-device checks send to it; without it they are not exercised",
        "NAME",
    ),
    Option(
        "peer_host",
        "--rdma-peer-host",
        "rdma_peer_host",
        "RDMA_PEER_HOST",
        _gateway,
        None,
        "the host --rdma-peer's device is on, as an execnet gateway spec (ssh=root@host2//python=python3): the "
        "two-device checks make their receiving side in a process there, which needs pytest-rdma installed",
        "SPEC",
    ),
    Option("port", "--rdma-port", "rdma_port", "RDMA_PORT", _port, 1, "port of the device to use (default 1)", "N"),
    Option(
        "gid_index",
        "--rdma-gid-index",
        "rdma_gid_index",
        "RDMA_GID_INDEX",
        _gid_index,
        0,
        "GID table index for address vectors (default 0)",
        "N",
    ),
    Option(
        "expectations",
        "--rdma-expectations",
        "rdma_expectations",
        "RDMA_EXPECTATIONS",
        _paths,
        None,
        "expected deviations: a file or a directory of <driver>.toml (repeatable; default: those shipped "
        "with pytest-rdma; 'none' for none)",
        "DIR|FILE",
        many=True,
    ),
    Option(
        "strict",
        "--rdma-strict",
        "rdma_strict",
        "RDMA_STRICT",
        _bool,
        False,
        "CI gate: a new deviation fails the run, and so does a waived check that now conforms",
        switch=True,
    ),
    Option(
        "require",
        "--rdma-require",
        "rdma_require",
        "RDMA_REQUIRE",
        capabilities.names,
        (),
        "a capability the device must advertise (repeatable, or comma separated; e.g. srq, ud, mw2, atomics: "
        "see the README's vocabulary): a check unsupported for its lack fails the run",
        "NAME",
        many=True,
    ),
    Option(
        "json",
        "--rdma-json",
        "rdma_json",
        "RDMA_JSON",
        _path,
        None,
        "write results as JSON to PATH (and one JSON line per result to PATH + 'l' while running)",
        "PATH",
    ),
    Option(
        "junit",
        "--rdma-junit",
        "rdma_junit",
        "RDMA_JUNIT",
        _path,
        None,
        "write JUnit XML for CI dashboards to PATH: one testsuite per device, classname <driver>.<verb>, "
        "properties per check",
        "PATH",
    ),
    Option(
        "allure",
        "--rdma-allure",
        "rdma_allure",
        "RDMA_ALLURE",
        _path,
        None,
        "write Allure results to DIR (one per check, with its man page links, verb calls as steps and a "
        "deviation's reproducers attached); 'pytest-rdma report DIR... --output HTML_DIR' builds the report",
        "DIR",
    ),
    Option(
        "reproducers",
        "--rdma-reproducers",
        "rdma_reproducers",
        "RDMA_REPRODUCERS",
        _path,
        None,
        "directory for the C and Python reproducers of deviations (default: 'reproducers' beside "
        "--rdma-json, else ./rdma-reproducers)",
        "DIR",
    ),
    Option(
        "confirm",
        "--rdma-confirm",
        "rdma_confirm",
        "RDMA_CONFIRM",
        _bool,
        False,
        "build each deviation's C reproducer (cc, libibverbs-dev) and run it: the result says whether it "
        "reproduced outside Python (the lab sets it)",
        switch=True,
    ),
    Option(
        "leaks",
        "--rdma-leaks",
        "rdma_leaks",
        "RDMA_LEAKS",
        _mode,
        "fail",
        "around each device check, compare this process's kernel objects (pd/cq/qp/mr/ctx/srq/cm_id) before "
        "and after: fail, report or off (default fail)",
        "MODE",
    ),
    Option(
        "kernel_log",
        "--rdma-kernel-log",
        "rdma_kernel_log",
        "RDMA_KERNEL_LOG",
        _mode,
        "report",
        "scan the kernel log around each check for WARNING, BUG, Oops, KASAN and lockdep reports: fail, "
        "report or off (default report; the lab sets fail)",
        "MODE",
    ),
    Option(
        "catalogue_extra",
        "--rdma-catalogue-extra",
        "rdma_catalogue_extra",
        "RDMA_CATALOGUE_EXTRA",
        _paths,
        (),
        "extra verb descriptions to generate checks from: 'module.path:NAME' (a Verb or a sequence of "
        "Verbs; repeatable)",
        "MODULE:NAME",
        many=True,
    ),
    Option(
        "explore",
        "--rdma-explore",
        "rdma_explore",
        "RDMA_EXPLORE",
        _seconds,
        0,
        "explore each device for SECONDS with sequences of verb calls generated from the catalogue's contracts "
        "(Hypothesis, under the guards; each finding becomes a check test_explore[...]); default 0: off",
        "SECONDS",
        env_aliases=("PYTEST_RDMA_EXPLORE",),
    ),
    Option(
        "explore_seed",
        "--rdma-explore-seed",
        "rdma_explore_seed",
        "RDMA_EXPLORE_SEED",
        _seed,
        None,
        "the exploration's seed: the same seed gives the same sequences (default: a new one, printed in the "
        "header and the results)",
        "N",
        env_aliases=("PYTEST_RDMA_EXPLORE_SEED",),
    ),
    Option(
        "hang_limit",
        "--rdma-hang-limit",
        "rdma_hang_limit",
        "RDMA_HANG_LIMIT",
        _limit,
        300,
        "in the lab: a check that has not finished after SECONDS (plus --rdma-explore's) is a hang of the "
        "guest; the lab ends the VM, records the check as a kernel fault (hang) and goes on after a new boot "
        "(default 300; 0: no limit)",
        "SECONDS",
    ),
)


COMMAND_LINE, ENVIRONMENT, INI = "command line", "environment", "ini file"


@dataclass(frozen=True)
class Origin:
    """Where a setting's value came from."""

    kind: str  # COMMAND_LINE, ENVIRONMENT or INI
    key: str  # the flag, the variable or the ini name
    file: str = ""  # the ini file's name

    @property
    def where(self) -> str:
        """For a message about the value: "command line --rdma-port", "environment RDMA_PORT", "ini file tox.ini"."""
        if self.kind == INI:
            return f"{INI} {self.file}" if self.file else INI
        return f"{self.kind} {self.key}"

    @property
    def short(self) -> str:
        """For the report header: "command line", "env RDMA_LEAKS", "ini rdma_port in tox.ini"."""
        if self.kind == COMMAND_LINE:
            return COMMAND_LINE
        if self.kind == ENVIRONMENT:
            return f"env {self.key}"
        return f"ini {self.key}" + (f" in {self.file}" if self.file else "")


@dataclass(frozen=True)
class Given:
    """A setting given somewhere rather than left at its default: its text there, and where."""

    name: str
    text: str
    origin: Origin


@dataclass(frozen=True)
class Settings:
    devices: tuple[str, ...]
    peer: str | None
    peer_host: str | None
    port: int
    gid_index: int
    expectations: tuple[str, ...] | None  # None: the shipped files; (): no waivers at all
    strict: bool
    require: tuple[str, ...]  # capabilities every device must advertise (pytest_rdma.capabilities)
    json: Path | None
    reproducers: Path
    confirm: bool
    leaks: str
    kernel_log: str
    catalogue_extra: tuple[str, ...]
    explore: int  # seconds per device; 0: no exploration
    explore_seed: int | None
    hang_limit: int  # seconds a check may run in the lab before its VM counts as hung (lab/fault.py)
    junit: Path | None
    pytest_junit: bool  # pytest's own --junitxml is on: checks add their properties to it
    allure_dir: Path | None
    given: tuple[Given, ...]  # the settings not left at their default, in OPTIONS' order

    def source(self, name: str) -> str:
        return next((given.origin.where for given in self.given if given.name == name), "default")

    def header_line(self) -> str:
        """ "rdma: settings: devices=rxe0 (command line), leaks=report (env RDMA_LEAKS)", or "" when all are default."""
        if not self.given:
            return ""
        return "rdma: settings: " + ", ".join(f"{g.name}={g.text} ({g.origin.short})" for g in self.given)


SETTINGS = pytest.StashKey[Settings]()


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("rdma", "RDMA verbs conformance (pytest-rdma)")
    for option in OPTIONS:
        help_text = f"{option.help} [ini: {option.ini}; env: {option.env}]"
        if option.switch:
            group.addoption(option.flag, action="store_true", dest=option.ini, default=None, help=help_text)
        else:
            group.addoption(
                option.flag,
                action="append" if option.many else "store",
                dest=option.ini,
                default=None,
                metavar=option.metavar,
                help=help_text,
            )
        # mypy 2.4 takes the string for a type's name (a TypeForm); it is addini's ini type "linelist".
        parser.addini(option.ini, help_text, type="linelist" if option.many else None, default=None)  # type: ignore[maybe-unrecognized-str-typeform]


def _raw(config: pytest.Config, option: Option) -> tuple[list[str], Origin] | None:
    """The setting's text values and where they came from, by precedence (command line, environment,
    ini file); None for the default."""
    given = config.getoption(option.ini)
    if given is not None and given != []:
        from_command_line = Origin(COMMAND_LINE, option.flag)
        if option.switch:
            return (["true"] if given else ["false"]), from_command_line
        return (list(given) if option.many else [given]), from_command_line
    for variable in (option.env, *option.env_aliases):
        env = os.environ.get(variable)
        if env is not None and env.strip():
            return [env], Origin(ENVIRONMENT, variable)
    from_ini = config.getini(option.ini)
    if from_ini not in (None, [], ""):
        origin = Origin(INI, option.ini, config.inipath.name if config.inipath else "")
        return (list(from_ini) if option.many else [str(from_ini)]), origin
    return None


class Values(TypedDict):
    """Every option's value once read, by its name: the type its parse function returns (OPTIONS)."""

    devices: tuple[str, ...]
    peer: str | None
    peer_host: str | None
    port: int
    gid_index: int
    expectations: tuple[str, ...] | None
    strict: bool
    require: tuple[str, ...]
    json: str | None
    junit: str | None
    allure: str | None
    reproducers: str | None
    confirm: bool
    leaks: str
    kernel_log: str
    catalogue_extra: tuple[str, ...]
    explore: int
    explore_seed: int | None
    hang_limit: int


def read(config: pytest.Config) -> Settings:
    """All settings, or one pytest.UsageError for the first that does not parse."""
    parsed: dict[str, Value] = {}
    given: list[Given] = []
    for option in OPTIONS:
        raw = _raw(config, option)
        if raw is None:
            parsed[option.name] = option.default
            continue
        texts, origin = raw
        shown = ",".join(texts)
        try:
            value = option.parse(texts)
        except ValueError as exc:
            raise pytest.UsageError(f"{option.ini} = {shown!r} ({origin.where}): {exc}") from None
        if option.name == "expectations":
            value = _expectation_paths(config, cast("tuple[str, ...]", value), origin)  # what _paths returns
        parsed[option.name] = value
        given.append(Given(option.name, shown, origin))
    # cast: every option's parse function returns, and its default is, the type Values gives its name.
    values = cast(Values, parsed)
    json_path = Path(values["json"]) if values["json"] else None
    reproducers: str | Path | None = values["reproducers"]
    if reproducers is None:
        reproducers = json_path.parent / "reproducers" if json_path else Path("rdma-reproducers")
    return Settings(
        devices=values["devices"],
        peer=values["peer"],
        peer_host=values["peer_host"],
        port=values["port"],
        gid_index=values["gid_index"],
        expectations=values["expectations"],
        strict=values["strict"],
        require=values["require"],
        json=json_path,
        reproducers=Path(reproducers),
        confirm=values["confirm"],
        leaks=values["leaks"],
        kernel_log=values["kernel_log"],
        catalogue_extra=values["catalogue_extra"],
        explore=values["explore"],
        explore_seed=values["explore_seed"],
        hang_limit=values["hang_limit"],
        junit=Path(values["junit"]) if values["junit"] else None,
        pytest_junit=bool(getattr(config.option, "xmlpath", None)),
        allure_dir=Path(values["allure"]) if values["allure"] else None,
        given=tuple(given),
    )


def _expectation_paths(config: pytest.Config, paths: tuple[str, ...], origin: Origin) -> tuple[str, ...]:
    """'none' means no waivers; ini paths are relative to the ini file's directory."""
    if any(path.lower() == "none" for path in paths):
        return ()
    if origin.kind == INI and config.inipath is not None:
        base = config.inipath.parent
        paths = tuple(str(base / path) for path in paths)
    missing = [path for path in paths if not Path(path).exists()]
    if missing:
        raise pytest.UsageError(
            f"rdma_expectations = {missing[0]!r} ({origin.where}): no such file or directory (give a <driver>.toml "
            "file or a directory of them, or 'none')"
        )
    return paths


def get(config: pytest.Config) -> Settings:
    return config.stash[SETTINGS]


def output_text(config: pytest.Config, name: str) -> str | None:
    """One path setting's value as given, or None (unset, or not a path): what a usage error's report may use
    when the settings as a whole could not be read."""
    option = next(option for option in OPTIONS if option.name == name)
    raw = _raw(config, option)
    if raw is None:
        return None
    try:
        return str(option.parse(raw[0]))
    except ValueError:
        return None
