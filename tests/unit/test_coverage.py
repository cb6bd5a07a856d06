"""The coverage command: every error and claim of a page, with its checks or why it has none."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_rdma import coverage
from pytest_rdma.cases import Case, make_case
from pytest_rdma.catalogue.model import Claim, Error, Verb
from pytest_rdma.kinds.load import KINDS
from pytest_rdma.kinds.registry import Kind
from pytest_rdma.report import junit

MAN = Path("/usr/share/man")
# The user's seed requests (the DET page is one of them) sit in shared/, beside the clone (or above
# the directory of its worktrees).
SEEDS = next(
    (p / "shared" / "seeds" for p in Path(__file__).resolve().parents if (p / "shared" / "seeds").is_dir()),
    Path(__file__).resolve().parents[3] / "shared" / "seeds",
)
SEED_VERBS = ("ibv_modify_qp", "ibv_create_qp_ex", "ibv_query_device_ex", "ibv_create_flow", "det_modify_qp")


def _two_variants(verb: Verb, claim: Claim) -> list[Case]:
    return [make_case(verb, claim, variant, {}) for variant in ("RC", "UD")]


def _never_run(check: Any) -> None:
    raise AssertionError("coverage must not run checks")


@pytest.fixture
def probe_kind(monkeypatch: pytest.MonkeyPatch) -> str:
    # KINDS comes from kinds.load, so the real kinds are registered first and ours is removed cleanly.
    monkeypatch.setitem(KINDS, "cov_probe", Kind("cov_probe", _two_variants, _never_run, "a probe"))
    return "cov_probe"


def frob(family: str = "ibv", **changes: Any) -> Verb:
    fields: dict[str, Any] = dict(
        name="ibv_frob",
        man="ibv_frob(3)",
        prototype="int ibv_frob(void);",
        returns="errno",
        summary="frob",
        family=family,
        counterpart="ibv_modify_qp" if family != "ibv" else "",
        errors=(
            Error("EINVAL", "bad input", covered_by=("refuses",)),
            Error("ENOMEM", "no memory", untestable="cannot be provoked deterministically"),
            Error("EPERM", "not allowed"),
        ),
        claims=(
            Claim("refuses", "cov_probe", "bad input is refused", "DESCRIPTION"),
            Claim(
                "atomic",
                "untestable",
                "nothing changes on failure",
                "NOTES",
                untestable="no way to observe the hardware state",
            ),
        ),
    )
    fields.update(changes)
    return Verb(**fields)


def fake_page(tmp_path: Path, *errnos: str) -> Path:
    pages = tmp_path / "man" / "man3"
    pages.mkdir(parents=True)
    body = "".join(f".SS {name}\nsomething failed\n" for name in errnos)
    (pages / "ibv_frob.3").write_text(f'.TH IBV_FROB 3\n.SH "ERRORS"\n{body}.SH "NOTES"\nENOTE is no error\n')
    return tmp_path / "man"


def test_each_error_and_claim_is_listed_with_its_checks_or_reason(probe_kind: str, tmp_path: Path) -> None:
    man = fake_page(tmp_path, "EINVAL", "ENOMEM", "EPERM", "ENXIO")
    (entry,) = coverage.coverage([frob()], man_dirs=(man,))
    by_what = {item.what: item for item in entry.items}
    assert by_what["error EINVAL"].checks == ["test_ibv_frob[refuses-RC]", "test_ibv_frob[refuses-UD]"]
    assert by_what["error ENOMEM"].reasons == ["untestable: cannot be provoked deterministically"]
    assert by_what["claim refuses"].accounted
    assert by_what["claim atomic"].reasons == ["untestable: no way to observe the hardware state"]
    # Not accounted: an error with neither checks nor a reason, and an errno only the page lists.
    assert [item.what for item in entry.missing] == ["error EPERM", "error ENXIO"]
    assert "catalogue entry does not" in by_what["error ENXIO"].problem


def test_the_text_report_flags_what_is_not_accounted_for(probe_kind: str, tmp_path: Path) -> None:
    text = coverage.render([frob()], man_dirs=(fake_page(tmp_path, "EINVAL"),))
    assert "  error EINVAL: bad input  -> ok\n      covered by claim refuses (2 checks)\n" in text
    assert (
        "  claim refuses: bad input is refused [ibv_frob(3) DESCRIPTION]  -> ok\n      2 check(s):\n"
        "        test_ibv_frob[refuses-RC]\n        test_ibv_frob[refuses-UD]\n" in text
    )
    assert "  error EPERM: not allowed  -> NOT ACCOUNTED\n" in text
    assert text.rstrip().endswith("1 not accounted for\n  NOT ACCOUNTED: ibv_frob: error EPERM")


def test_the_markdown_report_is_a_table_per_verb(probe_kind: str, tmp_path: Path) -> None:
    text = coverage.render([frob()], fmt="markdown", man_dirs=(tmp_path,))
    assert "## ibv_frob — ibv_frob(3)\n\n| item | says | checks | status |\n|---|---|---|---|\n" in text
    assert (
        "| claim refuses | bad input is refused [ibv_frob(3) DESCRIPTION] | "
        "`test_ibv_frob[refuses-RC]`<br>`test_ibv_frob[refuses-UD]` | covered |" in text
    )
    assert "| error EPERM | not allowed | — | **NOT ACCOUNTED**: neither covered" in text


def test_a_family_without_provider_says_why_its_checks_cannot_run(probe_kind: str, tmp_path: Path) -> None:
    det = frob("det", name="det_frob", man="det_frob(3)", errors=())
    (entry,) = coverage.coverage([det], man_dirs=(tmp_path,))
    refuses = entry.items[0]
    assert refuses.checks and refuses.reasons[0].startswith("blocked: no DET provider"), refuses


def test_a_claim_whose_kind_generates_nothing_is_not_accounted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(KINDS, "cov_empty", Kind("cov_empty", lambda v, c: [], _never_run, "generates nothing"))
    verb = frob(errors=(), claims=(Claim("refuses", "cov_empty", "refused", "NOTES"),))
    (entry,) = coverage.coverage([verb], man_dirs=(tmp_path,))
    assert [item.problem for item in entry.missing] == ["claim kind 'cov_empty' generated no check"]


def test_a_provider_run_shows_each_check_outcome(probe_kind: str, tmp_path: Path) -> None:
    junit = tmp_path / "rxe.xml"
    junit.write_text(
        textwrap.dedent("""\
        <testsuites><testsuite name="pytest">
          <testcase classname="suites.test_verbs" name="test_ibv_frob[rxe0-refuses-RC]"/>
          <testcase classname="suites.test_verbs" name="test_ibv_frob[rxe0-refuses-UD]">
            <skipped type="pytest.skip" message="unsupported: QP type UD">x</skipped></testcase>
          <testcase classname="suites.test_verbs" name="test_ibv_frob[siw0-refuses-RC]">
            <failure message="deviation">x</failure></testcase>
        </testsuite></testsuites>""")
    )
    text = coverage.render([frob()], junit, man_dirs=(tmp_path,))
    assert "test_ibv_frob[refuses-RC]  (rxe0: conforms; siw0: DEVIATES)" in text
    assert "test_ibv_frob[refuses-UD]  (rxe0: skipped: unsupported: QP type UD)" in text


def test_a_run_written_by_our_junit_writer_shows_each_check_outcome(probe_kind: str, tmp_path: Path) -> None:
    base = {"verb": "ibv_frob", "claim": "refuses", "duration": 0.1, "layer": "provider"}
    records = [
        {
            **base,
            "device": "rxe0",
            "driver": "rxe",
            "variant": "RC",
            "stable_id": "test_ibv_frob[refuses-RC]",
            "outcome": "conforms",
        },
        {
            **base,
            "device": "rxe0",
            "driver": "rxe",
            "variant": "UD",
            "stable_id": "test_ibv_frob[refuses-UD]",
            "outcome": "unsupported",
            "reason": "transport = iwarp",
        },
        {
            **base,
            "device": "siw0",
            "driver": "siw",
            "variant": "RC",
            "stable_id": "test_ibv_frob[refuses-RC]",
            "outcome": "deviates",
            "expected": "refused",
            "observed": "returned 0",
        },
        {
            **base,
            "device": "siw0",
            "driver": "siw",
            "variant": "UD",
            "stable_id": "test_ibv_frob[refuses-UD]",
            "outcome": "crash",
            "reason": "worker 'gw0' crashed",
        },
    ]
    junit.write(tmp_path / "run.xml", junit.document(records, {}))
    text = coverage.render([frob()], tmp_path / "run.xml", man_dirs=(tmp_path,))
    assert "test_ibv_frob[refuses-RC]  (rxe0: conforms; siw0: DEVIATES)" in text
    assert (
        "test_ibv_frob[refuses-UD]  (rxe0: unsupported: transport = iwarp; siw0: crash: worker 'gw0' crashed)" in text
    )


def test_errors_are_read_from_the_installed_page() -> None:
    if not (MAN / "man3" / "ibv_create_flow.3.gz").exists():
        pytest.skip("ibv_create_flow(3) is not installed (libibverbs-dev)")
    assert coverage.page_errnos("ibv_create_flow(3)") == {"EINVAL", "ENOMEM", "ENXIO", "EPERM"}
    # A page without an ERRORS section names no errno (only "the value of errno").
    assert coverage.page_errnos("ibv_modify_qp(3)") == frozenset()
    assert coverage.page_errnos("ibv_no_such_page(3)") is None


def test_the_command_refuses_an_unknown_verb(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        coverage.main(["--verb", "ibv_no_such_verb"])
    assert exited.value.code == 2
    assert "unknown verb ibv_no_such_verb; known: " in capsys.readouterr().err


def _page_dirs() -> tuple[Path, ...]:
    return (MAN, SEEDS) if SEEDS.is_dir() else (MAN,)


@pytest.mark.parametrize("name", SEED_VERBS)
def test_every_error_and_claim_of_the_seed_pages_is_accounted_for(name: str) -> None:
    from pytest_rdma.verbs import CATALOGUE

    verbs = {verb.name: verb for verb in CATALOGUE}
    assert name in verbs, f"{name} is not described in pytest_rdma/verbs.py"
    verb = verbs[name]
    listed = coverage.page_errnos(verb.man, _page_dirs())
    if listed is None:
        where = "its page is not installed" + ("" if SEEDS.is_dir() else f" and {SEEDS} is absent")
        pytest.skip(f"cannot read the errors of {verb.man}: {where}")
    (entry,) = coverage.coverage([verb], _page_dirs(), catalogue=CATALOGUE)
    assert entry.items, f"{name} lists no error and no claim"
    assert not coverage.unaccounted([entry]), coverage.render_report([entry])
    # Every errno the page lists is in some entry documented by that page.
    given = {error.errno for other in CATALOGUE if other.man == verb.man for error in other.errors}
    assert listed <= given, sorted(listed - given)
