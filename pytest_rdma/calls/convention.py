"""What a raw C return means under the verb's return convention (its page's RETURN VALUE).

Besides success or failure, a call can break the convention itself: a negative value where
the page promises 0 or a positive errno, NULL without errno set, a return that is not an
errno value at all. Such a breach is recorded with the call and reported as what it is,
never read as an ordinary refusal.
"""

from __future__ import annotations

import errno as errno_module
from dataclasses import dataclass

from pytest_rdma.calls.record import CValue
from pytest_rdma.catalogue.model import (
    RETURNS_COUNT,
    RETURNS_ERRNO,
    RETURNS_NEG_CODE,
    RETURNS_NEG_ERRNO,
    RETURNS_POINTER,
)

KNOWN_ERRNOS = frozenset(errno_module.errorcode)


@dataclass(frozen=True)
class Judged:
    ok: bool | None  # None: the verb cannot fail (void) or returns a plain value
    errno: int  # the errno the convention designates: the return for "errno", errno for "pointer"
    problem: str  # a breach of the convention, or ""


def judge(returns: str, value: CValue, c_errno: int) -> Judged:
    if returns == RETURNS_ERRNO:
        code = int(value or 0)
        if code == 0:
            return Judged(True, 0, "")
        if code < 0:
            return Judged(False, -code, f"returned {code}: the page promises 0 or a positive errno value")
        problem = "" if code in KNOWN_ERRNOS else f"returned {code}, which is not an errno value"
        return Judged(False, code, problem)
    if returns == RETURNS_POINTER:
        if value:
            return Judged(True, 0, "")
        problem = "" if c_errno else "returned NULL without setting errno"
        return Judged(False, c_errno, problem)
    if returns == RETURNS_COUNT:
        count = int(value or 0)
        if count >= 0:
            return Judged(True, 0, "")
        problem = "" if count == -1 else f"returned {count}: the page promises -1 on failure"
        return Judged(False, c_errno, problem)
    if returns == RETURNS_NEG_ERRNO:
        code = int(value or 0)
        if code >= 0:
            return Judged(True, 0, "")
        problem = "" if -code in KNOWN_ERRNOS else f"returned {code}, which is not a negated errno value"
        return Judged(False, -code, problem)
    if returns == RETURNS_NEG_CODE:
        code = int(value or 0)
        if code == 0:
            return Judged(True, 0, "")
        if code > 0:
            return Judged(False, c_errno, f"returned {code}: the page promises 0 or a negative code")
        return Judged(False, c_errno, "")  # the code itself is the value; errno, if set, the cause
    return Judged(None, 0, "")
