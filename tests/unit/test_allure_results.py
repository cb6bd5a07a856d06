"""Allure results from the records: each result reads as a statement about a driver (issue 12).

Pure conversion first (allure_model.py, links.py, redact.py), over hand-picked records and over
a record of every case of the catalogue; then the writer in a real pytest run under xdist
(allure_writer.py), with a crash, a waiver, an error and a check without a device.
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest
from allure_commons import model2
from allure_records import C_TEXT, PY_TEXT, cases, find, record

from pytest_rdma.expectations import SHIPPED_DIR, load
from pytest_rdma.outcomes import CONFORMS, CRASH, DEVIATES, ERROR, NOT_EXERCISED, TIMEOUT, UNSUPPORTED, WAIVED
from pytest_rdma.report import junit, links
from pytest_rdma.report.allure_config import read_environment
from pytest_rdma.report.allure_model import convert
from pytest_rdma.report.allure_writer import AllureWriter, ResultFiles, result_file, write_from_results
from pytest_rdma.report.record import merge
from pytest_rdma.report.redact import has_machine_path, redact
from pytest_rdma.report.results import Results

MODIFY = "test_ibv_modify_qp[forbidden-attrs-RC-RTR>RTS-with-PATH_MTU]"
REPR = re.compile(r"<[\w.]+ object at|<IBV_\w+: \d+>|IBV_QPT_\w+|\bVar\(|\bDev\(|\bNeed\(")


def labels(result: dict) -> dict[str, str]:
    return {label["name"]: label["value"] for label in result["labels"]}


def texts(data: object) -> list[str]:
    """Every string in a JSON-able value."""
    if isinstance(data, str):
        return [data]
    if isinstance(data, dict):
        return [text for value in data.values() for text in texts(value)]
    if isinstance(data, list):
        return [text for value in data for text in texts(value)]
    return []


# -- one result, read as a statement -----------------------------------------------------------------
def test_a_deviation_reads_as_a_statement_with_its_evidence() -> None:
    converted = convert(record(find(MODIFY), "rxe0", DEVIATES), stop_ms=10_000, python_text=PY_TEXT)
    result = converted.document
    claim = find(MODIFY).says
    # The name: the claim in words plus the case, not a test function's name or its docstring.
    assert result["name"] == f"{claim} [RC RTR>RTS with PATH_MTU]"
    assert result["status"] == "failed" and result["statusDetails"]["known"] is False
    assert result["statusDetails"]["message"] == (
        "deviates from ibv_modify_qp(3) NOTES: expected the call fails with EINVAL; observed returned 0"
    )
    # Description: what the page says (its section, linked), what was done, what was observed.
    description = result["description"]
    assert (
        "**What the man page says** ([ibv_modify_qp(3) NOTES]"
        "(https://man7.org/linux/man-pages/man3/ibv_modify_qp.3.html#NOTES), in our words):"
    ) in description
    assert f"> {claim}" in description
    assert "**What was done:** on rxe0 (driver rxe, roce), case `RC-RTR>RTS-with-PATH_MTU`" in description
    assert "- expected: the call fails with EINVAL\n- observed: returned 0" in description
    # Links: the man page at its section, and the other public source (IBTA has none).
    assert result["links"][0] == {
        "name": "ibv_modify_qp(3) NOTES",
        "type": "link",
        "url": "https://man7.org/linux/man-pages/man3/ibv_modify_qp.3.html#NOTES",
    }
    assert any(
        link["url"].startswith("https://elixir.bootlin.com/linux/v6.1/source/drivers/infiniband/core/verbs.c")
        for link in result["links"]
    )
    # Labels for the tree (driver > verb > claim) and for filters, categories and environments.
    assert (
        labels(result).items()
        >= {
            "parentSuite": "rxe",
            "suite": "ibv_modify_qp",
            "subSuite": "forbidden-attrs",
            "driver": "rxe",
            "device": "rxe0",
            "verb": "ibv_modify_qp",
            "claim": "forbidden-attrs",
            "qp_type": "RC",
            "outcome": "deviates",
        }.items()
    )
    assert result["parameters"] == [
        {"name": "qp_type", "value": "RC"},
        {"name": "case", "value": "RC-RTR>RTS-with-PATH_MTU"},
        {"name": "device", "value": "rxe0"},
    ]
    # The verb calls as steps, by phase; the decisive call is the failed one.
    phases = {step["name"]: step for step in result["steps"]}
    assert list(phases) == ["setup: 3 verb calls", "call: 1 verb call", "teardown: 1 verb call"]
    (call,) = phases["call: 1 verb call"]["steps"]
    assert call["name"].startswith("ibv_modify_qp(qp0, {qp_state=IBV_QPS_INIT") and call["name"].endswith("-> 0")
    assert call["status"] == "failed" and phases["call: 1 verb call"]["status"] == "failed"
    # Its reproducers, C and Python, attached.
    attached = {a["name"]: converted.attachments[a["source"]].content for a in result["attachments"]}
    assert attached == {
        f"reproducer (C): rxe0/{MODIFY}.c": C_TEXT.encode(),
        f"reproducer (Python): rxe0/{MODIFY}.py": PY_TEXT.encode(),
    }


def test_the_result_is_allure_python_commons_model_written_by_its_file_logger(tmp_path: Path) -> None:
    """The conversion gives model2's TestResult; ResultFiles (AllureFileLogger) writes it under the result's
    own uuid, which the manifest names before the file exists, as the JSON `document` says."""
    converted = convert(record(find(MODIFY), "rxe0", WAIVED), stop_ms=10_000, python_text=PY_TEXT)
    result = converted.result
    assert isinstance(result, model2.TestResult) and isinstance(result.steps[0], model2.TestStepResult)
    assert isinstance(result.statusDetails, model2.StatusDetails) and result.statusDetails.known is True
    assert {(label.name, label.value) for label in result.labels} >= {("framework", "pytest-rdma"), ("driver", "rxe")}
    ResultFiles(tmp_path).report_result(result)
    (written,) = tmp_path.iterdir()
    assert written.name == result_file(result) == f"{result.uuid}-result.json"
    assert json.loads(written.read_text()) == converted.document
    assert converted.document["statusDetails"]["known"] is True  # False and True are kept, empty values left out


@pytest.mark.parametrize(
    ("outcome", "status", "message"),
    [
        (CONFORMS, "passed", ""),
        (DEVIATES, "failed", "deviates from"),
        (
            WAIVED,
            "failed",
            "waived: rxe accepts it (a known provider bug) (https://bugzilla.kernel.org/show_bug.cgi?id=1)",
        ),
        (UNSUPPORTED, "skipped", "unsupported: attr_ex.raw_packet_caps = 0"),
        (NOT_EXERCISED, "skipped", "not exercised: the QP could not be moved to RTS first"),
        (CRASH, "broken", "crash: "),
        (TIMEOUT, "broken", "timeout: "),
        (ERROR, "broken", "error: "),
    ],
)
def test_each_outcome_has_its_status_label_and_message(outcome: str, status: str, message: str) -> None:
    result = convert(record(find(MODIFY), "siw0", outcome), stop_ms=10_000).document
    assert result["status"] == status
    assert labels(result)["outcome"] == outcome
    assert result["statusDetails"].get("message", "").startswith(message)  # an empty one is left out
    # A waived deviation is a known failure: Allure 3 accepts it, and its quality gate ignores it.
    assert result["statusDetails"]["known"] is (outcome == WAIVED)


def test_a_waived_deviation_names_its_reason_and_link() -> None:
    result = convert(record(find(MODIFY), "rxe0", WAIVED), stop_ms=10_000).document
    assert (
        labels(result)["known_issue"] == "rxe accepts it (a known provider bug) "
        "(https://bugzilla.kernel.org/show_bug.cgi?id=1)"
    )
    assert {
        "name": "waiver: https://bugzilla.kernel.org/show_bug.cgi?id=1",
        "type": "issue",
        "url": "https://bugzilla.kernel.org/show_bug.cgi?id=1",
    } in result["links"]
    assert "**Waiver** (applied, rxe.toml:5): rxe accepts it" in result["description"]


def test_one_check_on_two_devices_is_two_results_never_a_retry() -> None:
    one, two = (convert(record(find(MODIFY), device, CONFORMS), stop_ms=1).document for device in ("rxe0", "siw0"))
    assert one["testCaseId"] == two["testCaseId"], "history follows the check across devices and runs"
    assert one["parameters"] != two["parameters"] and one["historyId"] != two["historyId"]


def test_a_users_own_device_test_is_one_result_per_parameter_set() -> None:
    """Its stable id is the function's name, the same for every parameter set: it must not make them retries."""
    own = {
        "stable_id": "test_mine",
        "case_id": "",
        "verb": "",
        "claim": "",
        "claim_text": "",
        "params": {},
        "device": "rxe0",
        "driver": "rxe",
        "outcome": CONFORMS,
    }
    one, two = (
        convert(
            {**own, "nodeid": f"test_x.py::test_mine[rxe0-{n}]", "title": f"test_mine[rxe0-{n}]"}, stop_ms=1
        ).document
        for n in (1, 2)
    )
    assert (one["testCaseId"], one["parameters"]) != (two["testCaseId"], two["parameters"])
    assert one["name"] == "test_mine[rxe0-1]"


def test_the_decisive_phase_gives_the_waiver_its_status() -> None:
    base = {
        "outcome": CONFORMS,
        "when": "setup",
        "pytest_outcome": "passed",
        "duration": 0.1,
        "waiver": {"status": "fixed"},
    }
    phases = [
        base,
        {**base, "when": "call", "outcome": WAIVED, "waiver": {"status": "applied"}},
        {**base, "when": "teardown"},
    ]
    assert merge({"stable_id": "x"}, phases, "gw0")["waiver"] == {"status": "applied"}


# -- every record of the catalogue ---------------------------------------------------------------------
def test_every_record_cites_each_page_once_links_man7_and_is_unique() -> None:
    """Over every case of the catalogue, on both drivers, as a deviation (the richest result)."""
    seen: dict[tuple, str] = {}
    everything = cases()
    assert len(everything) > 600
    for case in everything:
        for device in ("rxe0", "siw0"):
            data = record(case, device, DEVIATES)
            assert not links.REPEATED_PAGE.search(data["ref"]), f"{case.stable_id}: the record cites {data['ref']}"
            for source in data["sources"]:
                assert not source["section"].startswith(source["ref"]), f"{case.stable_id}: {source}"
            result = convert(data, stop_ms=1).document
            xml = junit.testcase(data)
            for text in texts(result) + [value for element in xml.iter() for value in element.attrib.values()]:
                assert not links.REPEATED_PAGE.search(text), f"{case.stable_id}: page cited twice: {text}"
                assert not has_machine_path(text), f"{case.stable_id}: a machine's path: {text}"
            for source in data["sources"]:
                if source["kind"] == "man" and source["ref"].startswith("ibv_"):
                    page, number = source["ref"][:-3], source["ref"][-2]
                    url = f"https://man7.org/linux/man-pages/man{number}/{page}.{number}.html#"
                    assert any(link["url"].startswith(url) for link in result["links"]), (case.stable_id, source)
            assert case.says in result["name"] and not REPR.search(result["name"]), result["name"]
            assert all(not REPR.search(p["value"]) for p in result["parameters"]), result["parameters"]
            key = (result["testCaseId"], json.dumps(result["parameters"]), labels(result)["driver"])
            assert key not in seen, f"{case.stable_id} would be a retry of {seen[key]}"
            seen[key] = case.stable_id


def test_every_shipped_waiver_link_is_cited_once_and_linked() -> None:
    for waiver in load([SHIPPED_DIR]).all():
        link = links.text_link(waiver.link)
        assert not links.REPEATED_PAGE.search(link.name), waiver.link
        assert link.url, f"{waiver.where}: {waiver.link!r} has no URL"


@pytest.mark.parametrize(
    ("ref", "section", "cited"),
    [
        ("ibv_modify_qp(3)", "NOTES", "ibv_modify_qp(3) NOTES"),
        ("ibv_modify_qp(3)", "ibv_modify_qp(3) NOTES", "ibv_modify_qp(3) NOTES"),
        ("ibv_modify_qp(3) ibv_modify_qp(3)", "NOTES", "ibv_modify_qp(3) NOTES"),
        ("IBTA Vol. 1 r1.7 §11.2.5.2", "", "IBTA Vol. 1 r1.7 §11.2.5.2"),
    ],
)
def test_a_source_is_cited_with_its_page_once(ref: str, section: str, cited: str) -> None:
    assert links.cite(ref, section) == cited


@pytest.mark.parametrize(
    ("text", "url"),
    [
        ("ibv_create_qp(3) RETURN VALUE", "https://man7.org/linux/man-pages/man3/ibv_create_qp.3.html#RETURN_VALUE"),
        ("ibv_create_flow(3) NOTES, ERRORS", "https://man7.org/linux/man-pages/man3/ibv_create_flow.3.html#NOTES"),
        ("rdma_cm(7)", "https://man7.org/linux/man-pages/man7/rdma_cm.7.html"),
        ("det_modify_qp(3) DESCRIPTION", ""),  # not an rdma-core page: man7.org does not have it
        ("https://github.com/linux-rdma/rdma-core/issues/1", "https://github.com/linux-rdma/rdma-core/issues/1"),
    ],
)
def test_references_link_to_man7_or_stay_text(text: str, url: str) -> None:
    assert links.text_link(text).url == url


def test_redact_leaves_no_machine_path() -> None:
    text = (
        'File "/home/ci/builds/42/pytest_rdma/kinds/check.py", line 9; '
        "/usr/lib/python3/dist-packages/_pytest/runner.py; /tmp/lab/rxe0/reproducers; /dev/kmsg; "
        "https://man7.org/linux/man-pages/man3/x.3.html; INIT>RTR/RTS"
    )
    out = redact(text)
    assert not has_machine_path(out), out
    assert "_pytest/runner.py" in out and ".../rxe0/reproducers" in out
    assert "/dev/kmsg" in out and "https://man7.org/linux/man-pages/man3/x.3.html" in out and "INIT>RTR/RTS" in out


# -- the writer, in a pytest run under xdist ---------------------------------------------------------
CONFTEST = """
import pytest

from pytest_rdma.provider.identity import DeviceIdentity

IDENTITIES = {
    "rxe0": DeviceIdentity("rxe0", "rxe", "CA", "roce", "0.0.0", "0xffffff", "0", "6.1.0-56-amd64", "44.0"),
    "siw0": DeviceIdentity("siw0", "siw", "RNIC", "iw", "0.0.0", "0x626d74", "1", "6.1.0-56-amd64", "44.0"),
}


class Dut:
    def __init__(self, name):
        self.name = name
        self.identity = IDENTITIES[name]


@pytest.fixture(scope="session")
def rdma_dut(request):
    return Dut(request.param)
"""

TESTS = """
import os

import pytest

from pytest_rdma.generate import active, expand
from pytest_rdma.observations import Returned
from pytest_rdma.outcomes import Deviation

CASES = [case for verb in active().verbs if verb.name == "ibv_query_gid" for case in expand(verb)][:3]
PLAN = {("rxe0", 0): "deviates", ("siw0", 0): "deviates", ("rxe0", 1): "crash", ("siw0", 1): "unsupported",
        ("siw0", 2): "error"}


@pytest.mark.parametrize("rdma_case", CASES, ids=[case.id for case in CASES])
@pytest.mark.parametrize("rdma_dut", ["rxe0", "siw0"], indirect=True)
def test_ibv_query_gid(rdma_dut, rdma_case):
    what = PLAN.get((rdma_dut.name, CASES.index(rdma_case)), "conforms")
    if what == "deviates":
        raise Deviation("EINVAL for an index past the table", "returned 0", Returned(0))
    if what == "unsupported":
        pytest.skip("unsupported: attr.phys_port_cnt = 0")
    if what == "crash" and not os.environ.get("DEMO_SERIAL"):  # without xdist a crash ends the run
        os._exit(3)
    if what == "error":
        raise RuntimeError("cannot open " + os.path.abspath("no-such-file"))


@pytest.mark.parametrize("rdma_case", CASES[:1], ids=[CASES[0].id])
def test_without_device(rdma_case):
    pytest.skip("blocked: no provider of this API family here")
"""


@pytest.mark.parametrize("xdist", [True, False], ids=["xdist", "serial"])
def test_the_writer_writes_each_check_once_from_the_controller(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, xdist: bool
) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_demo=TESTS)
    first = cases()[[case.verb for case in cases()].index("ibv_query_gid")]
    expect = pytester.mkdir("expect")
    (expect / "rxe.toml").write_text(
        textwrap.dedent(f'''
        [[waiver]]
        id = "{first.stable_id}"
        reason = "rxe answers 0 here (known)"
        link = "ibv_query_gid(3) RETURN VALUE"
        observed = {{ returned = 0 }}
    ''')
    )
    out = pytester.path / "allure"
    out.mkdir()
    # In the folder already: allure-pytest's result, an earlier run's result of rxe0 (listed in rxe0's
    # manifest), and a run of another device into the same folder. Only rxe0's earlier result goes.
    foreign = out / "0000-result.json"
    foreign.write_text('{"name": "allure-pytest wrote this", "labels": [{"name": "framework", "value": "pytest"}]}')
    earlier = {"rxe0": "1111-result.json", "mlx5_0": "2222-result.json"}
    for device, name in earlier.items():
        (out / name).write_text(json.dumps({"name": f"left by {device}'s run", "labels": []}))
        (out / f"pytest-rdma-files-{device}.txt").write_text(f"{name}\n../outside.txt\n")
    (pytester.path / "outside.txt").write_text("never ours to delete")
    if not xdist:
        monkeypatch.setenv("DEMO_SERIAL", "1")
    run = pytester.runpytest_subprocess(
        *(("-n", "1") if xdist else ("-p", "no:xdist")),
        "-p",
        "no:cacheprovider",
        "--rdma-expectations",
        str(expect),
        "--rdma-allure",
        str(out),
        "--rdma-json",
        "results.json",
        "--rdma-junit",
        "junit.xml",
    )
    assert run.ret == pytest.ExitCode.TESTS_FAILED, run.stdout.str()
    assert foreign.exists() and (out / earlier["mlx5_0"]).exists() and not (out / earlier["rxe0"]).exists()
    assert (pytester.path / "outside.txt").exists()
    results = [json.loads(path.read_text()) for path in out.glob("*-result.json")]
    results = [r for r in results if labels(r).get("framework") == "pytest-rdma"]
    by_device = {(labels(r)["device"], r["parameters"][-2]["value"]): r for r in results if r["parameters"]}
    # 3 cases x 2 devices, and the check without a device; each once (the earlier run's result is gone).
    assert len(results) == 7, [r["name"] for r in results]
    keys = {(r["testCaseId"], json.dumps(r["parameters"]), labels(r).get("driver")) for r in results}
    assert len(keys) == len(results), "no result is a retry of another"
    outcomes = {key: labels(r)["outcome"] for key, r in by_device.items()}
    assert outcomes[("rxe0", first.variant)] == WAIVED and outcomes[("siw0", first.variant)] == DEVIATES
    crashed = [r for r in results if labels(r)["outcome"] == CRASH]
    if xdist:  # the controller writes the result of the check that killed its worker
        assert len(crashed) == 1 and crashed[0]["status"] == "broken" and labels(crashed[0])["device"] == "rxe0"
    assert {labels(r)["outcome"] for r in results} == {WAIVED, DEVIATES, UNSUPPORTED, ERROR, CONFORMS} | (
        {CRASH} if xdist else set()
    )
    # Two devices in this run: the check without one stays in no driver's environment.
    (nodevice,) = [r for r in results if r["name"].startswith(first.says) and labels(r)["device"] == "no device"]
    assert labels(nodevice)["driver"] == "no device"
    # Each driver's identity, for its environment in the report.
    devices = read_environment(out)
    assert devices["siw0"]["transport"] == "iw" and devices["rxe0"]["driver"] == "rxe"
    # No message names this machine's paths (the error's path is under pytester's directory), in any report.
    for path in [*out.iterdir(), pytester.path / "results.json", pytester.path / "junit.xml"]:
        text = path.read_text()
        assert str(pytester.path) not in text and not has_machine_path(text), (path.name, text[:500])
    (error,) = [r for r in results if labels(r)["outcome"] == ERROR]
    assert "cannot open no-such-file" in error["statusDetails"]["message"]
    # The lab's way: written after the run from its results file, by another process, the same results.
    after = pytester.path / "allure-after"
    assert write_from_results(pytester.path / "results.json", after, pytester.path / "reproducers", ["rxe0"]) == []
    assert comparable(after) == comparable(out, ours_only=True)
    assert read_environment(after) == devices
    timed = [
        r for r in map(json.loads, map(Path.read_text, after.glob("*-result.json"))) if labels(r)["outcome"] != CRASH
    ]
    assert len({r["stop"] for r in timed}) > 1, "each result ends when its check ended, not when it was written"


def comparable(directory: Path, ours_only: bool = False) -> list[str]:
    """The Allure results in `directory`, each with its attachments' contents, without what names one
    writing (uuids, file names) or when it was written (start and stop, the crash's: it has no stop)."""
    found = []
    for path in directory.glob("*-result.json"):
        result = json.loads(path.read_text())
        if ours_only and labels(result).get("framework") != "pytest-rdma":
            continue
        for attachment in result.get("attachments", []):
            attachment["source"] = (directory / attachment["source"]).read_text()
        for key in ("uuid", *(("start", "stop") if labels(result)["outcome"] == CRASH else ())):
            result.pop(key, None)
        found.append(json.dumps(result, sort_keys=True))
    return sorted(found)


def test_a_two_host_reproducer_is_two_attachments_each_a_program_of_its_own(tmp_path: Path) -> None:
    """Each side builds alone on its own host: one attachment holding both would not compile."""
    check = record(find(MODIFY), "rxe0", DEVIATES)
    sides = {"receiver": "rxe0/x.receiver.c", "sender": "rxe0/x.sender.c"}
    check["reproducer"] = {"dir": "reproducers", "c_text": "both", "pair": {**sides, "commands": {}}}
    reproducers = tmp_path / "reproducers"
    (reproducers / "rxe0").mkdir(parents=True)

    def program(side: str) -> str:
        return f"int main(void) {{ return 0; }} /* the {side} */\n"

    for side, name in sides.items():
        (reproducers / name).write_text(program(side))
    results = Results(("rxe0",))
    writer = AllureWriter(tmp_path / "allure", results, reproducers)
    writer.start()
    writer.append(check)
    (reproducers / sides["sender"]).unlink()  # a side's file gone: the record's text of both, as before
    writer.append({**check, "nodeid": check["nodeid"] + "-again"})
    writer.finish()
    out = tmp_path / "allure"
    written = sorted(
        (json.loads(path.read_text()) for path in out.glob("*-result.json")), key=lambda r: len(r["attachments"])
    )
    attached = [[(a["name"], (out / a["source"]).read_text()) for a in result["attachments"]] for result in written]
    assert attached[0] == [("reproducer (C): rxe0/x.receiver.c (the peer's host), then rxe0/x.sender.c", "both")]
    assert attached[1] == [
        ("reproducer (C), the receiver, run on the peer's host: rxe0/x.receiver.c", program("receiver")),
        ("reproducer (C), the sender, run on the device's host: rxe0/x.sender.c", program("sender")),
    ]


def test_a_result_does_not_depend_on_the_order_of_its_records_params() -> None:
    """A results file read back has each record's params sorted by name (the lab writes its Allure results from
    one): every case of the catalogue gets the same name, parameters and description either way."""
    differ = []
    for case in cases():
        written = record(case, "rxe0")
        read_back = json.loads(json.dumps(written, sort_keys=True))
        if list(read_back["params"]) == list(written["params"]):
            continue
        a, b = (convert(r, stop_ms=10_000).document for r in (written, read_back))
        if (a["name"], a["parameters"], a["description"]) != (b["name"], b["parameters"], b["description"]):
            differ.append(case.stable_id)
    assert not differ, f"{len(differ)} cases, e.g. {differ[:3]}"
