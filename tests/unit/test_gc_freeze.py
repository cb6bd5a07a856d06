"""The plugin keeps Python's cyclic collector off what a pytest start makes and keeps (plugin.py, gc.freeze()),
and off nothing a check makes.

Whether an object is out of the collector's reach shows in gc.get_objects(), which lists the objects of the
collector's generations and not the frozen ones. The inner runs are subprocesses: a freeze lasts as long as its
process.
"""

from __future__ import annotations

import pytest

IN_A_CHECK = """
import gc
import weakref


def reachable(obj):
    return any(o is obj for o in gc.get_objects())


def test_items_are_frozen(request):
    assert gc.get_freeze_count() > 0
    assert not reachable(request.node), "the item is still walked by every full collection"
    assert not reachable(request.node.parent), "the module is still walked by every full collection"


class Node:
    pass


def test_a_cycle_a_check_makes_is_still_collected_on_its_own():
    a, b = Node(), Node()
    a.other, b.other = b, a
    gone = weakref.ref(a)
    del a, b
    kept = [[] for _ in range(20000)]  # enough allocations for the collector to run by itself (no gc.collect())
    assert gone() is None, "a cycle made in a check outlived the collector's automatic runs"
    assert kept
"""

# Written by the process that runs the session: xdist's controller collects nothing, so only the session's
# start freezes what its configure made (the session object is made just before).
AT_THE_END = """
import gc


def pytest_sessionfinish(session):
    if not hasattr(session.config, "workerinput"):
        walked = any(o is session for o in gc.get_objects())
        (session.config.rootpath / "session-walked.txt").write_text(str(walked))
"""


@pytest.mark.parametrize("workers", [["-p", "no:xdist"], ["-n", "1"]], ids=["serial", "xdist"])
def test_what_the_start_made_is_frozen_and_what_a_check_makes_is_collected(
    pytester: pytest.Pytester, workers: list[str]
) -> None:
    pytester.makepyfile(test_in_a_check=IN_A_CHECK)
    pytester.makeconftest(AT_THE_END)
    result = pytester.runpytest_subprocess(*workers, "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    assert (pytester.path / "session-walked.txt").read_text() == "False"
