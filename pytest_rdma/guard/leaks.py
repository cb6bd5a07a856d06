"""Resource leaks: per device, the kernel's object counts before and after each check.

The window of a check runs from the start of its setup to the end of its teardown, so its
function-scoped fixtures are set up and freed inside it. Objects of wider-scoped fixtures
(the device context opened once per session, anything module-scoped) may be created or freed
inside that window too (the first check opens the context; the last closes it): their
change is measured around the fixture itself and taken out, so it is never blamed on a check.
What remains is what the check left behind.

The counts are this process's own objects on the check's device (netlink.process_counts):
under xdist each worker sees only what it made, and other processes on a shared machine
are never blamed. Only the check's device is read: the kernel dumps one device at a time.

One read per check, not two, on a run of checks on one device: a check's end counts are the
next check's start counts, because nothing runs between the two windows that makes or frees
verbs objects in this process: fixtures are set up and finalized inside some check's setup or
teardown. A check without a device (whose wider-scoped fixtures may still make objects on one)
or on another device drops the kept counts, and the next check reads its own start. Every
VERIFY_EVERY-th reuse reads the start anyway, as a tripwire: counts that changed between two
windows mean something in this process made or freed objects outside any check, and from then
on every check reads its own start again (and the run says so once).
"""

from __future__ import annotations

from collections.abc import Collection, Generator
from typing import Callable

import pytest

from pytest_rdma.guard.after_teardown import AfterTeardown
from pytest_rdma.guard.findings import LEAK_FIELD, Leak, ResourceLeak, attach, conclude, leak_text
from pytest_rdma.provider import netlink

# Verbs objects the kernel counts: device -> resource kind -> number (a leak has the same shape).
Counts = Leak
VERIFY_EVERY = 16


def device_of(item: pytest.Item) -> str:
    callspec = getattr(item, "callspec", None)
    value = callspec.params.get("rdma_dut") if callspec is not None else None
    return value if isinstance(value, str) else ""


def difference(after: Counts, before: Counts) -> Counts:
    """after - before, per device and resource, keeping only non-zero entries."""
    out: Counts = {}
    for device in set(after) | set(before):
        kinds = set(after.get(device, {})) | set(before.get(device, {}))
        delta = {k: after.get(device, {}).get(k, 0) - before.get(device, {}).get(k, 0) for k in kinds}
        delta = {k: v for k, v in delta.items() if v}
        if delta:
            out[device] = delta
    return out


def add(total: Counts, delta: Counts) -> None:
    for device, kinds in delta.items():
        for kind, n in kinds.items():
            total.setdefault(device, {})[kind] = total.setdefault(device, {}).get(kind, 0) + n


def leaked(start: Counts, end: Counts, shared: Counts, device: str) -> dict[str, int]:
    """What the check left on `device`: the window's change less the shared fixtures' change.

    Only increases count: a check that frees something it did not make is not a leak (and the
    shared change already accounts for the session's context closing).
    """
    window = difference(end, start).get(device, {})
    owed = shared.get(device, {})
    return {kind: n for kind in sorted(set(window) | set(owed)) if (n := window.get(kind, 0) - owed.get(kind, 0)) > 0}


# One counter for the process: its socket and the devices' indexes are kept between reads; it counts
# the objects of whichever process reads (a forked child opens its own socket).
_OWN = netlink.ProcessCounter()


def own_counts(devices: Collection[str]) -> Counts:
    return _OWN(devices)


class LeakGuard(AfterTeardown):
    def __init__(
        self, mode: str, read: Callable[[Collection[str]], Counts] = own_counts, verify_every: int = VERIFY_EVERY
    ) -> None:
        self.mode = mode
        self.read = read
        self.verify_every = verify_every
        self.device = ""  # the current check's device; "" between device checks
        self.start: Counts | None = None
        self.shared: Counts = {}
        self._depth = 0  # nesting of wider-scoped fixture setups: only the outermost is measured
        self._before_finish: dict[int, Counts] = {}
        self._kept: tuple[str, Counts] | None = None  # the last check's device and end counts
        self._reused = 0
        self.reuse = True  # False once the tripwire saw counts change between two checks

    def _active(self) -> bool:
        return self.start is not None

    def counts(self) -> Counts:
        return self.read((self.device,)) if self.device else {}

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, None, None]:
        self.device = device_of(item)
        kept, self._kept = self._kept, None
        if not self.device:
            self.start, self.shared = None, {}
        elif kept is not None and kept[0] == self.device and self.reuse:
            self._reused += 1
            self.start, self.shared = kept[1], {}
            if self._reused % self.verify_every == 0:
                self.start = self._verified(item, kept[1])
        else:
            self.start, self.shared = self.counts(), {}
        return (yield)

    def _verified(self, item: pytest.Item, kept: Counts) -> Counts:
        """The start counts read anew; if they are not the last check's end, stop reusing ends."""
        fresh = self.counts()
        between = difference(fresh, kept)
        if between:
            self.reuse = False
            item.warn(
                pytest.PytestWarning(
                    f"rdma guard: {leak_text(between)} changed between two checks, before this one: "
                    "the leak guard now reads each check's start itself"
                )
            )
        return fresh

    @pytest.hookimpl(wrapper=True)
    def pytest_fixture_setup(
        self, fixturedef: pytest.FixtureDef[object], request: pytest.FixtureRequest
    ) -> Generator[None, object, object]:
        if fixturedef.scope == "function":
            return (yield)
        self._depth += 1
        before = self.counts() if self._depth == 1 and self._active() else None
        try:
            result = yield
        finally:
            self._depth -= 1
            if before is not None:
                add(self.shared, difference(self.counts(), before))
        # Added after the fixture's own teardown was registered, so it runs just before it. Even
        # outside a device check: such a fixture may still be torn down inside one.
        key = id(fixturedef)
        fixturedef.addfinalizer(lambda: self._before_finish.__setitem__(key, self.counts()))
        return result

    def pytest_fixture_post_finalizer(
        self, fixturedef: pytest.FixtureDef[object], request: pytest.FixtureRequest
    ) -> None:
        before = self._before_finish.pop(id(fixturedef), None)
        if before is not None and self._active():
            add(self.shared, difference(self.counts(), before))

    def _check(self, item: pytest.Item, teardown_failed: bool) -> None:
        start, self.start = self.start, None
        device = device_of(item)
        end = self.counts() if start is not None and device else {}
        self.device = ""
        self._kept = (device, end) if end else None
        if not end:
            return
        assert start is not None  # end is empty (returned above) whenever start is None
        leak = leaked(start, end, self.shared, device)
        if not leak:
            return
        found = {device: leak}
        text = (
            f"{leak_text(found)} still counted by the kernel after this check "
            "(rdma resource; objects the check allocated and did not free)"
        )
        attach(item, LEAK_FIELD, found, "rdma leak", text)
        conclude(item, self.mode, ResourceLeak(text), teardown_failed)
