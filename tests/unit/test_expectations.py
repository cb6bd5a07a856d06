"""Expectations files: parsing, rejection with file and line, and strict mode as a CI gate."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_helpers import WAIVERS, make_project

from pytest_rdma.expectations import SHIPPED_DIR, load, parse

GOOD = '''
# known deviations
[[waiver]]
id = "test_ibv_modify_qp[required-attrs-RC-INIT>RTR-*]"
reason = "does not check the AV"
link = "ibv_modify_qp(3) DESCRIPTION"
observed = "returned 0"

[[waiver]]
id = "test_ibv_x[a?c]"
reason = "r"
link = "https://example.org/1"
'''


def test_waivers_are_read_with_their_driver_and_line() -> None:
    waivers = parse(GOOD, Path("rxe.toml"))
    assert [(w.driver, w.line, w.observed) for w in waivers] == [("rxe", 3, "returned 0"), ("rxe", 9, "")]
    assert parse('driver = "mlx5"\n' + GOOD, Path("x.toml"))[0].driver == "mlx5"


def test_patterns_treat_brackets_literally_and_star_as_anything() -> None:
    first, second = parse(GOOD, Path("rxe.toml"))
    assert first.matches("test_ibv_modify_qp[required-attrs-RC-INIT>RTR-without-AV]")
    assert not first.matches("test_ibv_modify_qp[required-attrs-UC-INIT>RTR-without-AV]")
    assert second.matches("test_ibv_x[abc]") and not second.matches("test_ibv_x[b]")


@pytest.mark.parametrize(("text", "line", "says"), [
    ('[[waiver]]\nid = "t"\nlink = "l"\n', 1, "a waiver without a reason is rejected"),
    ('\n[[waiver]]\nid = "t"\nreason = "  "\nlink = "l"\n', 2, "a waiver without a reason is rejected"),
    ('[[waiver]]\nid = "t"\nreason = "r"\n', 1, "'link'"),
    ('[[waiver]]\nid = "t"\nreason = "r"\nlink = "l"\n\n[[waiver]]\nreason = "r"\nlink = "l"\n', 6, "'id'"),
    ('[[waiver]]\nid = "t"\nreason = "r"\nlink = "l"\nreasn = "x"\n', 1, "unknown key 'reasn'"),
    ('[[waiver]]\nid = "t"\nreason = "r\nlink = "l"\n', 3, "malformed"),
    ('waivers = 1\n', 1, "unknown key 'waivers'"),
    ('[[waiver]]\nid="t"\nreason="r"\nlink="l"\n[[waiver]]\nid="t"\nreason="r"\nlink="l"\n', 5, "repeats"),
])
def test_a_malformed_file_names_file_and_line(text: str, line: int, says: str) -> None:
    with pytest.raises(pytest.UsageError) as raised:
        parse(text, Path("/x/rxe.toml"))
    assert str(raised.value).startswith(f"/x/rxe.toml:{line}: malformed expectations file")
    assert says in str(raised.value)


def test_shipped_files_are_valid_and_cover_rxe_and_siw() -> None:
    assert {p.stem for p in SHIPPED_DIR.glob("*.toml")} >= {"rxe", "siw"}
    expectations = load(None)
    for waivers in expectations.by_driver.values():
        assert all(w.reason and w.link for w in waivers)


def test_malformed_file_is_a_usage_error_of_the_run(pytester: pytest.Pytester) -> None:
    expect = make_project(pytester, waivers={"rxe": '[[waiver]]\nid = "x"\nlink = "l"\n'})
    result = pytester.runpytest("-p", "no:xdist", "--rdma-expectations", str(expect))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{expect / 'rxe.toml'}:1: malformed expectations file*without a reason*"])


def test_strict_passes_with_the_expectations_and_fails_when_a_waiver_is_removed(
        pytester: pytest.Pytester) -> None:
    expect = make_project(pytester)
    passed = pytester.runpytest("-p", "no:xdist", "--rdma-strict", "--rdma-expectations", str(expect))
    passed.assert_outcomes(passed=3, skipped=3, xfailed=2)
    assert passed.ret == pytest.ExitCode.OK

    (expect / "siw.toml").write_text("")  # siw's waiver removed: its deviation is new again
    failed = pytester.runpytest("-p", "no:xdist", "--rdma-strict", "--rdma-expectations", str(expect))
    failed.assert_outcomes(passed=3, skipped=3, xfailed=1, failed=1)
    assert failed.ret == pytest.ExitCode.TESTS_FAILED
    failed.stdout.fnmatch_lines(["FAILED *test_ibv_demo[[]siw0-keeps-promise-deviant[]]*"])


def test_strict_fails_a_waived_check_that_now_conforms(pytester: pytest.Pytester) -> None:
    stale = WAIVERS["rxe"].replace("deviant", "conforming")
    expect = make_project(pytester, waivers={"rxe": WAIVERS["rxe"] + stale, "siw": WAIVERS["siw"]})
    strict = pytester.runpytest("-p", "no:xdist", "--rdma-strict", "--rdma-expectations", str(expect))
    strict.assert_outcomes(passed=2, skipped=3, xfailed=2, failed=1)
    strict.stdout.fnmatch_lines([
        "*fixed: remove the waiver 'test_ibv_demo[[]keeps-promise-conforming[]]' at *rxe.toml:8*"
        "now conforms on rxe0*",
    ])
    lenient = pytester.runpytest("-p", "no:xdist", "--rdma-expectations", str(expect))
    lenient.assert_outcomes(passed=2, skipped=3, xfailed=2, xpassed=1)
    assert lenient.ret == pytest.ExitCode.OK
    lenient.stdout.fnmatch_lines(["*fixed: remove the waiver*rxe0 now conforms [[]XPASS[]]"])


def test_without_strict_a_new_deviation_still_fails(pytester: pytest.Pytester) -> None:
    expect = make_project(pytester, waivers={})
    result = pytester.runpytest("-p", "no:xdist", "--rdma-expectations", str(expect))
    result.assert_outcomes(passed=3, skipped=3, failed=2)


def test_a_waiver_never_hides_an_error(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    expect = make_project(pytester, waivers={"rxe": WAIVERS["rxe"].replace("deviant", "conforming")})
    monkeypatch.setenv("DEMO_CONFORMING", "error")
    result = pytester.runpytest("-p", "no:xdist", "--rdma-expectations", str(expect),
                                "-k", "rxe0 and conforming")
    result.assert_outcomes(failed=1)
