"""Confirming a deviation in C: how a reproducer's exit becomes the verdict the reports show.

The programs here are tiny stand-ins for reproducers (calls/render.py writes the real ones,
which test_calls.py compiles): what is tested is the mapping from build and run to a verdict,
which no RDMA device decides.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_rdma.cbuild import link_flags
from pytest_rdma.report.confirm import confirm


def program(tmp_path: Path, body: str) -> Path:
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("needs a C compiler (Debian: apt-get install gcc)")
    # The programs link with libibverbs (cbuild.link_flags): without its dev files the link fails
    # and every verdict reads "not built", which is no test of the mapping.
    if not Path("/usr/include/infiniband/verbs.h").exists():
        pytest.skip("needs libibverbs' dev files (Debian: apt-get install libibverbs-dev)")
    path = tmp_path / "repro.c"
    path.write_text(f"#include <stdio.h>\n#include <unistd.h>\nint main(void)\n{{\n{body}\n}}\n")
    return path


@pytest.mark.parametrize(
    ("body", "verdict"),
    [
        ('puts("REPRODUCED"); return 0;', "reproduced"),
        ('puts("NOT REPRODUCED"); return 1;', "not reproduced"),
        ('puts("SETUP FAILED at [0] ibv_alloc_pd"); return 2;', "setup failed"),
        ("return 3;", "no automatic verdict"),
        ("return 7;", "exit 7"),
    ],
)
def test_the_programs_exit_is_its_verdict(tmp_path: Path, body: str, verdict: str) -> None:
    found = confirm(program(tmp_path, body))
    assert found["verdict"] == verdict
    assert found["exit"] == int(body.split("return ")[1].rstrip(";"))


def test_the_last_line_printed_is_the_detail(tmp_path: Path) -> None:
    found = confirm(program(tmp_path, 'puts("[3] ibv_post_send -> 0");\n\tputs("REPRODUCED");\n\treturn 0;'))
    assert found["detail"] == "REPRODUCED"


def test_a_program_ended_by_its_alarm_timed_out(tmp_path: Path) -> None:
    found = confirm(program(tmp_path, "alarm(1); pause(); return 0;"))
    assert found["verdict"] == "timed out"
    assert found["detail"] == "ended by SIGALRM"


def test_a_program_that_does_not_build_says_why(tmp_path: Path) -> None:
    found = confirm(program(tmp_path, "return undeclared_name;"))
    assert found["verdict"] == "not built"
    assert "undeclared_name" in found["detail"]


def test_librdmacm_is_linked_only_when_the_program_uses_it() -> None:
    assert link_flags("#include <infiniband/verbs.h>\n") == ["-libverbs"]
    assert link_flags("#include <rdma/rdma_cma.h>\n") == ["-libverbs", "-lrdmacm"]


def test_a_reproducers_headers_are_precompiled_once_and_used(tmp_path: Path) -> None:
    # Under the lab's emulated CPU, parsing the headers again was about half of each build.
    from pytest_rdma import cbuild as module

    first = program(tmp_path, 'puts("REPRODUCED"); return 0;')
    second = tmp_path / "other" / "repro.c"
    second.parent.mkdir()
    second.write_text(first.read_text().replace("REPRODUCED", "NOT REPRODUCED").replace("return 0", "return 1"))
    assert confirm(first)["verdict"] == "reproduced" and confirm(second)["verdict"] == "not reproduced"
    includes = module.include_block(first.read_text())
    assert includes == "#include <stdio.h>\n#include <unistd.h>\n"
    header = module._PRECOMPILED[includes]
    assert header is not None and Path(f"{header}.gch").is_file()
    compiler = shutil.which("cc") or shutil.which("gcc")
    assert compiler is not None
    shown = subprocess.run(
        [compiler, "-include", str(header), "-H", "-fsyntax-only", str(second)], capture_output=True, text=True
    )
    assert f"! {header}.gch" in shown.stderr  # "!": the compiler took the precompiled form
