"""The lab's host builds deviations' C reproducers for the VM (pytest_rdma/lab/builds.py), here
with both ends on the host: the service thread, and confirm's side of the exchange."""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from pytest_rdma.cbuild import BUILDS_ENV
from pytest_rdma.lab.builds import BuildService
from pytest_rdma.report import confirm

HEADER = Path("/usr/include/infiniband/verbs.h")
PROGRAM = '#include <infiniband/verbs.h>\n#include <stdio.h>\nint main(void) { puts("REPRODUCED"); return 0; }\n'


@pytest.fixture
def service(tmp_path: Path):
    if shutil.which("gcc") is None or not HEADER.exists():
        pytest.skip(f"needs gcc and {HEADER} (Debian: apt-get install gcc libibverbs-dev)")
    running = BuildService(tmp_path / "builds")
    running.start()
    yield running
    running.stop()


def test_the_host_builds_what_the_vm_writes_and_the_program_runs(service: BuildService, tmp_path: Path) -> None:
    program = tmp_path / "repro"
    assert confirm.build_by_host(service.directory, PROGRAM, program) == (0, "")
    assert subprocess.run([str(program)], capture_output=True, text=True).stdout == "REPRODUCED\n"
    assert service.built == 1
    assert sorted(p.name for p in service.directory.iterdir()) == ["ready"], "the exchange's files are removed"


def test_a_program_that_does_not_compile_says_why(service: BuildService, tmp_path: Path) -> None:
    code, messages = confirm.build_by_host(service.directory, "int main(void) { return nope; }\n", tmp_path / "x")
    assert code != 0 and "nope" in messages


def test_confirm_builds_on_the_host_when_the_lab_serves(
    service: BuildService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "repro.c"
    source.write_text(PROGRAM)
    monkeypatch.setenv(BUILDS_ENV, str(service.directory))
    found = confirm.confirm(source)
    assert found["verdict"] == "reproduced" and service.built == 1


def test_without_the_hosts_ready_the_program_is_built_here(tmp_path: Path) -> None:
    assert confirm.build_by_host(tmp_path, PROGRAM, tmp_path / "repro") is None
    stopped = BuildService(tmp_path / "builds")
    stopped.start()
    stopped.stop()
    assert not stopped.directory.exists(), "a stopped service no longer says it is ready"


def test_the_program_appears_whole_for_the_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The host builds any NAME.c it sees: the VM writes aside and renames, so NAME.c is never half there."""
    (tmp_path / "ready").write_text("cc\n")
    written: list[str] = []
    real_write = Path.write_text

    def recording(self: Path, *args, **kwargs) -> int:
        written.append(self.name)
        return real_write(self, *args, **kwargs)

    def answer() -> None:  # a host that refuses whatever comes, once it is there
        for _ in range(500):
            for source in tmp_path.glob("*.c"):
                # As builds.build does: NAME.out appears whole (written in place, the VM could read it
                # empty, which failed this test once on a loaded CI machine)
                partial = source.with_suffix(".out.part")
                real_write(partial, '{"returncode": 1, "stderr": "refused"}')
                partial.rename(source.with_suffix(".out"))
                return
            time.sleep(0.01)

    host = threading.Thread(target=answer)
    host.start()
    monkeypatch.setattr(Path, "write_text", recording)
    assert confirm.build_by_host(tmp_path, PROGRAM, tmp_path / "repro") == (1, "refused")
    host.join()
    assert not [name for name in written if name.endswith(".c")], f"NAME.c written in place: {written}"


def test_the_labs_in_vm_runner_starts_without_importing_pytest() -> None:
    """Its start is on the cold start's path, where pytest's import costs about a second under TCG."""
    code = "import sys, pytest_rdma.lab.guest; print('pytest' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
