"""The call layer's pure parts, on the host: marshalling, argument merging, values, return conventions, rendering.

No verb is called here. The rendering tests make a check's record by hand (Call objects whose
arguments are marshalled as the call layer marshals them) and prove that the C reproducer
compiles against the installed <infiniband/verbs.h> and that the Python one is valid Python
that gives every argument back as it was recorded.
"""

from __future__ import annotations

import ctypes
import json
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from pytest_rdma.calls.convention import judge
from pytest_rdma.calls.invoke import arguments, flatten, kind_of_ctype, return_ctype
from pytest_rdma.calls.marshal import build_struct, marshal, parse_ctype, read_struct
from pytest_rdma.calls.record import Call, Field, Handle, OutArg, StructArg, Sym
from pytest_rdma.calls.render import c_program, encode, python_script, step_line
from pytest_rdma.calls.values import Unresolved, flag_expr, flags, is_flag_expr, number, read_path, resolve
from pytest_rdma.catalogue.index import Catalogue
from pytest_rdma.catalogue.model import (
    RETURNS_COUNT,
    RETURNS_ERRNO,
    RETURNS_NEG_ERRNO,
    RETURNS_POINTER,
    RETURNS_VALUE,
    RETURNS_VOID,
    Buffer,
    Dev,
    Flags,
    Need,
    Ref,
    Var,
)
from pytest_rdma.ibv import abi
from pytest_rdma.observations import from_dict
from pytest_rdma.replay import decode
from pytest_rdma.verbs import CATALOGUE

VERBS = Catalogue.of(CATALOGUE)
HEADER = Path("/usr/include/infiniband/verbs.h")
MAC = bytes.fromhex("661122334455")


# -- marshal: structs --------------------------------------------------------------------------------
def test_build_struct_sets_dotted_paths_and_zeroes_the_rest() -> None:
    obj, record = build_struct(
        "ibv_qp_init_attr",
        {
            "qp_type": Sym(2, "IBV_QPT_RC"),
            "cap.max_send_wr": 3,
            "cap.max_recv_sge": 2,
            "send_cq": Handle("cq0", "cq", "", 0x1000),
        },
    )
    assert (obj.qp_type, obj.cap.max_send_wr, obj.cap.max_recv_sge, obj.send_cq) == (2, 3, 2, 0x1000)
    assert (obj.cap.max_recv_wr, obj.cap.max_inline_data, obj.recv_cq, obj.sq_sig_all) == (0, 0, None, 0)
    assert record == StructArg(
        "struct ibv_qp_init_attr",
        (
            ("qp_type", Sym(2, "IBV_QPT_RC")),
            ("cap.max_send_wr", 3),
            ("cap.max_recv_sge", 2),
            ("send_cq", Handle("cq0", "cq", "", 0x1000)),
        ),
    )
    gid, _ = build_struct("ibv_ah_attr", {"grh.dgid": bytes(range(16)), "is_global": 1})
    assert bytes(gid.grh.dgid.raw) == bytes(range(16)), "raw bytes are copied over a union's storage"


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"cap.max_sned_wr": 1}, "struct ibv_qp_init_attr: cannot set cap.max_sned_wr = 1"),
        ({"cap": 1}, "struct ibv_qp_init_attr: cannot set cap = 1"),
    ],
)
def test_build_struct_names_a_field_it_cannot_set(fields: dict[str, Any], says: str) -> None:
    with pytest.raises(LookupError, match=says.replace("(", r"\(")):
        build_struct("ibv_qp_init_attr", fields)


def test_bytes_that_do_not_fit_are_refused() -> None:
    with pytest.raises(LookupError, match="17 bytes do not fit in 16"):
        build_struct("ibv_ah_attr", {"grh.dgid": bytes(17)})


def flow_rule(**head: Any) -> dict[str, Any]:
    spec = {"type": Sym(0x20, "IBV_FLOW_SPEC_ETH"), "val.dst_mac": MAC, "mask.dst_mac": b"\xff" * 6}
    return {
        "type": Sym(0, "IBV_FLOW_ATTR_NORMAL"),
        "port": 1,
        "num_of_specs": 2,
        "specs": (("ibv_flow_spec_eth", spec), ("ibv_flow_spec_tcp_udp", {"type": 0x40, "val.dst_port": 80})),
        **head,
    }


def test_trailing_flow_specs_are_laid_out_after_the_head_with_their_sizes() -> None:
    head, record = build_struct("ibv_flow_attr", flow_rule())
    head_size, eth_size = ctypes.sizeof(abi.ibv_flow_attr), ctypes.sizeof(abi.ibv_flow_spec_eth)
    tcp_size = ctypes.sizeof(abi.ibv_flow_spec_tcp_udp)
    assert head.size == head_size + eth_size + tcp_size, "the head's size is the whole rule's"
    assert (head.num_of_specs, head.port) == (2, 1)
    eth = abi.ibv_flow_spec_eth.from_address(ctypes.addressof(head) + head_size)
    assert (eth.type, eth.size, bytes(eth.val.dst_mac), bytes(eth.mask.dst_mac)) == (0x20, eth_size, MAC, b"\xff" * 6)
    tcp = abi.ibv_flow_spec_tcp_udp.from_address(ctypes.addressof(head) + head_size + eth_size)
    assert (tcp.type, tcp.size, tcp.val.dst_port) == (0x40, tcp_size, 80)
    assert record.ctype == "struct ibv_flow_attr" and dict(record.fields)["specs"][1][0] == "ibv_flow_spec_tcp_udp"
    given, _ = build_struct("ibv_flow_attr", flow_rule(size=7))
    assert given.size == 7, "a size the check sets (a deliberately wrong one) is kept"


def test_read_struct_gives_plain_data_and_a_gid_as_its_16_bytes() -> None:
    gid = abi.ibv_gid()
    gid.raw[:] = list(range(16))
    assert read_struct(gid) == bytes(range(16))
    attr, _ = build_struct("ibv_qp_attr", {"qp_state": 2, "ah_attr.grh.dgid": bytes(range(16)), "cap.max_send_wr": 5})
    data = read_struct(attr)
    assert data["qp_state"] == 2 and data["cap"]["max_send_wr"] == 5
    assert data["ah_attr"]["grh"]["dgid"] == bytes(range(16))
    assert read_path(data, "ah_attr.grh.dgid") == bytes(range(16)) and read_path(data, "cap.max_send_wr") == 5
    with pytest.raises(Unresolved, match="no field 'max_snd_wr'"):
        read_path(data, "cap.max_snd_wr")
    wc = read_struct(abi.ibv_wc())
    assert "imm_data" in wc, "an anonymous union's members read as fields of the struct, as in C"


def test_marshal_allocates_outs_and_passes_handles_and_null() -> None:
    params = [(p.name, p.ctype, p.direction) for p in VERBS["ibv_query_gid"].params]
    context = Handle("ctx", "context", "struct ibv_context *", 0x2000)
    done = marshal(params, {"context": context, "port_num": 1, "index": 0})
    assert done.cargs[:3] == [0x2000, 1, 0] and isinstance(done.cargs[3], int)
    assert done.shown == [("context", context), ("port_num", 1), ("index", 0), ("gid", OutArg("union ibv_gid"))]
    assert isinstance(done.outs["gid"], abi.ibv_gid)
    pkey = marshal([(p.name, p.ctype, p.direction) for p in VERBS["ibv_query_pkey"].params], {"context": context})
    assert pkey.shown[3] == ("pkey", OutArg("__be16")) and isinstance(pkey.outs["pkey"], ctypes.c_void_p)
    listed = marshal([("num_devices", "int *", "out")], {})
    assert isinstance(listed.outs["num_devices"], ctypes.c_int)
    assert marshal([("attr", "struct ibv_qp_attr *", "in")], {}).cargs == [None], "an in pointer not given is NULL"
    with pytest.raises(LookupError, match="cannot pass 'x'"):
        marshal([("pd", "struct ibv_pd *", "in")], {"pd": "x"})


def test_ctypes_are_parsed_as_the_prototypes_spell_them() -> None:
    assert parse_ctype("const struct ibv_qp_attr *").c_name == "struct ibv_qp_attr"
    assert parse_ctype("union ibv_gid *").c_name == "union ibv_gid"
    assert (parse_ctype("struct ibv_device **").pointers, parse_ctype("uint8_t").aggregate) == (2, False)
    assert return_ctype(VERBS["ibv_create_qp"]) == "struct ibv_qp *"
    assert return_ctype(VERBS["ibv_get_device_name"]) == "const char *"
    assert (kind_of_ctype("struct ibv_qp *"), kind_of_ctype("struct ibv_device **")) == ("qp", "device_list")


# -- invoke.arguments: defaults, overrides, variables -------------------------------------------------
CREATE_QP = VERBS["ibv_create_qp"]


def test_defaults_take_the_variables() -> None:
    values = arguments(CREATE_QP, {}, {"qp_type": "IBV_QPT_UD"})
    assert values["pd"] == Need("pd")
    attr = values["qp_init_attr"]
    assert attr["qp_type"] == "IBV_QPT_UD" and attr["send_cq"] == Need("cq")
    assert (attr["cap.max_send_wr"], attr["cap.max_recv_wr"]) == (4, 4), "a nested default is flattened to paths"
    mr = arguments(VERBS["ibv_reg_mr"], {}, {})
    assert (mr["addr"], mr["length"]) == (Buffer(4096), 4096), "the verb's own variables fill what the call does not"


def test_a_whole_struct_given_in_part_is_merged_into_the_default() -> None:
    attr = arguments(
        CREATE_QP, {"qp_init_attr": {"cap": {"max_send_wr": 9}, "sq_sig_all": 1}}, {"qp_type": "IBV_QPT_RC"}
    )["qp_init_attr"]
    assert (attr["cap.max_send_wr"], attr["cap.max_recv_wr"], attr["sq_sig_all"]) == (9, 4, 1)
    assert attr["qp_type"] == "IBV_QPT_RC" and attr["send_cq"] == Need("cq")


def test_a_dotted_key_sets_one_field_or_replaces_a_sub_struct() -> None:
    one = arguments(CREATE_QP, {"qp_init_attr.cap.max_send_wr": 9}, {"qp_type": "IBV_QPT_RC"})["qp_init_attr"]
    assert (one["cap.max_send_wr"], one["cap.max_recv_wr"]) == (9, 4)
    whole = arguments(CREATE_QP, {"qp_init_attr.cap": {"max_send_wr": 9}}, {"qp_type": "IBV_QPT_RC"})["qp_init_attr"]
    assert {k: v for k, v in whole.items() if k.startswith("cap")} == {"cap.max_send_wr": 9}
    assert whole["send_cq"] == Need("cq"), "only the sub-struct named is replaced"


def test_a_scalar_replaces_and_an_unknown_parameter_is_refused() -> None:
    assert arguments(CREATE_QP, {"qp_init_attr": None}, {"qp_type": "IBV_QPT_RC"})["qp_init_attr"] is None
    with pytest.raises(LookupError, match="ibv_create_qp has no parameter 'qp_attr'"):
        arguments(CREATE_QP, {"qp_attr.cap": 1}, {})
    assert flatten({"a": {"b": {"c": 1}}, "d": 2}) == {"a.b.c": 1, "d": 2}


# -- values -----------------------------------------------------------------------------------------------
def test_flag_expressions_keep_their_names() -> None:
    assert flag_expr("IBV_QP_STATE | IBV_QP_PORT") == Sym(1 | 32, "IBV_QP_STATE | IBV_QP_PORT")
    assert flag_expr("IBV_QP_STATE|0x40000000") == Sym(1 | 1 << 30, "IBV_QP_STATE | 0x40000000")
    assert is_flag_expr("IBV_ACCESS_LOCAL_WRITE") and not is_flag_expr("rxe0") and not is_flag_expr("0x10")
    with pytest.raises(Unresolved, match="IBV_QP_STATTE"):
        flag_expr("IBV_QP_STATTE")


def test_flags_with_bits_for_undefined_bits() -> None:
    assert flags(Flags(names=("IBV_ACCESS_LOCAL_WRITE",), bits=(31,))) == Sym(
        1 | 1 << 31, "IBV_ACCESS_LOCAL_WRITE | 0x80000000"
    )
    assert flags(Flags(bits=(21, 22))) == Sym(3 << 21, "0x600000")
    assert flags(Flags()) == Sym(0, "0")


class Scope:
    """What values resolve against: a device with one fact, one resource, one step."""

    def __init__(self) -> None:
        self.qp = Handle("qp0", "qp", "struct ibv_qp *", 0x3000)

    def fact(self, path: str) -> Any:
        return {"port.gid_tbl_len": 16, "gid": bytes(16)}[path]

    def resource(self, need: Need) -> Handle:
        return Handle(f"{need.kind}0", need.kind, f"struct ibv_{need.kind} *", 0x4000)

    def buffer(self, size: int, seed: int | None = None) -> Handle:
        return Handle("buf0", "buffer", "void *", 0x5000, size=size)

    def step(self, name: str) -> Call:
        """An earlier call, by step name ("call") or by the name its object was recorded under ("pd0")."""
        handle = self.qp if name in ("call", "qp0") else Handle(name, name.rstrip("0123456789"), "", 0x6000)
        return Call(-1, "", (), handle.address, handle, 0, "", True)

    def struct(self, handle: Handle) -> Any:
        return {"qp_num": 0x11, "cap": {"max_send_wr": 4}}


def test_resolve_values_against_the_check() -> None:
    scope = Scope()
    got = resolve(
        {
            "n": Dev("port.gid_tbl_len", plus=1),
            "twice": Dev("port.gid_tbl_len", times=2),
            "pd": Need("pd"),
            "buf": Buffer(Dev("port.gid_tbl_len")),
            "qp": Ref("call"),
            "qpn": Ref("call", "qp_num"),
            "mask": "IBV_QP_STATE",
            "name": "rxe0",
            "raw": Dev("gid"),
            "nested": ({"x": Flags(bits=(3,))},),
        },
        scope,
    )
    assert (got["n"], got["twice"], got["pd"].name, got["buf"].size, got["qp"]) == (17, 32, "pd0", 16, scope.qp)
    assert got["qpn"] == Field(0x11, "qp0", "qp_num") and str(got["qpn"]) == "(uintptr_t)qp0->qp_num", "kept by name"
    assert (got["mask"], got["name"], got["raw"]) == (Sym(1, "IBV_QP_STATE"), "rxe0", bytes(16))
    assert got["nested"] == ({"x": Sym(8, "0x8")},)
    assert [number(v) for v in (got["mask"], got["pd"], got["qpn"], 5)] == [1, 0x4000, 0x11, 5]
    with pytest.raises(Unresolved, match="reached the call layer unresolved"):
        resolve(Var("qp_type"), scope)


# -- convention: what a return means ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("returns", "value", "c_errno", "ok", "errno", "problem"),
    [
        (RETURNS_ERRNO, 0, 0, True, 0, ""),
        (RETURNS_ERRNO, 22, 0, False, 22, ""),
        (RETURNS_ERRNO, -22, 0, False, 22, "returned -22: the page promises 0 or a positive errno value"),
        (RETURNS_ERRNO, 4242, 0, False, 4242, "returned 4242, which is not an errno value"),
        (RETURNS_POINTER, 0x1000, 5, True, 0, ""),
        (RETURNS_POINTER, None, 12, False, 12, ""),
        (RETURNS_POINTER, None, 0, False, 0, "returned NULL without setting errno"),
        (RETURNS_COUNT, 3, 0, True, 0, ""),
        (RETURNS_COUNT, -1, 22, False, 22, ""),
        (RETURNS_COUNT, -22, 22, False, 22, "returned -22: the page promises -1 on failure"),
        (RETURNS_NEG_ERRNO, 0, 0, True, 0, ""),
        (RETURNS_NEG_ERRNO, -95, 0, False, 95, ""),
        (RETURNS_NEG_ERRNO, -4242, 0, False, 4242, "returned -4242, which is not a negated errno value"),
        (RETURNS_VOID, None, 0, None, 0, ""),
        (RETURNS_VALUE, b"rxe0", 0, None, 0, ""),
    ],
)
def test_judge_by_the_return_convention(
    returns: str, value: Any, c_errno: int, ok: bool | None, errno: int, problem: str
) -> None:
    judged = judge(returns, value, c_errno)
    assert (judged.ok, judged.errno, judged.problem) == (ok, errno, problem)


def test_an_rdma_cm_failure_is_minus_one_with_errno_not_a_broken_convention() -> None:
    """rdma_create_id(3) and the others, RETURN VALUE: 0 on success, -1 with errno set on error."""
    int_verbs = [verb for verb in VERBS.verbs if verb.family == "rdmacm" and verb.prototype.startswith("int ")]
    assert len(int_verbs) == 11
    for verb in int_verbs:
        judged = judge(verb.returns, -1, 19)  # ENODEV: no RDMA device for the address
        assert (judged.ok, judged.errno, judged.problem) == (False, 19, ""), verb.name


# -- render: one record, three texts ---------------------------------------------------------------------------
CTX = Handle("ctx", "context", "struct ibv_context *", 0x100)
PD = Handle("pd0", "pd", "struct ibv_pd *", 0x200)
CQ = Handle("cq0", "cq", "struct ibv_cq *", 0x300)
QP = Handle("qp0", "qp", "struct ibv_qp *", 0x400)
BUF = Handle("buf0", "buffer", "void *", 0x500, size=4096)
MR = Handle("mr0", "mr", "struct ibv_mr *", 0x600)
FLOW = Handle("flow0", "flow", "struct ibv_flow *", 0x700)


def made(
    index: int,
    verb: str,
    values: Mapping[str, Any],
    value: Any,
    result: Any = None,
    *,
    ok: bool | None = True,
    errno: int = 0,
    phase: str = "setup",
    problem: str = "",
) -> Call:
    """A Call as invoke records it: its arguments marshalled by the verb's parameters."""
    entry = VERBS[verb]
    shown = marshal([(p.name, p.ctype, p.direction) for p in entry.params], values).shown
    return Call(
        index,
        verb,
        tuple(shown),
        value,
        value if result is None else result,
        errno,
        "provider:x",
        ok,
        problem,
        {},
        phase,
    )


def record() -> list[Call]:
    """A check's calls: setup objects, a query, a struct with a GID and a field of an object, a flow rule."""
    qp_attr = {
        "qp_state": Sym(2, "IBV_QPS_RTR"),
        "path_mtu": Sym(3, "IBV_MTU_1024"),
        "dest_qp_num": Field(0x11, "qp0", "qp_num"),
        "ah_attr.is_global": 1,
        "ah_attr.grh.dgid": bytes(range(16)),
        "ah_attr.port_num": 1,
        "rq_psn": 0x1A2B,
        "qp_access_flags": Sym(7, "IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ"),
    }
    return [
        made(0, "ibv_alloc_pd", {"context": CTX}, PD.address, PD),
        made(
            1,
            "ibv_create_cq",
            {"context": CTX, "cqe": 16, "cq_context": None, "channel": None, "comp_vector": 0},
            CQ.address,
            CQ,
        ),
        made(
            2,
            "ibv_create_qp",
            {
                "pd": PD,
                "qp_init_attr": {
                    "send_cq": CQ,
                    "recv_cq": CQ,
                    "qp_type": Sym(2, "IBV_QPT_RC"),
                    "cap.max_send_wr": 4,
                    "cap.max_recv_wr": 4,
                },
            },
            QP.address,
            QP,
        ),
        made(
            3,
            "ibv_reg_mr",
            {"pd": PD, "addr": BUF, "length": 4096, "access": Sym(1, "IBV_ACCESS_LOCAL_WRITE")},
            MR.address,
            MR,
        ),
        made(4, "ibv_query_device", {"context": CTX}, 0, phase="readback"),
        made(5, "ibv_query_gid", {"context": CTX, "port_num": 1, "index": 0}, 0, phase="readback"),
        made(6, "ibv_query_pkey", {"context": CTX, "port_num": 1, "index": 0}, 0, phase="readback"),
        made(
            7,
            "ibv_get_device_name",
            {"device": Handle("device", "device", "struct ibv_device *", 0x800)},
            0x900,
            b"rxe0",
            ok=None,
            phase="readback",
        ),
        made(8, "ibv_create_flow", {"qp": QP, "flow_attr": flow_rule(port=Sym(1, "1"))}, FLOW.address, FLOW),
        made(
            9,
            "ibv_modify_qp",
            {
                "qp": QP,
                "attr": qp_attr,
                "attr_mask": Sym(1 | 128 | 256 | 1 << 30, "IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | 0x40000000"),
            },
            22,
            ok=False,
            errno=22,
            phase="call",
        ),
        made(10, "ibv_modify_qp", {"qp": QP, "attr": {}, "attr_mask": Sym(0, "0")}, 0, phase="call"),
        made(11, "ibv_destroy_qp", {"qp": QP}, 0, phase="teardown"),
    ]


def test_step_lines_read_as_the_call() -> None:
    calls = record()
    assert step_line(calls[0]) == "ibv_alloc_pd(ctx) -> pd0"
    assert step_line(calls[2]).startswith("ibv_create_qp(pd0, {send_cq=cq0, recv_cq=cq0, qp_type=IBV_QPT_RC, ")
    assert step_line(calls[5]) == "ibv_query_gid(ctx, 1, 0, &(union ibv_gid)) -> 0"
    assert "ah_attr.grh.dgid=000102030405060708090a0b0c0d0e0f" in step_line(calls[9])
    assert step_line(calls[9]).endswith(
        "IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | 0x40000000) -> 22, errno EINVAL (22)"
    )
    assert step_line(calls[8]).endswith("} + ibv_flow_spec_eth{...} + ibv_flow_spec_tcp_udp{...}) -> flow0")


def needs_gcc_and_header() -> str:
    gcc = shutil.which("gcc")
    if gcc is None or not HEADER.exists():
        pytest.skip(f"needs gcc and {HEADER} (Debian: apt-get install gcc libibverbs-dev)")
    return gcc


def test_the_c_reproducer_compiles_against_the_installed_header() -> None:
    gcc = needs_gcc_and_header()
    header = ["check:    test_ibv_modify_qp[demo] on rxe0 (driver rxe)", "observed: errno EINVAL"]
    text = c_program(
        VERBS.by_name, "rxe0", record(), header=header, decisive=9, observation=from_dict({"errno": "EINVAL"})
    )
    done = subprocess.run(
        [
            gcc,
            "-fsyntax-only",
            "-Wall",
            "-Werror=implicit-function-declaration",
            "-Werror=int-conversion",
            "-Werror=incompatible-pointer-types",
            "-x",
            "c",
            "-",
            "-libverbs",
        ],
        input=text,
        capture_output=True,
        text=True,
        check=False,
    )
    numbered = "\n".join(f"{n:4} {line}" for n, line in enumerate(text.splitlines(), start=1))
    assert done.returncode == 0, f"{done.stderr}\n{numbered}"
    assert "\tstruct ibv_qp * qp0 = ibv_create_qp(pd0, &a2_qp_init_attr);" in text
    assert "\ta9_attr.dest_qp_num = (uintptr_t)qp0->qp_num;" in text, "a field of an object, as an expression"
    assert 'memcpy(&a9_attr.ah_attr.grh.dgid, "\\x00\\x01' in text
    assert "\ta8_flow_attr.spec0.size = sizeof(a8_flow_attr.spec0);" in text
    assert "ibv_destroy_qp" not in text, "teardown is the program's own business"
    assert 'if (r9 == 22) { puts("REPRODUCED"); return 0; }' in text
    assert '\tif (!pd0) { puts("SETUP FAILED at [0] ibv_alloc_pd"); return 2; }' in text


def test_the_python_reproducer_is_valid_python() -> None:
    text = python_script(
        "rxe0", record(), header=["check: demo"], decisive=9, observation=from_dict({"errno": "EINVAL"})
    )
    compile(text, "reproducer.py", "exec")
    assert "raise SystemExit(replay('rxe0', CALLS, decisive=9, observation={'errno': 'EINVAL'}))" in text


def same(recorded: Any, replayed: Any) -> bool:
    """Whether the replay passes what was recorded: the same numbers, objects by their recorded names."""
    if isinstance(recorded, Handle):
        if recorded.kind == "buffer":
            return isinstance(replayed, Handle) and replayed.kind == "buffer" and replayed.size == recorded.size
        return isinstance(replayed, Handle) and replayed.name == recorded.name
    if isinstance(recorded, Field):
        return replayed == recorded
    if isinstance(recorded, OutArg):
        return replayed is None  # an out parameter is allocated again
    if isinstance(recorded, StructArg):
        fields = dict(recorded.fields)
        return set(replayed) == set(fields) and all(same(fields[k], replayed[k]) for k in fields)
    if isinstance(recorded, tuple):  # trailing specs: (struct name, fields) pairs
        return len(recorded) == len(replayed) and all(
            name == again[0] and all(same(v, again[1][k]) for k, v in fields.items())
            for (name, fields), again in zip(recorded, replayed)
        )
    return type(number(replayed)) is type(number(recorded)) and number(replayed) == number(recorded)


def test_the_python_reproducer_gives_each_argument_back_as_recorded() -> None:
    scope = Scope()
    for call in record():
        for name, value in call.args:
            replayed = resolve(decode(json.loads(json.dumps(encode(value)))), scope)
            assert same(value, replayed), (call.verb, name, value, replayed)


@pytest.mark.parametrize(
    ("observation", "condition"),
    [
        ({"errno": "EINVAL"}, "r9 == 22"),
        ({"errno": "EINVAL", "problem": "negative errno"}, "r9 == -22"),  # the provider negated it: again
        ({"problem": "negative return"}, "r9 < 0"),
        ({"returned": 0}, "r9 == 0"),
        ({"data": "placed", "first": 0, "region": "mr0", "length": 64}, "!all_zero((void *)mr0->addr, 64)"),
        (
            {"data": "differs", "first": 0, "region": "mr0", "offset": 8, "source": "mr0", "length": 16},
            "memcmp((char *)mr0->addr + 8, mr0->addr, 16) != 0",
        ),
    ],
)
def test_the_c_reproducer_judges_the_observation_itself(observation: dict[str, Any], condition: str) -> None:
    text = c_program(
        VERBS.by_name, "rxe0", record(), header=["check: demo"], decisive=9, observation=from_dict(observation)
    )
    assert f'if ({condition}) {{ puts("REPRODUCED"); return 0; }}' in text


def test_an_observation_the_program_cannot_judge_exits_3() -> None:
    text = c_program(
        VERBS.by_name, "rxe0", record(), header=["check: demo"], decisive=9, observation=from_dict({"odd": 1})
    )
    assert 'puts("REPRODUCED")' not in text
    assert 'puts("DONE: compare the results printed above with the observation"); return 3;' in text


def test_a_value_an_earlier_call_returned_is_the_replays_own_not_the_recorded_number() -> None:
    # A type 2 window's key is what ibv_inc_rkey returned (r7 in C). Replayed, the window is a new
    # one with another index, so the key must come from the replay's own [7], as in the C program.
    from pytest_rdma.replay import ReplayScope

    key = Sym(0x12345601, "r7")
    encoded = json.loads(json.dumps(encode(key)))
    assert encoded == {"$result": 7, "$was": 0x12345601}
    scope = object.__new__(ReplayScope)  # its device is not needed to resolve a returned value
    scope.named, scope.returned = {}, {"r7": 0x22222201}
    assert resolve(decode(encoded), scope) == Sym(0x22222201, "r7")
    # Flags and plain numbers are not results.
    assert encode(Sym(3, "IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE")) == (
        "IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE"
    )
    assert encode(Sym(7, "7")) == 7


def test_an_address_inside_an_object_keeps_its_offset_in_the_python_reproducer() -> None:
    # A write outside a window's range but inside its MR: remote_addr = mr1->addr + 3072. Replayed
    # without the offset it wrote inside the window and the deviation did not reproduce.
    scope = Scope()
    recorded = Field(0x4000 + 3072, "qp0", "addr", 3072)
    encoded = json.loads(json.dumps(encode(recorded)))
    assert encoded == {"$field": ["qp0", "addr", 3072]}
    scope.struct = lambda handle: {"addr": 0x9000}  # the replay's own object, at another address
    assert resolve(decode(encoded), scope) == Field(0x9000 + 3072, "qp0", "addr", 3072)
    assert json.loads(json.dumps(encode(Field(0x11, "qp0", "qp_num")))) == {"$field": ["qp0", "qp_num"]}


def test_the_python_reproducer_reads_a_completions_field_by_its_index() -> None:
    # A completion's status is observed as wc.0.status: the replay's poll wrote a list of completions.
    poll = Call(18, "ibv_poll_cq", (), 1, 1, 0, "", True, outs={"wc": ({"status": 0, "wr_id": 7},)})
    assert from_dict({"field": "wc.0.status", "value": 0}).replayed(poll, {}) is True
    assert from_dict({"field": "wc.0.status", "value": 10}).replayed(poll, {}) is False
    assert from_dict({"field": "wc.1.status", "value": 0}).replayed(poll, {}) is False  # no second completion


def test_the_python_reproducer_names_the_objects_a_call_returned_through_an_out_pointer() -> None:
    # rdma_create_id(channel, &id, ...): the id is recorded as {"address": n}; the replay's later calls
    # (rdma_bind_addr(id0, ...)) name it. An iWARP pair connects this way, so every siw data-path
    # reproducer in Python takes this path.
    from pytest_rdma.replay import out_handles

    # Its type is the one pointed to, so that the replay reads its fields (a13_event->id).
    create = Call(3, "rdma_create_id", (), 0, 0, 0, "", True, outs={"id": {"address": 0x5000}})
    ctypes = {"channel": "struct rdma_event_channel *", "id": "struct rdma_cm_id **"}
    (handle,) = out_handles(create, {"id": "id0"}, ctypes).values()
    assert (handle.name, handle.address, handle.ctype) == ("id0", 0x5000, "struct rdma_cm_id *")
    failed = Call(3, "rdma_create_id", (), -1, -1, 12, "", False, outs={"id": None})
    assert out_handles(failed, {"id": "id0"}, ctypes)["id0"].address == 0


def test_an_enum_in_a_recorded_argument_is_a_number_in_the_reproducers() -> None:
    # An iWARP pair binds its cm_id to a sockaddr whose sin_family is socket.AF_INET, an IntEnum: its
    # repr (<AddressFamily.AF_INET: 2>) made every such Python reproducer a SyntaxError (seen on siw0).
    # The record keeps the number C got, so no renderer sees the enum.
    from pytest_rdma.calls.marshal import marshal
    from pytest_rdma.provider.network import sockaddr

    (_, address), *_ = marshal([("addr", "struct sockaddr *", "in")], {"addr": sockaddr("10.0.0.1", 1)}).shown
    assert type(dict(address.fields)["sin_family"]) is int
    bind = Call(0, "rdma_bind_addr", (("id", None), ("addr", address)), 0, 0, 0, "", True)
    text = python_script("siw0", [bind])
    compile(text, "reproducer.py", "exec")
    assert "'sin_family': 2" in text


def test_a_struct_passed_as_another_is_built_as_itself_again_by_the_python_reproducer() -> None:
    # rdma_bind_addr takes a struct sockaddr *; the check passes a sockaddr_in. The replay built a plain
    # struct sockaddr, which has no sin_family: a LookupError before the first rdma_cm call (seen on siw0).
    from pytest_rdma.calls.marshal import marshal
    from pytest_rdma.provider.network import sockaddr

    params = [("addr", "struct sockaddr *", "in")]
    (_, shown), *_ = marshal(params, {"addr": sockaddr("10.0.0.1", 18515)}).shown
    again = decode(json.loads(json.dumps(encode(shown))))
    (_, replayed), *_ = marshal(params, {"addr": again}).shown
    assert replayed == shown and replayed.ctype == "struct sockaddr_in"
