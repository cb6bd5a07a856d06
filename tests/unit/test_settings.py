"""Settings checked when the session starts, so that a run never fails half way on its own outputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_rdma import settings as settings_module
from pytest_rdma import writable


def test_an_output_this_user_cannot_write_is_named_before_any_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The suite's own tests run as root, which os.access lets write anywhere: stand in for a user.
    monkeypatch.setattr(writable.os, "access", lambda path, mode: Path(path) != tmp_path)
    said = writable.problem(tmp_path / "rdma-reproducers", writable.DIRECTORY, "reproducers")
    assert f"{tmp_path} is not writable by this user" in said
    assert "give a path you can write" in said
    assert writable.problem(tmp_path.parent / "results.json", writable.FILE, "results.json") == ""  # writable


# -- one precedence: command line > environment > ini file > default -------------------------------------
def give(source: str, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Give the port and the leak guard's mode in one source; the command-line arguments it takes."""
    if source == "command line":
        return ["--rdma-port", "2", "--rdma-leaks", "report"]
    if source == "environment":
        monkeypatch.setenv("RDMA_PORT", "3")
        monkeypatch.setenv("RDMA_LEAKS", "off")
    else:
        pytester.makeini("[pytest]\nrdma_port = 4\nrdma_leaks = fail\n")
    return []


VALUES = {"command line": (2, "report"), "environment": (3, "off"), "ini file": (4, "fail")}
HEADER = {
    "command line": "port=2 (command line), leaks=report (command line)",
    "environment": "port=3 (env RDMA_PORT), leaks=off (env RDMA_LEAKS)",
    "ini file": "port=4 (ini rdma_port in tox.ini), leaks=fail (ini rdma_leaks in tox.ini)",
}


def settings_from(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, *sources: str
) -> settings_module.Settings:
    for name in ("RDMA_PORT", "RDMA_LEAKS"):
        monkeypatch.delenv(name, raising=False)
    args = [arg for source in sources for arg in give(source, pytester, monkeypatch)]
    return settings_module.read(pytester.parseconfig(*args))


@pytest.mark.parametrize(
    ("sources", "wins"),
    [
        (("command line", "environment"), "command line"),
        (("command line", "ini file"), "command line"),
        (("environment", "ini file"), "environment"),
        (("command line", "environment", "ini file"), "command line"),
    ],
    ids=["command-line-over-environment", "command-line-over-ini", "environment-over-ini", "all-three"],
)
def test_one_precedence_for_every_pair_of_sources(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, sources: tuple[str, ...], wins: str
) -> None:
    found = settings_from(pytester, monkeypatch, *sources)
    assert (found.port, found.leaks) == VALUES[wins]
    assert found.header_line() == f"rdma: settings: {HEADER[wins]}"
    assert found.source("port") == {
        "command line": "command line --rdma-port",
        "environment": "environment RDMA_PORT",
    }.get(wins, "ini file tox.ini")


def test_defaults_are_not_in_the_header(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    found = settings_from(pytester, monkeypatch)
    assert (found.port, found.leaks, found.header_line(), found.source("port")) == (1, "fail", "", "default")


def test_the_header_says_where_each_setting_came_from(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeini("[pytest]\nrdma_port = 1\n")
    monkeypatch.setenv("RDMA_LEAKS", "report")
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = pytester.runpytest("-p", "no:xdist", "--rdma-kernel-log", "off")
    result.stdout.fnmatch_lines(
        [
            "rdma: settings: port=1 (ini rdma_port in tox.ini), leaks=report (env RDMA_LEAKS), "
            "kernel_log=off (command line)"
        ]
    )


def test_every_environment_variable_is_named_rdma_and_a_first_name_still_works(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One convention for scripts: RDMA_<SETTING>. The exploration's variables were first named
    # PYTEST_RDMA_EXPLORE*; a script that sets them keeps working, and the new name wins over it.
    assert all(option.env.startswith("RDMA_") for option in settings_module.OPTIONS)
    for name in ("RDMA_EXPLORE_SEED", "PYTEST_RDMA_EXPLORE_SEED"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PYTEST_RDMA_EXPLORE_SEED", "7")
    found = settings_module.read(pytester.parseconfig())
    assert (found.explore_seed, found.source("explore_seed")) == (7, "environment PYTEST_RDMA_EXPLORE_SEED")
    monkeypatch.setenv("RDMA_EXPLORE_SEED", "9")
    assert settings_module.read(pytester.parseconfig()).explore_seed == 9
