"""Expectations files: parsing, rejection with file and line, observations, scopes, review, strict mode as a CI gate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from report_helpers import WAIVERS, make_project, node, records, summary_message

from pytest_rdma.expectations import SHIPPED_DIR, Expectations, in_range, load, parse, review, version_key
from pytest_rdma.observations import from_dict

GOOD = """
# known deviations
[[waiver]]
id = "test_ibv_modify_qp[required-attrs-RC-INIT>RTR-*]"
reason = "does not check the AV"
link = "ibv_modify_qp(3) DESCRIPTION"
observed = { returned = "success" }

[[waiver]]
id = "test_ibv_x[a?c]"
reason = "r"
link = "https://example.org/1"
observed = { errno = "EINVAL" }
kernel = ">=6.1,<6.2"
rdma_core = ">=44"
"""
OBSERVED = 'observed = { errno = "EINVAL" }\n'


def test_waivers_are_read_with_their_driver_line_observation_and_scopes() -> None:
    first, second = parse(GOOD, Path("rxe.toml"))
    assert (first.driver, first.line, first.observed, first.scopes) == ("rxe", 3, {"returned": "success"}, {})
    assert (second.line, second.observed) == (9, {"errno": "EINVAL"})
    assert second.scopes == {"kernel": ">=6.1,<6.2", "rdma_core": ">=44"}
    assert parse('driver = "mlx5"\n' + GOOD, Path("x.toml"))[0].driver == "mlx5"


def test_patterns_treat_brackets_literally_and_star_as_anything() -> None:
    first, second = parse(GOOD, Path("rxe.toml"))
    assert first.matches("test_ibv_modify_qp[required-attrs-RC-INIT>RTR-without-AV]")
    assert not first.matches("test_ibv_modify_qp[required-attrs-UC-INIT>RTR-without-AV]")
    assert second.matches("test_ibv_x[abc]") and not second.matches("test_ibv_x[b]")


def test_a_waiver_holds_only_for_the_observation_it_records() -> None:
    _, second = parse(GOOD, Path("rxe.toml"))
    assert second.matches_observation(from_dict({"errno": "EINVAL"}))
    assert second.matches_observation(from_dict({"errno": "EINVAL", "problem": "x"})), (
        "keys it does not record are free"
    )
    assert not second.matches_observation(from_dict({"errno": "EPERM"}))
    assert not second.matches_observation(from_dict({"returned": "success"}))


@pytest.mark.parametrize(
    ("version", "spec", "holds"),
    [
        ("6.1.0-56-amd64", ">=6.1,<6.2", True),
        ("6.2.0", ">=6.1,<6.2", False),
        ("6.0.9", ">=6.1", False),
        ("44.0", ">=44", True),
        ("43.9", ">=44", False),
        ("6.1.0-test", "==6.1", True),
        ("6.10", "==6.1", False),
        ("anything", "*", True),
        ("6.1", "!=6.1", False),
    ],
)
def test_version_ranges(version: str, spec: str, holds: bool) -> None:
    assert in_range(version, spec) is holds


def test_scopes_decide_whether_a_waiver_applies_to_a_device() -> None:
    _, second = parse(GOOD, Path("rxe.toml"))
    assert version_key("6.1.0-56-amd64") == (6, 1, 0, 56) and version_key("v1.2") == (1, 2)
    assert in_range("6.1.0-56-amd64", "<=6.1.0-56")
    assert second.applies_to({"kernel": "6.1.0-56-amd64", "rdma_core": "44.0"})
    assert not second.applies_to({"kernel": "6.2.1", "rdma_core": "44.0"})
    assert not second.applies_to({"kernel": "6.1.0", "rdma_core": "43.0"})
    expectations = Expectations()
    expectations.add(parse(GOOD, Path("rxe.toml")))
    info = {"driver": "rxe", "stable_id": "test_ibv_x[abc]", "identity": {"kernel": "6.1.3", "rdma_core": "50.0"}}
    assert expectations.find(info) == second
    assert expectations.find({**info, "identity": {"kernel": "6.9", "rdma_core": "50.0"}}) is None
    assert expectations.find({**info, "driver": "siw"}) is None


@pytest.mark.parametrize(
    ("text", "line", "says"),
    [
        ('[[waiver]]\nid = "t"\nlink = "l"\n' + OBSERVED, 1, "a waiver without a reason is rejected"),
        ('\n[[waiver]]\nid = "t"\nreason = "  "\nlink = "l"\n' + OBSERVED, 2, "a waiver without a reason is rejected"),
        ('[[waiver]]\nid = "t"\nreason = "r"\n' + OBSERVED, 1, "'link'"),
        (
            '[[waiver]]\nid = "t"\nreason = "r"\nlink = "l"\n' + OBSERVED + '\n[[waiver]]\nreason = "r"\nlink = "l"\n',
            7,
            "'id'",
        ),
        ('[[waiver]]\nid = "t"\nreason = "r"\nlink = "l"\n' + OBSERVED + 'reasn = "x"\n', 1, "unknown key 'reasn'"),
        ('[[waiver]]\nid = "t"\nreason = "r\nlink = "l"\n', 3, "malformed"),
        ("waivers = 1\n", 1, "unknown key 'waivers'"),
        (
            '[[waiver]]\nid="t"\nreason="r"\nlink="l"\n'
            + OBSERVED
            + '[[waiver]]\nid="t"\nreason="r"\nlink="l"\n'
            + OBSERVED,
            6,
            "repeats",
        ),
        # The observation is required, and structured: a sentence cannot be compared with a deviation.
        ('[[waiver]]\nid = "t"\nreason = "r"\nlink = "l"\n', 1, "needs 'observed', a table of what the device did"),
        ('[[waiver]]\nid = "t"\nreason = "r"\nlink = "l"\nobserved = "returned 0"\n', 1, "needs 'observed'"),
        ('[[waiver]]\nid = "t"\nreason = "r"\nlink = "l"\nobserved = {}\n', 1, "needs 'observed'"),
        (
            '[[waiver]]\nid = "t"\nreason = "r"\nlink = "l"\n' + OBSERVED + 'kernel = "about 6"\n',
            1,
            "kernel = 'about 6': 'about 6' is not a version comparison",
        ),
        (
            '[[waiver]]\nid = "t"\nreason = "r"\nlink = "l"\n' + OBSERVED + "firmware = 7\n",
            1,
            "firmware = 7: it must be a string",
        ),
        (
            '[[waiver]]\nid = "t"\nreason = "r"\nlink = "l"\n' + OBSERVED + 'intermittent = "yes"\n',
            1,
            "intermittent = 'yes': it is true or false",
        ),
    ],
)
def test_a_malformed_file_names_file_and_line(text: str, line: int, says: str) -> None:
    with pytest.raises(pytest.UsageError) as raised:
        parse(text, Path("/x/rxe.toml"))
    assert str(raised.value).startswith(f"/x/rxe.toml:{line}: malformed expectations file")
    assert says in str(raised.value)


def test_shipped_files_if_any_are_valid() -> None:
    expectations = load(None)  # none are shipped since the reshape: that is no waiver, not an error
    assert len(expectations) == sum(len(parse(p.read_text(), p)) for p in SHIPPED_DIR.glob("*.toml"))


def test_malformed_file_is_a_usage_error_of_the_run(pytester: pytest.Pytester) -> None:
    expect = make_project(pytester, waivers={"rxe": '[[waiver]]\nid = "x"\nlink = "l"\n'})
    result = pytester.runpytest("-p", "no:xdist", "--rdma-expectations", str(expect))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{expect / 'rxe.toml'}:1: malformed expectations file*without a reason*"])


def test_strict_passes_with_the_expectations_and_fails_when_a_waiver_is_removed(pytester: pytest.Pytester) -> None:
    expect = make_project(pytester)
    passed = pytester.runpytest("-p", "no:xdist", "--rdma-strict", "--rdma-expectations", str(expect))
    passed.assert_outcomes(passed=4, skipped=4, xfailed=2)
    assert passed.ret == pytest.ExitCode.OK

    (expect / "siw.toml").write_text("")  # siw's waiver removed: its deviation is new again
    failed = pytester.runpytest("-p", "no:xdist", "--rdma-strict", "--rdma-expectations", str(expect))
    failed.assert_outcomes(passed=4, skipped=4, xfailed=1, failed=1)
    assert failed.ret == pytest.ExitCode.TESTS_FAILED
    failed.stdout.fnmatch_lines(["siw0: FAILS: 1 deviates", "FAILED *test_ibv_demo[[]siw0-keeps-promise-deviant[]]*"])


def test_strict_fails_a_waived_check_that_now_conforms(pytester: pytest.Pytester) -> None:
    fixed = WAIVERS["rxe"].replace("deviant", "conforming")
    expect = make_project(pytester, waivers={"rxe": WAIVERS["rxe"] + fixed, "siw": WAIVERS["siw"]})
    strict = pytester.runpytest(
        "-p", "no:xdist", "--rdma-strict", "--rdma-expectations", str(expect), "--rdma-json", "r.json"
    )
    strict.assert_outcomes(passed=3, skipped=4, xfailed=2, failed=1)
    assert strict.ret == pytest.ExitCode.TESTS_FAILED
    strict.stdout.fnmatch_lines(
        [
            "[[]XPASS(strict)[]] waived: rxe accepts the bad mask (known)",
            "FAILED *test_ibv_demo[[]rxe0-keeps-promise-conforming[]]" + summary_message("[[]XPASS(st*"),
        ]
    )
    record = records(pytester.path / "r.json")[node("rxe0", "conforming")]
    assert record["outcome"] == "conforms", "the device is fine: the waiver is what is wrong"
    assert (record["waiver"]["status"], record["waiver"]["line"]) == ("fixed", 8)
    lenient = pytester.runpytest("-p", "no:xdist", "--rdma-expectations", str(expect))
    lenient.assert_outcomes(passed=3, skipped=4, xfailed=2, xpassed=1)
    assert lenient.ret == pytest.ExitCode.OK


def test_an_intermittent_waiver_whose_check_conforms_is_unseen_not_stale_even_under_strict(
    pytester: pytest.Pytester,
) -> None:
    flaky = WAIVERS["rxe"].replace("deviant", "conforming") + "intermittent = true\n"
    expect = make_project(pytester, waivers={"rxe": WAIVERS["rxe"] + flaky, "siw": WAIVERS["siw"]})
    strict = pytester.runpytest(
        "-p", "no:xdist", "--rdma-strict", "--rdma-expectations", str(expect), "--rdma-json", "r.json"
    )
    strict.assert_outcomes(passed=3, skipped=4, xfailed=2, xpassed=1)
    assert strict.ret == pytest.ExitCode.OK
    record = records(pytester.path / "r.json")[node("rxe0", "conforming")]
    assert record["outcome"] == "conforms"
    assert (record["waiver"]["status"], record["waiver"]["intermittent"]) == ("unseen", True)
    # Seen, it is waived as any other; the deviant check's waiver is not intermittent and says so by its absence.
    deviant = records(pytester.path / "r.json")[node("rxe0", "deviant")]
    assert (deviant["outcome"], deviant["waiver"]["status"], "intermittent" in deviant["waiver"]) == (
        "waived",
        "applied",
        False,
    )


def test_an_intermittent_waiver_holds_only_for_what_it_records(pytester: pytest.Pytester) -> None:
    flaky = (WAIVERS["rxe"] + "intermittent = true\n").replace('returned = "success"', 'errno = "EPERM"')
    expect = make_project(pytester, waivers={"rxe": flaky, "siw": WAIVERS["siw"]})
    result = pytester.runpytest("-p", "no:xdist", "--rdma-expectations", str(expect), "--rdma-json", "r.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert records(pytester.path / "r.json")[node("rxe0", "deviant")]["waiver"]["status"] == "mismatch"


def test_without_strict_a_new_deviation_still_fails(pytester: pytest.Pytester) -> None:
    expect = make_project(pytester, waivers={})
    result = pytester.runpytest("-p", "no:xdist", "--rdma-expectations", str(expect))
    result.assert_outcomes(passed=4, skipped=4, failed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_a_waiver_never_hides_an_error(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    expect = make_project(pytester, waivers={"rxe": WAIVERS["rxe"].replace("deviant", "conforming")})
    monkeypatch.setenv("DEMO_CONFORMING", "error")
    result = pytester.runpytest("-p", "no:xdist", "--rdma-expectations", str(expect), "-k", "rxe0 and conforming")
    result.assert_outcomes(failed=1)


ERRNO_WAIVER = """
[[waiver]]
id = "test_ibv_demo[keeps-promise-conforming]"
reason = "rxe refuses the bad mask with the wrong errno (known)"
link = "ibv_demo(3) RETURN VALUE"
observed = { errno = "EPERM" }
"""


def test_a_waiver_that_records_another_observation_is_a_deviation(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    expect = make_project(pytester, waivers={"rxe": ERRNO_WAIVER})
    monkeypatch.setenv("DEMO_CONFORMING", "errno:EPERM")  # rxe0 and siw0 refuse with EPERM
    held = pytester.runpytest(
        "-p", "no:xdist", "--rdma-expectations", str(expect), "-k", "conforming", "--rdma-json", "held.json"
    )
    held.assert_outcomes(xfailed=1, failed=1)  # rxe0's is waived; siw has no waiver
    waived = records(pytester.path / "held.json")[node("rxe0", "conforming")]
    assert (waived["outcome"], waived["waiver"]["status"], waived["waiver"]["line"]) == ("waived", "applied", 2)
    monkeypatch.setenv("DEMO_CONFORMING", "errno:EOPNOTSUPP")  # the device changed what it does
    result = pytester.runpytest(
        "-p", "no:xdist", "--rdma-expectations", str(expect), "-k", "rxe0 and conforming", "--rdma-json", "r.json"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "waived errno = EPERM, observed {'errno': 'EOPNOTSUPP'} (rxe.toml:2): the waiver holds only for what it "
            "records",
            "*",
            "rxe0: 1 not covered by a waiver:",
            "*",
            "      observed: errno EOPNOTSUPP",
            "      waiver:   rxe.toml:2 records {'errno': 'EPERM'}: not this",
            "*",
            "rxe0: FAILS: 1 deviates",
        ]
    )
    record = records(pytester.path / "r.json")[node("rxe0", "conforming")]
    assert (record["outcome"], record["waiver"]["status"], record["observation"]) == (
        "deviates",
        "mismatch",
        {"errno": "EOPNOTSUPP"},
    )


@pytest.mark.parametrize(
    ("scope", "applies"),
    [
        ('kernel = ">=6.1,<6.2"', True),
        ('kernel = ">=7"', False),
        ('rdma_core = "<44"', False),
        ('firmware = "*"', True),
    ],
)
def test_a_waiver_scoped_to_other_versions_does_not_apply(pytester: pytest.Pytester, scope: str, applies: bool) -> None:
    # The demo devices run kernel 6.1.0-test and rdma-core 44.0.
    expect = make_project(pytester, waivers={"rxe": WAIVERS["rxe"] + scope + "\n"})
    result = pytester.runpytest("-p", "no:xdist", "--rdma-expectations", str(expect), "-k", "rxe0 and deviant")
    result.assert_outcomes(**({"xfailed": 1} if applies else {"failed": 1}))


STALE_AND_REFUSED = """
[[waiver]]
id = "test_ibv_demo[keeps-promise-gone]"
reason = "a case the catalogue no longer has"
link = "ibv_demo(3) RETURN VALUE"
observed = { returned = "success" }

[[waiver]]
id = "test_ibv_demo[keeps-promise-unreached]"
reason = "waives a check that rxe cannot exercise"
link = "ibv_demo(3) RETURN VALUE"
observed = { returned = "success" }
"""


def test_the_run_reports_stale_and_refused_waivers(pytester: pytest.Pytester) -> None:
    expect = make_project(
        pytester, waivers={**WAIVERS, "rxe": WAIVERS["rxe"] + STALE_AND_REFUSED, "mlx5": WAIVERS["rxe"]}
    )
    result = pytester.runpytest("-p", "no:xdist", "--rdma-expectations", str(expect), "--rdma-json", "r.json")
    assert result.ret == pytest.ExitCode.OK, "without --rdma-strict they are reported, not failed"
    result.stdout.fnmatch_lines(
        [
            "waiver stale: rxe.toml:8 test_ibv_demo[[]keeps-promise-gone[]]: it matched no check of this run",
            "waiver refused: rxe.toml:14 test_ibv_demo[[]keeps-promise-unreached[]]: its check was not exercised: "
            "could not reach RTS*",
        ]
    )
    assert "mlx5.toml" not in result.stdout.str(), "a driver this run did not test has no stale waivers"
    waivers = json.loads((pytester.path / "r.json").read_text())["waivers"]
    assert [(w["line"], w["pattern"]) for w in waivers["stale"]] == [(8, "test_ibv_demo[keeps-promise-gone]")]
    assert [w["line"] for w in waivers["refused"]] == [14]
    strict = pytester.runpytest("-p", "no:xdist", "--rdma-strict", "--rdma-expectations", str(expect))
    assert strict.ret == pytest.ExitCode.TESTS_FAILED, "a CI gate keeps the expectations honest"


def test_review_is_per_driver_tested() -> None:
    expectations = Expectations()
    expectations.add(parse(STALE_AND_REFUSED, Path("rxe.toml")))
    found = review(
        expectations,
        [
            {
                "driver": "rxe",
                "stable_id": "test_ibv_demo[keeps-promise-unreached]",
                "outcome": "unsupported",
                "reason": "attr.max_qp_wr = 0",
                "identity": {},
            },
        ],
    )
    assert [w["why"] for w in found["stale"]] == ["it matched no check of this run"]
    assert [w["why"] for w in found["refused"]] == ["its check was unsupported: attr.max_qp_wr = 0"]
    assert review(expectations, [{"driver": "siw", "stable_id": "x", "outcome": "conforms"}]) == {
        "stale": [],
        "refused": [],
    }


def test_a_waiver_whose_check_was_left_out_of_the_run_is_not_stale() -> None:
    """`pytest --rdma-strict -k slice` must not fail on the waivers of the checks -k left out."""
    expectations = Expectations()
    expectations.add(parse(STALE_AND_REFUSED, Path("rxe.toml")))
    ran = [{"driver": "rxe", "stable_id": "test_ibv_demo[keeps-promise-other]", "outcome": "conforms", "identity": {}}]
    suite = {"test_ibv_demo[keeps-promise-other]", "test_ibv_demo[keeps-promise-unreached]"}
    found = review(expectations, ran, known=suite)
    assert [w["id"] if "id" in w else w["pattern"] for w in found["stale"]] == ["test_ibv_demo[keeps-promise-gone]"]
    assert found["refused"] == []


def test_the_whole_catalogue_is_asked_for_only_about_waivers_that_matched_nothing() -> None:
    """Finding every check's id costs a second under TCG: a run whose waivers all match never asks."""
    expectations = Expectations()
    expectations.add(parse(STALE_AND_REFUSED, Path("rxe.toml")))
    asked: list[list[str]] = []

    def suite(patterns: list[str]) -> set[str]:
        asked.append(patterns)
        return {"test_ibv_demo[keeps-promise-other]", "test_ibv_demo[keeps-promise-unreached]"}

    ran = [{"driver": "rxe", "stable_id": "test_ibv_demo[keeps-promise-other]", "outcome": "conforms", "identity": {}}]
    found = review(expectations, ran, known=suite)
    assert asked == [["test_ibv_demo[keeps-promise-gone]", "test_ibv_demo[keeps-promise-unreached]"]]
    assert [w["pattern"] for w in found["stale"]] == ["test_ibv_demo[keeps-promise-gone]"]
    every = [{**ran[0], "stable_id": w.pattern} for w in expectations.all()]
    asked.clear()
    assert review(expectations, every, known=suite)["stale"] == [] and asked == []


def test_a_drafted_file_parses_and_holds_on_the_observation_it_drafted_from(tmp_path: Path) -> None:
    from pytest_rdma.report.waivers import draft

    record = {
        "driver": "rxe",
        "outcome": "deviates",
        "stable_id": "test_v[c-RC]",
        "ref": "v(3) NOTES",
        "expected": "refused",
        "observed": "succeeded",
        "observation": {"returned": "success", "value": 7},
    }
    text = draft("rxe", [{"results": [record]}])
    (waiver,) = parse(text, tmp_path / "rxe.toml")
    assert waiver.observed == {"returned": "success", "value": 7}
    assert waiver.matches_observation(from_dict(record["observation"]))
    assert not waiver.matches_observation(from_dict({"returned": "success", "value": 8}))


def test_the_ids_a_session_end_expands_are_those_of_the_waived_verbs_and_judge_the_same() -> None:
    # The stale-waiver review expands only the verbs a waiver can name, not the whole catalogue again.
    from pytest_rdma.expectations import id_pattern
    from pytest_rdma.report.terminal import catalogue_ids

    every = catalogue_ids()
    patterns = [w.pattern for w in load((str(SHIPPED_DIR),)).all() if not w.pattern.startswith("test_explore[")]
    some = catalogue_ids(patterns)
    assert some < every
    for pattern in patterns:
        assert any(id_pattern(pattern).fullmatch(i) for i in some) == any(
            id_pattern(pattern).fullmatch(i) for i in every
        )
    assert catalogue_ids(["test_ibv_*"]) == {i for i in every if i.startswith("test_ibv_")}
    assert catalogue_ids(["test_no_such_verb[x]"]) == set()


def test_a_waiver_whose_kernel_range_leaves_this_run_out_is_not_stale() -> None:
    """A kernel matrix runs every release against one file: a range for 6.1 says nothing on 6.12."""
    expectations = Expectations()
    expectations.add(
        parse(
            'driver = "rxe"\n[[waiver]]\nid = "test_ibv_demo[gone]"\nreason = "r"\nlink = "l"\n'
            'observed = { errno = "EINVAL" }\nkernel = "<6.12"\n',
            Path("rxe.toml"),
        )
    )
    ran = {"driver": "rxe", "stable_id": "test_ibv_demo[other]", "outcome": "conforms"}
    on_new = review(expectations, [{**ran, "identity": {"kernel": "6.12.117+deb12-amd64"}}])
    assert on_new["stale"] == []
    on_old = review(expectations, [{**ran, "identity": {"kernel": "6.1.0-56-amd64"}}])
    assert [w["pattern"] for w in on_old["stale"]] == ["test_ibv_demo[gone]"]


def test_one_check_may_have_a_waiver_per_kernel_range() -> None:
    """6.1 and 6.12 deviate differently on one check: each range holds its own observation."""
    text = (
        'driver = "siw"\n'
        '[[waiver]]\nid = "t[x]"\nreason = "r"\nlink = "l"\nobserved = { value = 0 }\nkernel = "<6.12"\n'
        '[[waiver]]\nid = "t[x]"\nreason = "r"\nlink = "l"\nobserved = { value = 1 }\nkernel = ">=6.12"\n'
    )
    expectations = Expectations()
    expectations.add(parse(text, Path("siw.toml")))
    info = {"driver": "siw", "stable_id": "t[x]"}
    on_old = expectations.find({**info, "identity": {"kernel": "6.1.0-56-amd64"}})
    on_new = expectations.find({**info, "identity": {"kernel": "6.12.117+deb12-amd64"}})
    assert on_old is not None and on_old.observed == {"value": 0}
    assert on_new is not None and on_new.observed == {"value": 1}


CRASH_WAIVER = """
[[waiver]]
id = "test_ibv_demo[keeps-promise-conforming]"
reason = "siw's provider unmaps the queue before the kernel refuses (known)"
link = "ibv_demo(3) RETURN VALUE"
observed = { crash = true }
"""


def test_a_waiver_of_a_crash_holds_for_that_crash_only(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A provider that segfaults in a verb kills the check's worker: a result like any deviation, which the
    # driver's expectations may record (observed = { crash = true }); the run then passes, and the record says so.
    expect = make_project(pytester, waivers={"siw": CRASH_WAIVER})
    monkeypatch.setenv("DEMO_CONFORMING", "crash")  # both devices' workers die in the "conforming" check
    result = pytester.runpytest_subprocess(
        "-n", "1", "--rdma-expectations", str(expect), "-k", "conforming", "--rdma-json", "r.json"
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()  # rxe has no waiver of its crash
    found = records(pytester.path / "r.json")
    waived, crashed = found[node("siw0", "conforming")], found[node("rxe0", "conforming")]
    assert (waived["outcome"], waived["waiver"]["status"]) == ("waived", "applied")
    assert "process died" in waived["observed"] and waived["observation"] == {"crash": True}
    assert crashed["outcome"] == "crash" and not crashed["waiver"]
    only_siw = pytester.runpytest_subprocess(
        "-n", "1", "--rdma-expectations", str(expect), "-k", "siw0 and conforming", "--rdma-json", "s.json"
    )
    assert only_siw.ret == pytest.ExitCode.OK, only_siw.stdout.str()
    # A crash waiver is no waiver of a deviation: the same check deviating instead is a new deviation.
    monkeypatch.setenv("DEMO_CONFORMING", "deviates")
    deviating = pytester.runpytest_subprocess(
        "-n", "1", "--rdma-expectations", str(expect), "-k", "siw0 and conforming", "--rdma-json", "d.json"
    )
    assert deviating.ret == pytest.ExitCode.TESTS_FAILED
    assert records(pytester.path / "d.json")[node("siw0", "conforming")]["outcome"] == "deviates"


def test_a_crash_waiver_records_nothing_else(pytester: pytest.Pytester) -> None:
    expect = make_project(pytester, waivers={"siw": CRASH_WAIVER.replace("crash = true", 'crash = true, errno = "X"')})
    result = pytester.runpytest("-p", "no:xdist", "--rdma-expectations", str(expect))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*siw.toml:2*crash = true*stands alone*"])


def test_a_waiver_of_an_explorations_finding_is_not_stale_for_a_run_that_did_not_explore() -> None:
    # Its check exists only in a run that explored and found it again (pytest_rdma/explore/items.py).
    from pytest_rdma.report.terminal import catalogue_ids

    finding = "test_explore[convention-*ibv_create_cq_ex]"
    assert finding in catalogue_ids([finding, "test_ibv_alloc_pd[*]"])
    assert not any(i.startswith("test_explore[") for i in catalogue_ids())


# (id, the reason saying where it stands, kernel scope): each waiver records another value, to tell them apart.
ORDERED_WAIVERS = [
    ("t_a[x-*]", "first: a wildcard, written before the exact id below", "<6.12"),
    ("t_a[x-1]", "second", ""),
    ("t_?[y]", "third: a wildcard in the test's name", ""),
    ("t_b", "fourth: an id without brackets", ""),
]
ORDERED = 'driver = "rxe"\n' + "".join(
    f'[[waiver]]\nid = "{id_}"\nreason = "{reason}"\nlink = "l"\nobserved = {{ value = {value} }}\n'
    + (f'kernel = "{kernel}"\n' if kernel else "")
    for value, (id_, reason, kernel) in enumerate(ORDERED_WAIVERS)
)


def _first_in_file_order(expectations: Expectations, info: dict) -> object:
    """The waiver find() must give: the first of the driver's that matches the id and applies to the device."""
    identity = info.get("identity") or {}
    waivers = expectations.by_driver.get(info.get("driver", ""), [])
    return next((w for w in waivers if w.matches(info["stable_id"]) and w.applies_to(identity)), None)


@pytest.mark.parametrize("kernel", ["6.1.0-56-amd64", "6.12.117+deb12-amd64"])
@pytest.mark.parametrize("stable_id", ["t_a[x-1]", "t_a[x-2]", "t_a[y]", "t_c[y]", "t_b", "t_b[z]", "t_a", "u[x-1]"])
def test_the_waiver_found_is_the_first_in_file_order_that_matches_and_applies(stable_id: str, kernel: str) -> None:
    expectations = Expectations()
    expectations.add(parse(ORDERED, Path("rxe.toml")))
    info = {"driver": "rxe", "stable_id": stable_id, "identity": {"kernel": kernel}}
    assert expectations.find(info) is _first_in_file_order(expectations, info)


def test_the_shipped_waivers_are_found_for_every_check_of_the_catalogue_as_in_file_order() -> None:
    from pytest_rdma.report.terminal import catalogue_ids

    ids = sorted(catalogue_ids())
    expectations = load(None)
    found = 0
    for driver in expectations.by_driver:
        for kernel in ("6.1.0-57-amd64", "6.12.118+deb12-amd64"):
            for stable_id in ids:
                info = {"driver": driver, "stable_id": stable_id, "identity": {"kernel": kernel}}
                waiver = expectations.find(info)
                assert waiver is _first_in_file_order(expectations, info), stable_id
                found += waiver is not None
    assert found > 100  # the shipped files waive checks of both drivers on both kernels
