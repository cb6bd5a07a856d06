"""The leak arithmetic: what a check left on its device, less what shared fixtures changed (pure)."""

from __future__ import annotations

from pytest_rdma.guard.findings import leak_text
from pytest_rdma.guard.leaks import LeakGuard, difference, leaked

# rxe keeps one pd, cq and qp of its own: they are in every count and never change.
IDLE = {"rxe0": {"pd": 1, "cq": 1, "qp": 1, "mr": 0, "ctx": 0}, "siw0": {"pd": 0, "ctx": 0}}


def with_(base: dict, device: str, **more: int) -> dict:
    out = {dev: dict(kinds) for dev, kinds in base.items()}
    for kind, n in more.items():
        out[device][kind] = out[device].get(kind, 0) + n
    return out


def test_clean_check_leaks_nothing() -> None:
    assert leaked(IDLE, IDLE, {}, "rxe0") == {}


def test_kept_pd_is_a_leak_on_that_device_only() -> None:
    after = with_(IDLE, "rxe0", pd=1)
    assert leaked(IDLE, after, {}, "rxe0") == {"pd": 1}
    assert leaked(IDLE, after, {}, "siw0") == {}


def test_session_context_opened_in_the_first_check_is_not_blamed() -> None:
    # The first check opens the session's context (ctx +1) and probes QP types (all freed).
    after = with_(IDLE, "rxe0", ctx=1)
    shared = difference(after, IDLE)
    assert leaked(IDLE, after, shared, "rxe0") == {}


def test_leak_in_the_first_check_is_still_seen_beside_the_session_context() -> None:
    opened = with_(IDLE, "rxe0", ctx=1)
    shared = difference(opened, IDLE)
    assert leaked(IDLE, with_(opened, "rxe0", pd=1, mr=1), shared, "rxe0") == {"mr": 1, "pd": 1}


def test_session_close_in_the_last_check_is_not_a_leak_nor_hides_one() -> None:
    open_ = with_(IDLE, "rxe0", ctx=1)
    shared = difference(IDLE, open_)  # the context closes during the last check's teardown
    assert leaked(open_, IDLE, shared, "rxe0") == {}
    assert leaked(open_, with_(IDLE, "rxe0", qp=2), shared, "rxe0") == {"qp": 2}


def test_freeing_more_than_made_is_not_reported_as_a_leak() -> None:
    assert leaked(IDLE, with_(IDLE, "rxe0", pd=-1), {}, "rxe0") == {}


def test_leak_text_names_device_and_counts() -> None:
    assert leak_text({"rxe0": {"pd": 1, "mr": 2}}) == "rxe0: +2 mr, +1 pd"


def test_guard_reads_only_the_current_checks_device() -> None:
    # The kernel dumps objects one device at a time: reading others would only cost time.
    asked: list[tuple[str, ...]] = []
    guard = LeakGuard("fail", read=lambda devices: asked.append(tuple(devices)) or {"rxe0": {"pd": 0}})
    assert guard.counts() == {} and asked == []  # between device checks nothing is read
    guard.device = "rxe0"
    assert guard.counts() == {"rxe0": {"pd": 0}} and asked == [("rxe0",)]
