"""Vocabulary the SRQ, QP, WQ and flow entries rely on: errnos, argument fields, struct axes, arrays (host only).

- validation accepts every errno name the call layer reports, aliases included (EOPNOTSUPP);
- an expectation may read a field of an object the call was given ("qp.state" after a modify);
- a claim axis may hold a struct (a mapping) even where the verb has a needs table for other axes.
"""

from __future__ import annotations

import ctypes

import pytest

from pytest_rdma.calls.invoke import Calls
from pytest_rdma.calls.record import Call, Handle
from pytest_rdma.catalogue.index import Catalogue
from pytest_rdma.catalogue.model import RETURNS_ERRNO, Cap, Error, Param, Verb
from pytest_rdma.catalogue.validate import CatalogueError, validate
from pytest_rdma.ibv import abi
from pytest_rdma.kinds.check import Check
from pytest_rdma.kinds.load import known_kinds


def _verb(errno: str) -> Verb:
    return Verb(
        name="ibv_demo",
        man="ibv_demo(3)",
        prototype="int ibv_demo(void);",
        returns=RETURNS_ERRNO,
        summary="demo",
        errors=(Error(errno, "a condition", untestable="demo"),),
    )


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
    check.calls = Calls(check.catalogue.by_name, check)
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
    demo = Verb(
        name="ibv_demo",
        man="ibv_demo(3)",
        prototype="int ibv_demo(int qp_type);",
        returns=RETURNS_ERRNO,
        summary="demo",
        params=(Param("qp_type", "int"),),
        tables={"needs": {"qp_type": {"IBV_QPT_UD": (Cap("transport", "transport", ("ib",)),)}}},
    )
    check = _bare_check((demo,))
    check.require_vars("ibv_demo", {"grh": {"next_hdr": 6}, "qp_type": "IBV_QPT_RC"})  # no TypeError, nothing needed


# -- Array: memory a struct member points to (an indirection table's WQs, an RSS hash key) ----------------
def _marshalled_table(items: object) -> tuple[object, object]:
    from pytest_rdma.calls.marshal import marshal

    done = marshal(
        [("init_attr", "struct ibv_rwq_ind_table_init_attr *", "in")],
        {"init_attr": {"log_ind_tbl_size": 1, "ind_tbl": items, "comp_mask": 0}},
    )
    return done, abi.ibv_rwq_ind_table_init_attr.from_address(done.cargs[0])


def test_an_array_of_objects_becomes_an_array_of_pointers() -> None:
    from pytest_rdma.catalogue.model import Array

    wq0 = Handle("wq0", "wq", "struct ibv_wq *", 0x1000)
    wq1 = Handle("wq1", "wq", "struct ibv_wq *", 0x2000)
    done, attr = _marshalled_table(Array((wq0, wq1)))
    table = (ctypes.c_void_p * 2).from_address(attr.ind_tbl)
    assert [table[0], table[1]] == [0x1000, 0x2000]
    assert attr.log_ind_tbl_size == 1


def test_bytes_in_an_array_become_a_byte_buffer() -> None:
    from pytest_rdma.calls.marshal import marshal
    from pytest_rdma.catalogue.model import Array

    key = bytes(range(40))
    done = marshal(
        [("attr", "struct ibv_qp_init_attr_ex *", "in")],
        {"attr": {"rx_hash_conf.rx_hash_key_len": 40, "rx_hash_conf.rx_hash_key": Array(key)}},
    )
    attr = abi.ibv_qp_init_attr_ex.from_address(done.cargs[0])
    assert ctypes.string_at(attr.rx_hash_conf.rx_hash_key, 40) == key


def test_an_array_is_resolved_item_by_item() -> None:
    from pytest_rdma.calls.values import resolve
    from pytest_rdma.catalogue.model import Array, Dev

    class Facts:
        def fact(self, path: str) -> int:
            return {"attr.max_qp": 7}[path]

    assert resolve(Array((Dev("attr.max_qp"), 3)), Facts()) == Array((7, 3))  # type: ignore[arg-type]
    assert resolve(Array(b"\x01\x02"), Facts()) == Array(b"\x01\x02")  # type: ignore[arg-type]


def test_an_array_is_rendered_in_c_and_for_the_replay() -> None:
    from pytest_rdma.calls.record import StructArg
    from pytest_rdma.calls.render import CProgram, encode, step_line
    from pytest_rdma.catalogue.model import Array
    from pytest_rdma.replay import decode
    from pytest_rdma.verbs import CATALOGUE

    wq0 = Handle("wq0", "wq", "struct ibv_wq *", 0x1000)
    arg = StructArg("struct ibv_rwq_ind_table_init_attr", (("log_ind_tbl_size", 0), ("ind_tbl", Array((wq0,)))))
    program = CProgram({verb.name: verb for verb in CATALOGUE}, "rxe0")
    program.struct("a3_init_attr", arg)
    text = "\n".join(program.lines)
    assert "void *a3_init_attr_ind_tbl[] = {wq0};" in text
    assert "a3_init_attr.ind_tbl = (void *)a3_init_attr_ind_tbl;" in text
    assert encode(Array((wq0,))) == {"$array": [{"$handle": "wq0"}]}
    assert decode(encode(Array(b"\xab"))) == Array(b"\xab")
    call = Call(3, "ibv_create_rwq_ind_table", (("context", None), ("init_attr", arg)), 0, None, 95, "x", False)
    assert "ind_tbl=&[wq0]" in step_line(call)


def test_a_field_of_an_argument_object_is_an_object_expression_in_c() -> None:
    from pytest_rdma.calls.render import _out_expr

    wq = Handle("wq0", "wq", "struct ibv_wq *", 0x1000)
    call = Call(5, "ibv_modify_wq", (("wq", wq), ("wq_attr", None)), 0, 0, 0, "x", True)
    assert _out_expr(call, "wq.state") == "wq0->state"
    assert _out_expr(call, "wq_attr.attr_mask") == "a5_wq_attr.attr_mask"
