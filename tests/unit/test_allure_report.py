"""`pytest-rdma report`: the Allure 3 report of an rxe run and a siw run, its gate, its history,
and what a release manager sees in it (issue 12). No RDMA device: the results are written by the
real writer from records of real catalogue cases (allure_records.py).

Needs Node.js and npm (Allure 3 and Node 22 come from npm into the cache), and for the browser
test Debian's chromium and playwright.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from allure_browser import (
    categories,
    environments,
    needs_browser,
    open_result,
    pairs,
    report_page,
    select_environment,
    with_transition,
)
from allure_records import IDENTITIES, PY_TEXT, find, record

from pytest_rdma.outcomes import CONFORMS, CRASH, DEVIATES, NOT_EXERCISED, UNSUPPORTED, WAIVED
from pytest_rdma.report.allure_config import ENVIRONMENT_FILE, config_module, merged_devices
from pytest_rdma.report.allure_config import environments as env_config
from pytest_rdma.report.allure_html import DATA_FIRST, allure_cli, report_main
from pytest_rdma.report.allure_model import FRAMEWORK
from pytest_rdma.report.allure_writer import AllureWriter
from pytest_rdma.report.results import Results

A = "test_ibv_modify_qp[required-attrs-RC-RESET>INIT-without-STATE]"
B = "test_ibv_modify_qp[forbidden-attrs-RC-RTR>RTS-with-PATH_MTU]"
C = "test_ibv_modify_qp[forbidden-attrs-RC-RESET>INIT-with-RQ_PSN]"
D = "test_ibv_modify_qp[forbidden-attrs-RAW_PACKET-INIT>RTR-with-ACCESS_FLAGS]"
E = "test_ibv_create_qp[cap-writeback-RC-max_recv_wr-5]"
F = "test_ibv_create_qp[cap-writeback-RC-max_send_wr-3]"
FIRST = {
    "rxe0": {A: CONFORMS, B: DEVIATES, C: WAIVED, D: UNSUPPORTED, E: NOT_EXERCISED, F: CRASH},
    "siw0": {A: CONFORMS, B: WAIVED, C: WAIVED, D: UNSUPPORTED, E: NOT_EXERCISED, F: CONFORMS},
}
# The next run: rxe's deviation is fixed and nothing crashes; the gate passes.
SECOND = {"rxe0": {**FIRST["rxe0"], B: CONFORMS, F: CONFORMS}, "siw0": FIRST["siw0"]}


def write_run(directory: Path, device: str, plan: dict[str, str]) -> Path:
    """One device's run, written by the real writer, as the lab's per-device runs write it."""
    reproducers = directory / "reproducers"
    writer = AllureWriter(directory / "allure", Results((device,)), reproducers)
    writer.pytest_sessionstart(None)
    for stable_id, outcome in plan.items():
        data = record(find(stable_id), device, outcome)
        if data.get("reproducer"):
            path = reproducers / data["reproducer"]["python"]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(PY_TEXT)
        writer.append(data)
    writer.pytest_sessionfinish(None)
    return directory / "allure"


def report(tmp_path: Path, plan: dict[str, dict[str, str]], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    dirs = [str(write_run(tmp_path / device, device, checks)) for device, checks in plan.items()]
    code = report_main(
        [*dirs, "--output", str(tmp_path / "allure-report"), "--history", str(tmp_path / "history.jsonl")]
    )
    out = capsys.readouterr()
    return code, out.out + out.err


OURS = {"name": "framework", "value": FRAMEWORK}


def node_eval(config: Path, script: str) -> object:
    """Run `script` with the config module imported as `config`; what it prints, as JSON."""
    node = allure_cli()[0]
    code = f"import config from {json.dumps(config.as_uri())};\n{script}"
    done = subprocess.run([node, "--input-type=module", "-e", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_the_config_groups_by_driver_categorises_by_outcome_and_gates(tmp_path: Path) -> None:
    needs_node()
    config = tmp_path / "allurerc.mjs"
    config.write_text(config_module("r", env_config(IDENTITIES), tmp_path / "h.jsonl", "passed"))
    labels = {
        outcome: [{"name": "driver", "value": "siw"}, {"name": "outcome", "value": outcome}, OURS]
        for outcome in (CONFORMS, DEVIATES, WAIVED, UNSUPPORTED, NOT_EXERCISED, CRASH)
    }
    # Another tool's result with the same labels is never judged as ours.
    foreign = [{"name": "outcome", "value": DEVIATES}, {"name": "framework", "value": "pytest"}]
    seen = node_eval(
        config,
        f"""
        const labels = {json.dumps(labels)};
        const env = (ls) => Object.entries(config.environments).filter(([, e]) => e.matcher({{ labels: ls }}))
            .map(([id]) => id);
        const category = (ls) => config.categories.find((c) =>
            Object.entries(c.matchers.labels).every(([n, re]) =>
                ls.some((l) => l.name === n && new RegExp(re).test(l.value))))?.id ?? null;
        const gate = config.qualityGate.rules[0];
        console.log(JSON.stringify({{
            envs: Object.fromEntries(Object.entries(config.environments).map(([id, e]) => [id, e.variables])),
            siw: env(labels.conforms),
            categories: Object.fromEntries(Object.entries(labels).map(([o, ls]) => [o, category(ls)])),
            gated: Object.entries(labels).filter(([, ls]) => gate.filter({{ labels: ls }})).map(([o]) => o),
            foreignGated: gate.filter({{ labels: {json.dumps(foreign)} }}),
            maxFailures: gate.maxFailures, history: config.historyPath, variables: config.variables,
        }}));""",
    )
    assert seen["envs"]["rxe"] == {
        "device": "rxe0",
        "kernel": "6.1.0-56-amd64",
        "rdma-core": "44.0",
        "firmware": "0.0.0",
        "vendor / part": "0xffffff:0",
        "node type": "CA",
        "transport": "roce",
    }
    assert seen["envs"]["siw"]["vendor / part"] == "0x626d74:1" and seen["siw"] == ["siw"]
    assert seen["categories"] == {
        CONFORMS: None,
        DEVIATES: "new-deviation",
        WAIVED: "waived",
        UNSUPPORTED: "unsupported",
        NOT_EXERCISED: "not-exercised",
        CRASH: "crash-or-timeout",
    }
    assert seen["gated"] == [DEVIATES, CRASH] and seen["maxFailures"] == 0
    assert seen["foreignGated"] is False
    assert seen["history"] == str(tmp_path / "h.jsonl")
    # Shown with all drivers at once: the gate, then each field once when the drivers share it, else per device.
    assert seen["variables"] == {
        "quality gate": "passed",
        "device": "rxe0 (rxe) · siw0 (siw)",
        "kernel": "6.1.0-56-amd64",
        "rdma-core": "44.0",
        "firmware": "0.0.0",
        "vendor / part": "rxe0 0xffffff:0 · siw0 0x626d74:1",
        "node type": "rxe0 CA · siw0 RNIC",
        "transport": "rxe0 roce · siw0 iw",
    }


def test_a_kernel_matrix_has_an_environment_per_kernel_and_driver(tmp_path: Path) -> None:
    needs_node()
    new = "6.12.117+deb12-amd64"
    old_run, new_run = tmp_path / "6.1" / "allure", tmp_path / "6.12" / "allure"
    for directory, kernel, package in ((old_run, "6.1.0-56-amd64", "6.1.192-2"), (new_run, new, "6.12.117-1~deb12u1")):
        directory.mkdir(parents=True)
        devices = {
            name: {**identity, "kernel": kernel, "kernel_package": package} for name, identity in IDENTITIES.items()
        }
        (directory / ENVIRONMENT_FILE).write_text(json.dumps({"devices": devices}))
    config = tmp_path / "allurerc.mjs"
    config.write_text(config_module("r", env_config(merged_devices([old_run, new_run])), None))
    on_new = [{"name": "driver", "value": "rxe"}, {"name": "kernel", "value": new}]
    seen = node_eval(
        config,
        f"""
        const envs = Object.values(config.environments);
        console.log(JSON.stringify({{
            names: envs.map((e) => e.name),
            matched: envs.filter((e) => e.matcher({{ labels: {json.dumps(on_new)} }})).map((e) => e.name),
            variables: envs.find((e) => e.name === "rxe on {new}").variables,
        }}));""",
    )
    assert seen["names"] == ["rxe on 6.1.0-56-amd64", f"rxe on {new}", "siw on 6.1.0-56-amd64", f"siw on {new}"]
    assert seen["matched"] == [f"rxe on {new}"]
    assert seen["variables"]["kernel"] == f"{new} (6.12.117-1~deb12u1)"


def needs_node() -> None:
    try:
        allure_cli()
    except RuntimeError as exc:
        pytest.skip(str(exc))


def test_the_gate_fails_the_command_and_history_shows_what_changed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    needs_browser()
    code, output = report(tmp_path, FIRST, capsys)
    assert code == 1, output
    assert "quality gate FAILED" in output and "The number of failed tests 2 exceeds" in output
    index = tmp_path / "allure-report" / "index.html"
    # The page declares its embedded data before its app runs (else it may fetch it, which file:// refuses).
    html = index.read_text()
    assert "googletagmanager" not in html and "gtag(" not in html
    assert html.index(DATA_FIRST) < html.index('<script   src="data:text/javascript')
    # What a release manager sees: both drivers' environments, the categories, a result's man page and reproducer.
    with report_page(index, tmp_path / "profile1") as page:
        overview = pairs(page, "report-variables")
        assert overview["device"] == "rxe0 (rxe) · siw0 (siw)" and overview["kernel"] == "6.1.0-56-amd64"
        assert overview["vendor / part"] == "rxe0 0xffffff:0 · siw0 0x626d74:1"
        assert overview["quality gate"] == "FAILED: 2 deviations/crashes"
        assert page.get_by_test_id("tree-leaf-retries").count() == 0, "no check shows as a retry"
        assert {"rxe", "siw"} <= set(environments(page))
        rxe = select_environment(page, "rxe", "0xffffff:0")
        assert rxe == {
            "quality gate": "FAILED: 2 deviations/crashes",
            "device": "rxe0",
            "kernel": "6.1.0-56-amd64",
            "rdma-core": "44.0",
            "firmware": "0.0.0",
            "vendor / part": "0xffffff:0",
            "node type": "CA",
            "transport": "roce",
        }
        siw = select_environment(page, "siw", "0x626d74:1")
        assert (siw["device"], siw["transport"], siw["vendor / part"]) == ("siw0", "iw", "0x626d74:1")
        select_environment(page, "All", "rxe0 (rxe)")
        shown = categories(page)
        for name in (
            "New deviation (no waiver covers it)",
            "Crash or timeout",
            "Waived deviation (known: reason and link)",
            "Unsupported (the device does not advertise the capability)",
            "Not exercised (the precondition could not be reached)",
        ):
            assert name in shown, shown[:2000]
        page.get_by_text("Unsupported (the device does not advertise the capability)").click()
        page.get_by_text("unsupported: attr_ex.raw_packet_caps = 0").first.wait_for()
        open_result(page, index, "[RC RTR>RTS with PATH_MTU]")
        man = page.locator('a[href="https://man7.org/linux/man-pages/man3/ibv_modify_qp.3.html#NOTES"]')
        assert man.first.is_visible()
        assert page.get_by_text("reproducer (C): rxe0/").first.is_visible()
        assert page.get_by_text("reproducer (Python): rxe0/").first.is_visible()
        assert page.get_by_text("ibv_modify_qp(qp0, {qp_state=IBV_QPS_INIT").first.count() == 1
        assert page.outside_requests == [], "a report opened from disk asks no one for anything"
    # The next run: nothing new deviates or crashes, so the command passes, and history marks the fix.
    code, output = report(tmp_path, SECOND, capsys)
    assert code == 0, output
    assert len((tmp_path / "history.jsonl").read_text().splitlines()) == 2
    with report_page(index, tmp_path / "profile2") as page:
        assert with_transition(page, "fixed") == {'Environment: "rxe"': "2"}  # rxe's deviation and its crash
        assert pairs(page, "report-variables")["quality gate"] == "passed"


def test_the_report_renders_every_time_it_is_opened(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Allure's single-file page raced its own embedded data: one load in three stayed empty (see DATA_FIRST)."""
    needs_browser()
    report(tmp_path, FIRST, capsys)
    index = tmp_path / "allure-report" / "index.html"
    for attempt in range(6):
        with report_page(index, tmp_path / f"profile{attempt}") as page:
            page.get_by_test_id("report-variables").wait_for()
            assert page.outside_requests == []


def test_a_missing_results_directory_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert report_main([str(tmp_path / "nowhere"), "--output", str(tmp_path / "out")]) == 2
    assert "no Allure results directory" in capsys.readouterr().err
