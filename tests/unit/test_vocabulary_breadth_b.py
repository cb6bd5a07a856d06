"""Vocabulary the breadth B entries rely on (host only: no device needed).

- validation accepts every errno name the call layer reports, aliases included (EOPNOTSUPP);
- an expectation may read a field of an object the call was given ("qp.state" after a modify);
- a claim axis may hold a struct (a mapping) even where the verb has a needs table for other axes.
"""

from __future__ import annotations

import ctypes

import pytest

from pytest_rdma.calls.record import Call, Handle
from pytest_rdma.catalogue.index import Catalogue
from pytest_rdma.catalogue.model import RETURNS_ERRNO, Cap, Error, Param, Verb
from pytest_rdma.catalogue.validate import CatalogueError, validate
from pytest_rdma.ibv import abi
from pytest_rdma.kinds.check import Check
from pytest_rdma.kinds.load import known_kinds


def _verb(errno: str) -> Verb:
    return Verb(name="ibv_demo", man="ibv_demo(3)", prototype="int ibv_demo(void);", returns=RETURNS_ERRNO,
                summary="demo", errors=(Error(errno, "a condition", untestable="demo"),))


@pytest.mark.parametrize("name", ["EOPNOTSUPP", "ENOTSUP", "EAGAIN", "EWOULDBLOCK", "EINVAL"])
def test_errno_aliases_are_errno_names(name: str) -> None:
    validate([_verb(name)], kinds=known_kinds())


def test_unknown_errno_name_is_still_a_problem() -> None:
    with pytest.raises(CatalogueError, match="EFOO"):
        validate([_verb("EFOO")], kinds=known_kinds())


def _bare_check(verbs: tuple[Verb, ...] = ()) -> Check:
    """A Check with only what read() and require_vars() use: no device, no case."""
    check = object.__new__(Check)
    check.steps = {}
    check.catalogue = Catalogue.of(verbs)
    return check


def test_a_field_of_an_argument_object_is_read_from_its_struct() -> None:
    qp = abi.ibv_qp()
    qp.state = 3
    qp.qp_num = 0x1234
    handle = Handle("qp0", "qp", "struct ibv_qp *", ctypes.addressof(qp), keep=qp)
    call = Call(0, "ibv_modify_qp", (("qp", handle), ("attr_mask", 1)), 0, 0, 0, "libibverbs", True)
    check = _bare_check()
    assert check.read(call, "qp.state") == 3
    assert check.read(call, "qp.qp_num") == 0x1234
    assert check.read(call, "qp") == "qp0"  # the argument itself, as before
    qp.state = 1  # read when asked: after the call, as the object stands
    assert check.read(call, "qp.state") == 1


def test_unhashable_axis_values_pass_require_vars() -> None:
    demo = Verb(name="ibv_demo", man="ibv_demo(3)", prototype="int ibv_demo(int qp_type);", returns=RETURNS_ERRNO,
                summary="demo", params=(Param("qp_type", "int"),),
                tables={"needs": {"qp_type": {"IBV_QPT_UD": (Cap("transport", "transport", ("ib",)),)}}})
    check = _bare_check((demo,))
    check.require_vars("ibv_demo", {"grh": {"next_hdr": 6}, "qp_type": "IBV_QPT_RC"})  # no TypeError, nothing needed
