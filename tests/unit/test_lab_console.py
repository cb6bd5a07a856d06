"""The lab VM's console: what reaches the terminal, and what a failure message quotes from it.

The fixtures in data/console/ are small excerpts of what virtme-ng, QEMU's virtiofsd, the kernel
and the lab's runner print (no-busybox.log is verbatim from a fresh Debian 12 without
busybox-static, where the lab used to say "the VM printed nothing").
"""

from __future__ import annotations

import stat
import sys
import time
from pathlib import Path

import pytest

from pytest_rdma.lab import vm
from pytest_rdma.lab.prereqs import Kernel

DATA = Path(__file__).parent / "data" / "console"
LOG = Path("/results/lab-console.log")


def console(name: str) -> str:
    return (DATA / name).read_text()


def shown(text: str) -> list[str]:
    terminal = vm.ConsoleFilter()
    return [line for line in text.splitlines() if terminal.shows(line)]


def sections(message: str) -> tuple[str, str]:
    """(what went wrong, the kernel's last lines and after) of a failure message."""
    head, _, kernel = message.partition("The kernel's last lines:")
    return head, kernel


def test_terminal_gets_the_runner_and_pytest_not_the_boot() -> None:
    lines = console("boot-then-run.log").splitlines()
    start = lines.index("lab: rxe0, siw0 ready at guest uptime 19.9 s (setup 2.0 s)")
    end = lines.index("lab: rxe0: resource counts back to start")
    assert shown(console("boot-then-run.log")) == lines[start : end + 1]


def test_the_runner_speaks_before_its_devices_are_ready() -> None:
    text = (
        "virtme: waiting for virtiofsd to start\nProbing EDD (edd=off to disable)... ok\n"
        "lab: device setup failed: insmod siw.ko failed: Invalid module format\n"
        "[    5.1] siw: disagrees about version of symbol module_layout\n"
    )
    assert shown(text) == ["lab: device setup failed: insmod siw.ko failed: Invalid module format"]


def test_a_failed_boot_prints_nothing_to_the_terminal_until_the_error() -> None:
    assert shown(console("no-busybox.log")) == []


def test_no_busybox_is_quoted_not_printed_nothing() -> None:
    message = vm.failure_message(console("no-busybox.log"), LOG)
    wrong, kernel = sections(message)
    assert "  virtme-run: initramfs is needed, and no busybox was found" in wrong.splitlines()
    assert "printed nothing" not in message.replace("The kernel printed nothing", "")
    assert "The kernel printed nothing: the VM did not start it." in message
    assert f"Full console log: {LOG}" in message
    assert "waiting for virtiofsd" not in message  # chatter is no explanation


def test_a_missing_program_quotes_the_traceback_and_the_warning() -> None:
    wrong, _ = sections(vm.failure_message(console("no-file.log"), LOG))
    assert "  FileNotFoundError: [Errno 2] No such file or directory: 'file'" in wrong.splitlines()
    assert "  Traceback (most recent call last):" in wrong.splitlines()
    assert "  warning: `file` is not installed in the system, virtme-ng may fail to detect kernel version" in wrong


def test_a_kernel_panic_is_quoted_with_the_kernel_tail() -> None:
    wrong, kernel = sections(vm.failure_message(console("kernel-panic.log"), LOG))
    assert "Kernel panic - not syncing: VFS: Unable to mount root fs" in wrong
    assert "module verification failed" not in wrong  # every siw boot logs it: a kernel "failed" is no fault
    assert "fallback to 9p" not in wrong  # the lab handles that fallback itself
    assert "  [    2.104000]  dump_stack_lvl+0x44/0x5c" in kernel.splitlines()
    assert "module verification failed" in kernel  # the tail is the tail


def test_a_runner_that_crashes_is_quoted() -> None:
    wrong, _ = sections(vm.failure_message(console("guest-crash.log"), LOG))
    assert "  ModuleNotFoundError: No module named 'pytest_rdma'" in wrong.splitlines()


def test_a_vm_killed_mid_run_is_not_explained_by_pytest_failures() -> None:
    message = vm.failure_message(console("killed-mid-run.log"), LOG, ["lab: VM killed after 60 s"])
    assert "What the console log says went wrong" not in message
    assert "FAILED" not in message
    assert "  [    3.881511] x86/mm: Checked W+X mappings: passed, no W+X pages found." in message.splitlines()
    assert "lab: VM killed after 60 s" in message


@pytest.mark.parametrize("text", ["", "\n\n"])
def test_printed_nothing_only_when_the_log_is_empty(text: str) -> None:
    message = vm.failure_message(text, LOG)
    assert message.endswith(f"The VM printed nothing ({LOG} is empty).")


def test_explaining_lines_are_each_quoted_once_at_their_last_place() -> None:
    lines = ["virtme-run: error A", "virtme-run: error B", "virtme-run: error A"]
    assert vm.explaining_lines(lines) == ["virtme-run: error B", "virtme-run: error A"]


def fake_vng(tmp_path: Path, fixture: str, exit_code: int | None) -> Path:
    """A `vng` that prints a captured console and, like the runner, may leave an exit code."""
    script = tmp_path / "vng"
    write_code = f"(pathlib.Path({str(tmp_path / 'results')!r}) / 'lab-exit-code').write_text('{exit_code}')"
    script.write_text(
        f"#!{sys.executable}\nimport pathlib, sys\n"
        f"sys.stdout.write(pathlib.Path({str(DATA / fixture)!r}).read_text())\n"
        + (write_code + "\n" if exit_code is not None else "")
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


@pytest.mark.parametrize(("fixture", "exit_code"), [("boot-then-run.log", 1), ("no-busybox.log", None)])
def test_run_logs_everything_and_prints_only_the_runner(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fixture: str, exit_code: int | None
) -> None:
    results = tmp_path / "results"
    results.mkdir()
    log = results / "lab-console.log"
    outcome = vm.run(
        fake_vng(tmp_path, fixture, exit_code),
        Kernel("6.1.0-56-amd64", Path("/boot/vmlinuz")),
        False,
        results,
        {"cwd": str(tmp_path)},
        time.monotonic(),
        log,
        timeout=60,
    )
    assert log.read_text() == console(fixture)
    assert capsys.readouterr().out.splitlines() == shown(console(fixture))
    assert outcome.exit_code == exit_code
    if exit_code is None:
        assert "no busybox was found" in str(vm.boot_failure(outcome, log))
