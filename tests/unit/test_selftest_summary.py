"""The end of `pytest-rdma selftest`: every step's code, then why each failed step failed (pure).

CI shows the end of a run's output; a failed step's reason printed half an hour earlier is not
in it (a lab step that stopped with a usage error was once all a CI run said).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_rdma.selftest import SHOWN_FAILURES, Beside, BesideStep, Step, ended_header, failed_tests, summary

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="1" failures="2" tests="4">
<testcase classname="tests.lab.test_core" name="test_passes" time="1.0"/>
<testcase classname="tests.lab.test_core" name="test_fails" time="1.0"><failure message="x">tb</failure></testcase>
<testcase classname="tests.lab.test_core" name="test_fails" time="1.0"><error message="teardown">tb</error></testcase>
<testcase classname="tests.lab.test_robustness" name="test_errs[rxe0]"><error message="y">tb</error></testcase>
<testcase classname="tests.lab.test_core" name="test_skipped" time="0"><skipped message="z"/></testcase>
</testsuite></testsuites>
"""


def test_failed_tests_are_named_once_each_as_pytest_names_them(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    junit.write_text(JUNIT)
    assert failed_tests(junit) == [
        "tests/lab/test_core.py::test_fails",
        "tests/lab/test_robustness.py::test_errs[rxe0]",
    ]
    assert failed_tests(tmp_path / "missing.xml") == []
    (tmp_path / "cut.xml").write_text(JUNIT[:200])  # a run killed while writing it
    assert failed_tests(tmp_path / "cut.xml") == []


def test_the_summary_ends_with_why_each_failed_step_failed(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    junit.write_text(JUNIT)
    steps = [
        Step("host tests", 0, junit),
        Step("lab tests", 4, tmp_path / "never-written.xml", ["--rdma-reproducers ...: not writable"]),
        Step("host-side lab tests", 1, junit),
        Step("fresh Debian 12 machine", 2, None),
    ]
    assert summary(steps) == [
        "selftest: host tests exited 0, lab tests exited 4, host-side lab tests exited 1, "
        "fresh Debian 12 machine exited 2",
        "selftest: lab tests failed: error: --rdma-reproducers ...: not writable",
        "selftest: host-side lab tests failed: tests/lab/test_core.py::test_fails",
        "selftest: host-side lab tests failed: tests/lab/test_robustness.py::test_errs[rxe0]",
        "selftest: fresh Debian 12 machine failed: no failed test recorded (exit 2); see the step's output above",
    ]


def test_a_long_list_of_failures_is_cut_with_a_count(tmp_path: Path) -> None:
    cases = "".join(
        f'<testcase classname="t" name="test_{n}"><failure message="x"/></testcase>' for n in range(SHOWN_FAILURES + 3)
    )
    junit = tmp_path / "junit.xml"
    junit.write_text(f"<testsuites><testsuite>{cases}</testsuite></testsuites>")
    lines = summary([Step("host tests", 1, junit)])
    assert len(lines) == 1 + SHOWN_FAILURES + 1
    assert lines[-1] == "selftest: host tests failed: ... and 3 more failed (see the step's output above)"


def test_the_lab_packages_are_installed_before_the_host_tests(monkeypatch, tmp_path: Path) -> None:
    """The host tests build reproducers and load libibverbs: on a fresh machine (nothing installed), the
    lab's packages are asked for before step 1 runs, not first by the lab in step 2."""
    from pytest_rdma import selftest
    from pytest_rdma.lab import prereqs

    events: list[tuple[str, object]] = []
    monkeypatch.setattr(prereqs, "missing_packages", lambda packages: list(packages))  # a machine with nothing
    monkeypatch.setattr(prereqs, "packages_for_missing", lambda names: [])
    monkeypatch.setattr(prereqs, "apt_install", lambda packages, *a, **k: events.append(("apt", tuple(packages))))
    pytest_args: dict[str, list[str]] = {}
    requests: list[selftest.lab.LabRequest] = []

    def host_pytest(directory: str, args: list[str], junit: Path) -> int:
        pytest_args[directory] = args
        events.append(("pytest", directory))
        return 0

    monkeypatch.setattr(selftest, "_pytest", host_pytest)
    monkeypatch.setattr(
        selftest.lab, "run", lambda request, **k: requests.append(request) or events.append(("lab", None)) or 0
    )
    # The steps run beside the others boot VMs: a host test must never start one.
    monkeypatch.setattr(selftest, "_run_to_log", lambda argv, *a: events.append(("beside", tuple(argv))) or 0)

    assert selftest.main(["--no-fresh", "--results", str(tmp_path), "--", "-x"]) == 0
    assert pytest_args["unit"] == ["-n", "auto", "-x"], "the host tests on every core; the user's arguments last"
    # The lab's tests hold no check marked rdma_process: no run as nobody, which would deselect them all.
    assert [request.plan_extra.get("unprivileged", True) for request in requests] == [False]
    first_test = events.index(("pytest", "unit"))
    asked = {package for kind, packages in events[:first_test] if kind == "apt" for package in packages}
    assert set(prereqs.BASE_PACKAGES) <= asked
    assert any(kind == "beside" and str(selftest.REPO / "tests" / "host_lab") in argv for kind, argv in events)


def test_the_kernel_matrix_step_runs_the_default_kernel_and_the_archive_s_6_12(monkeypatch) -> None:
    from pytest_rdma import selftest
    from pytest_rdma.lab import prereqs

    monkeypatch.setattr(prereqs, "find_kernel", lambda release=None: None)
    monkeypatch.setattr(prereqs, "distro_default_release", lambda depends=None: "6.1.0-56-amd64")
    asked: list[str] = []
    monkeypatch.setattr(prereqs, "archive_release", lambda package: asked.append(package) or "6.12.117+deb12-amd64")
    assert selftest.matrix_kernels(None) == ["6.1.0-56-amd64", "6.12.117+deb12-amd64"]
    assert asked == ["linux-image-6.12-amd64"]
    monkeypatch.setattr(prereqs, "archive_release", lambda package: None)  # no 6.12 in the archive: one kernel
    assert selftest.matrix_kernels(None) == ["6.1.0-56-amd64"]
    assert selftest.matrix_kernels(["6.12.117+deb12-amd64"]) == ["6.12.117+deb12-amd64"]


def test_steps_run_beside_print_their_whole_output_with_their_exit_code_once_ended(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def step(name: str, code: int) -> BesideStep:
        script = f"import sys; print('{name} line 1'); print('{name} line 2', file=sys.stderr); sys.exit({code})"
        return BesideStep("9/9", Step(name), [sys.executable, "-c", script], tmp_path / f"{name}.log")

    passing, failing = step("passing", 0), step("failing", 3)
    missing = BesideStep("9/9", Step("missing"), [str(tmp_path / "no-such-program")], tmp_path / "missing.log")
    beside = Beside([passing, failing, missing])
    assert [s.step.code for s in beside.steps] == [1, 1, 1]  # not ended is not passed
    beside.start()
    beside.print_ended(wait=True)
    assert (passing.step.code, failing.step.code, missing.step.code) == (0, 3, 1)
    assert missing.step.errors and "could not run" in missing.step.errors[0]
    out = capsys.readouterr().out.splitlines()
    assert out[0] == ended_header(passing) and "passing (ran beside the other steps) exited 0 after" in out[0]
    assert out[1:4] == ["passing line 1", "passing line 2", "selftest: --- end of 9/9 passing ---"]
    assert "failing (ran beside the other steps) exited 3" in out[4]
    assert sorted(out[5:7]) == ["failing line 1", "failing line 2"]
    assert "missing (ran beside the other steps) exited 1" in out[8]
    assert summary([passing.step, failing.step])[0] == "selftest: passing exited 0, failing exited 3"


def test_the_kernel_matrix_runs_beside_the_lab_tests_as_the_lab_command(monkeypatch, tmp_path: Path) -> None:
    """After the lab tests it was CI's last 100 s on the critical path; beside them, after the host-side lab tests,
    it costs none. It is what a user runs: pytest-rdma lab --kernel A --kernel B."""
    from pytest_rdma import selftest
    from pytest_rdma.lab import prereqs

    monkeypatch.setattr(prereqs, "apt_install", lambda *a, **k: None)
    monkeypatch.setattr(selftest, "_pytest", lambda *a, **k: 0)
    monkeypatch.setattr(selftest.lab, "run", lambda *a, **k: 0)
    monkeypatch.setattr(selftest, "matrix_kernels", lambda given: ["6.1.0-56-amd64", "6.12.117+deb12-amd64"])
    beside: list[list[str]] = []
    monkeypatch.setattr(selftest, "_run_to_log", lambda argv, *a: beside.append(argv) or 0)
    assert selftest.main(["--no-fresh", "--no-install", "--results", str(tmp_path)]) == 0
    assert [argv[argv.index("-m") + 1] for argv in beside] == ["pytest", "pytest_rdma.cli"]  # host_lab, then it
    matrix = beside[1]
    assert matrix[matrix.index("-m") + 2 :] == [
        "lab", "--no-html", "--results", str(tmp_path.resolve() / "selftest" / "kernels"), "--cache",
        str(selftest.lab.LabRequest().cache), "--no-install", "--timeout", "3600", "--dev=rxe0", "--dev=siw0",
        "--kernel=6.1.0-56-amd64", "--kernel=6.12.117+deb12-amd64", "--", "-k", "ibv_query_port",
    ]  # fmt: skip
