"""Waivers across kernel releases: stale on the release where a waiver that holds elsewhere does not."""

from __future__ import annotations

from pytest_rdma.report.release_waivers import stale_on_release, suggested_range

OLD, NEW = "6.1.0-56-amd64", "6.12.117+deb12-amd64"
WAIVER = {"pattern": "test_ibv_query_qp[cur-qp-state]", "file": "rxe.toml", "line": 7, "scopes": {}}


def _record(kernel: str, outcome: str, status: str | None, scopes: dict[str, str] | None = None) -> dict:
    record = {
        "driver": "rxe",
        "stable_id": "test_ibv_query_qp[cur-qp-state]",
        "outcome": outcome,
        "identity": {"kernel": kernel},
    }
    if status is not None:
        record["waiver"] = {**WAIVER, "scopes": scopes or {}, "status": status}
    return record


def test_a_waiver_fixed_on_the_new_release_is_stale_there_with_the_range_where_it_holds() -> None:
    found = stale_on_release({OLD: [_record(OLD, "waived", "applied")], NEW: [_record(NEW, "conforms", "fixed")]})
    assert [(s.release, s.why, s.holds_on, s.suggested) for s in found] == [
        (NEW, "its check conforms there", (OLD,), "<6.12")
    ]
    assert found[0].line() == (
        f"rxe.toml:7: waiver test_ibv_query_qp[cur-qp-state] of rxe is stale on {NEW} (its check conforms there); "
        f"it holds on {OLD}; kernel = '<6.12' would say where it holds"
    )


def test_a_waiver_that_deviates_otherwise_or_matches_nothing_on_a_release_is_stale_there() -> None:
    mismatch = stale_on_release({OLD: [_record(OLD, "deviates", "mismatch")], NEW: [_record(NEW, "waived", "applied")]})
    assert [(s.release, s.why, s.suggested) for s in mismatch] == [
        (OLD, "its check deviates otherwise there", ">=6.12")
    ]
    unsupported = stale_on_release({OLD: [_record(OLD, "unsupported", None)], NEW: [_record(NEW, "waived", "applied")]})
    assert [(s.release, s.why) for s in unsupported] == [(OLD, "its check was unsupported there")]
    other = {**_record(OLD, "conforms", None), "stable_id": "another"}
    not_run = stale_on_release({OLD: [other], NEW: [_record(NEW, "waived", "applied")]})
    assert not_run == [], "a release whose run left the waiver's checks out says nothing about it"


def test_a_waiver_whose_range_leaves_a_release_out_or_that_holds_everywhere_is_not_stale() -> None:
    scoped = {"kernel": "<6.12"}
    assert (
        stale_on_release({OLD: [_record(OLD, "waived", "applied", scoped)], NEW: [_record(NEW, "conforms", None)]})
        == []
    )
    assert stale_on_release({OLD: [_record(OLD, "waived", "applied")], NEW: [_record(NEW, "waived", "applied")]}) == []


def test_a_range_is_suggested_only_when_the_releases_do_not_interleave() -> None:
    assert suggested_range([OLD], [NEW]) == "<6.12"
    assert suggested_range([NEW], [OLD]) == ">=6.12"
    assert suggested_range([OLD, "6.14.0-1-amd64"], [NEW]) == ""
    assert suggested_range(["6.1.0-56-amd64"], ["6.1.0-57-amd64"]) == "", "one series: no range by series"


def test_a_waiver_whose_line_moved_between_the_releases_runs_is_one_waiver() -> None:
    """The waiver file was edited between the two releases' runs: the same waiver, at another line."""
    moved = _record(NEW, "conforms", "fixed")
    moved["waiver"] = {**moved["waiver"], "line": 9}
    found = stale_on_release({OLD: [_record(OLD, "waived", "applied")], NEW: [moved]})
    assert [(s.release, s.why) for s in found] == [(NEW, "its check conforms there")]
    scoped_apart = _record(NEW, "waived", "applied", {"kernel": ">=6.12"})  # another waiver of the same id
    assert stale_on_release({OLD: [_record(OLD, "waived", "applied", {"kernel": "<6.12"})], NEW: [scoped_apart]}) == []


def test_an_intermittent_waiver_unseen_on_a_release_is_not_stale_there_but_one_that_deviates_otherwise_is() -> None:
    def flaky(kernel: str, outcome: str, status: str) -> dict:
        record = _record(kernel, outcome, status)
        record["waiver"]["intermittent"] = True
        return record

    unseen = stale_on_release({OLD: [flaky(OLD, "waived", "applied")], NEW: [flaky(NEW, "conforms", "unseen")]})
    assert unseen == [], "seen in some runs only: a release where it was not seen says nothing against it"
    otherwise = stale_on_release({OLD: [flaky(OLD, "waived", "applied")], NEW: [flaky(NEW, "deviates", "mismatch")]})
    assert [(s.release, s.why) for s in otherwise] == [(NEW, "its check deviates otherwise there")]
