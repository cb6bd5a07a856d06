"""pytest_rdma.ibv.lib and .mirrors on the host (no RDMA device).

- every exported name is a symbol of libibverbs.so.1, every mirror is a header inline (or macro);
- every verb the man pages document is bound, or listed in lib.NOT_CALLABLE with a reason;
- every prototype, exported or inline, is the installed header's (gcc, __builtin_types_compatible_p);
- every mirror does what the header's inline does, on fake objects (inline_shim).
"""

from __future__ import annotations

import ctypes
import errno
import gzip
import re
import shutil
import subprocess
import sys
from pathlib import Path

import c_layout
import inline_shim
import pytest

from pytest_rdma.ibv import abi, binding, cdecl, lib, mirrors

MAN3 = Path("/usr/share/man/man3")
VERBS_H = Path("/usr/include/infiniband/verbs.h")
needs_gcc = pytest.mark.skipif(
    shutil.which("gcc") is None or not VERBS_H.exists(),
    reason=f"gcc and {VERBS_H} are needed (apt-get install gcc libibverbs-dev)",
)
# Macros of verbs.h over an exported function of the same name: the mirror is what C code calls.
MACROS = {"ibv_query_port", "ibv_reg_mr", "ibv_reg_mr_iova"}


def _exported(name: str) -> bool:
    try:
        getattr(lib.library(), name)
    except AttributeError:
        return False
    return True


def test_every_exported_entry_is_a_symbol_of_the_library() -> None:
    missing = [name for name in lib.EXPORTED if not _exported(name)]
    assert not missing


def test_every_mirror_is_an_inline_of_the_header_not_a_symbol() -> None:
    exported = {name for name in binding.MIRRORS if _exported(name)}
    assert exported == MACROS


def test_loading_needs_no_device_and_spawns_nothing() -> None:
    # find_library would run gcc/ldconfig; no device is needed to load or to call a string helper.
    code = (
        "import sys\n"
        "from pytest_rdma.ibv import binding\n"
        "print(binding.call('ibv_node_type_str', 1).value.decode())\n"
        "print('ctypes.util' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:2] == ["InfiniBand channel adapter", "False"]


def _documented() -> dict[str, str]:
    """Every page name and every ``ibv_x(`` of the ibv_* man pages, with the page it came from."""
    found: dict[str, str] = {}
    for page in sorted(MAN3.glob("ibv_*.3.gz")):
        found.setdefault(page.name[: -len(".3.gz")], page.resolve().name)
        text = gzip.open(page, "rt", errors="replace").read().replace("\\_", "_")
        text = re.sub(r"\\f(\[[A-Z]*\]|[A-Z])", "", text)
        for name in re.findall(r"\b((?:ibv|mult_to_ibv|mbps_to_ibv)_\w+)\"?\s*\(", text):
            found.setdefault(name, page.resolve().name)
    return found


@pytest.mark.skipif(not MAN3.joinpath("ibv_create_qp.3.gz").exists(), reason="no man pages (libibverbs-dev)")
def test_every_documented_verb_is_bound_or_said_why_not() -> None:
    documented = _documented()
    assert len([p for p in MAN3.glob("ibv_*.3.gz")]) >= 125
    bound = set(lib.EXPORTED) | set(binding.MIRRORS)
    loose = {name: page for name, page in documented.items() if name not in bound and name not in lib.NOT_CALLABLE}
    assert not loose, f"documented but neither bound nor in lib.NOT_CALLABLE: {loose}"
    stale = set(lib.NOT_CALLABLE) - set(documented)
    assert not stale, f"lib.NOT_CALLABLE names no longer in the man pages: {sorted(stale)}"


def test_every_mirror_and_export_has_a_route() -> None:
    assert set(binding.MIRRORS) == set(mirrors.INLINE)
    assert binding.call("ibv_inc_rkey", 0x123456FF) == lib.Raw(0x12345600, 0, "libibverbs:inline")
    assert binding.call("ibv_rate_to_mbps", 3) == lib.Raw(10000, 0, "libibverbs")
    with pytest.raises(KeyError):
        binding.call("ibv_no_such_verb")


@needs_gcc
def test_every_prototype_is_the_headers(tmp_path: Path) -> None:
    program = c_layout.Program(["infiniband/verbs.h"])
    for name, text in lib.EXPORTED.items():
        program.add_function(name, cdecl.signature(text))
    for name, text in mirrors.INLINE.items():
        program.add_function(mirrors.CHECK_AS.get(name, name), cdecl.signature(text))
    problems = c_layout.differences(program.expected, c_layout.run(program, tmp_path))
    assert len(program.expected) > 150
    assert not problems, "\n".join(problems)


# --- the mirrors against the header's inlines ----------------------------------------------------

# Inlines whose every route calls an exported function (which would read the fake objects'
# hidden parts): covered by the prototype check and in the lab.
_EXPORTED_ROUTES = {"ibv_reg_mr", "ibv_reg_mr_iova", "ibv_query_gid_ex", "ibv_query_gid_table"}
# verbs_context op looked up by the inlines of mirrors_special.
_SPECIAL_OPS = {
    "ibv_create_qp_ex": "create_qp_ex",
    "ibv_create_srq_ex": "create_srq_ex",
    "ibv_post_srq_ops": "post_srq_ops",
    "ibv_create_wq": "create_wq",
    "ibv_query_device_ex": "query_device_ex",
    "ibv_query_port": "query_port",
    "ibv_close_xrcd": "close_xrcd",
}
# Where a missing op makes the header call an exported function (query_device_ex, query_port)
# or crash (close_xrcd), only the op-present case runs on fakes.
_PRESENT_ONLY = {"ibv_query_device_ex", "ibv_query_port", "ibv_close_xrcd"}


def _cases() -> list[tuple[str, str]]:
    cases: list[tuple[str, str]] = []
    for verb in sorted(binding.MIRRORS):
        if verb in _EXPORTED_ROUTES:
            continue
        extended = verb in mirrors.EXTENDED_OPS or verb in _SPECIAL_OPS
        if extended and verb not in _PRESENT_ONLY:
            cases += [(verb, s) for s in ("op", "no op", "not extended", "sz short")]
        elif verb == "ibv_alloc_mw":
            cases += [(verb, "op"), (verb, "no op")]
        elif verb == "ibv_bind_mw":
            cases += [(verb, s) for s in ("type 2", "op", "range without mr", "other pd")]
        else:
            cases.append((verb, "op"))
    return cases


@pytest.fixture(scope="module")
def shim(tmp_path_factory: pytest.TempPathFactory) -> ctypes.CDLL:
    if shutil.which("gcc") is None or not VERBS_H.exists():
        pytest.skip("gcc and libibverbs-dev are needed to compile the header's inlines")
    names = [verb for verb in binding.MIRRORS if verb not in _EXPORTED_ROUTES]
    return inline_shim.build_shim(names, tmp_path_factory.mktemp("shim"))


def _arrange(world: inline_shim.World, verb: str, scenario: str, args: tuple) -> None:
    """Install the op the verb calls (or not), as the scenario says."""
    if verb in mirrors.CONTEXT_OPS or verb in ("ibv_alloc_mw", "ibv_bind_mw"):
        op = mirrors.CONTEXT_OPS[verb][0] if verb in mirrors.CONTEXT_OPS else verb[len("ibv_") :]
        if scenario != "no op":
            setattr(world.vctx.context.ops, op, world.callback(op, abi.ibv_context_ops._c_[op]))
    elif verb in mirrors.OBJECT_OPS:
        cls, member, index = mirrors.OBJECT_OPS[verb]
        where = args[index] + getattr(cls, member).offset
        ctypes.c_void_p.from_address(where).value = world.callback(member, cls._c_[member])
    elif verb in mirrors.EXTENDED_OPS or verb in _SPECIAL_OPS:
        op = mirrors.EXTENDED_OPS[verb][0] if verb in mirrors.EXTENDED_OPS else _SPECIAL_OPS[verb]
        if scenario != "no op":
            setattr(world.vctx, op, world.callback(op, abi.verbs_context._c_[op]))
        if scenario == "not extended":
            world.vctx.context.abi_compat = 0
        if scenario == "sz short":
            world.vctx.sz = ctypes.sizeof(abi.verbs_context) - getattr(abi.verbs_context, op).offset - 1
    if verb == "ibv_bind_mw":
        mw, bind = abi.ibv_mw.from_address(args[1]), abi.ibv_mw_bind.from_address(args[2])
        mw.type = 2 if scenario == "type 2" else 1
        if scenario == "range without mr":
            bind.bind_info.length = 4096
        if scenario == "other pd":
            mr = world.buffer()
            abi.ibv_mr.from_address(mr).pd = world.buffer()
            bind.bind_info.mr = mr


@pytest.mark.parametrize(("verb", "scenario"), _cases(), ids=[f"{v}-{s}" for v, s in _cases()])
def test_mirror_does_what_the_header_does(shim: ctypes.CDLL, verb: str, scenario: str) -> None:
    world = inline_shim.World()
    args = inline_shim.arguments(world, verb)
    _arrange(world, verb, scenario, args)
    header, mirror = inline_shim.run_both(world, shim, verb, args)
    assert mirror.value == header.value
    assert mirror.errno == header.errno
    assert mirror.calls == header.calls
    assert mirror.memory == header.memory


def test_the_differential_cases_cover_the_routes() -> None:
    # Guard against a harness that silently tests nothing: each kind of answer occurs.
    scenarios = {scenario for _, scenario in _cases()}
    assert {"op", "no op", "not extended", "sz short", "type 2", "other pd"} <= scenarios
    assert len(_cases()) > 150


def test_route_names_the_reason_the_header_answered(shim: ctypes.CDLL) -> None:
    world = inline_shim.World()
    args = inline_shim.arguments(world, "ibv_create_cq_ex")
    raw = binding.call("ibv_create_cq_ex", *args)
    assert raw == lib.Raw(None, errno.EOPNOTSUPP, "libibverbs:no create_cq_ex op")
    world.vctx.sz = 8
    assert binding.call("ibv_create_cq_ex", *args).route.startswith("libibverbs:verbs_context.sz=8 lacks")
    world.vctx.create_cq_ex = world.callback("create_cq_ex", abi.verbs_context._c_["create_cq_ex"])
    world.vctx.sz = ctypes.sizeof(abi.verbs_context)
    assert binding.call("ibv_create_cq_ex", *args).route == "provider:create_cq_ex"


def test_a_null_unchecked_op_is_reported_not_called() -> None:
    world = inline_shim.World()
    args = inline_shim.arguments(world, "ibv_post_send")
    with pytest.raises(lib.WouldCrash, match=r"ops\.post_send"):
        binding.call("ibv_post_send", *args)


def test_post_send_keeps_the_sign_and_bad_wr() -> None:
    world = inline_shim.World()
    qp, wr, bad = inline_shim.arguments(world, "ibv_post_send")

    def post_send(qp_: int, wr_: int, bad_: int) -> int:
        ctypes.c_void_p.from_address(bad_).value = wr_
        return -22

    proto = mirrors.cdecl.signature(abi.ibv_context_ops._c_["post_send"])
    fn = ctypes.CFUNCTYPE(proto.restype, *proto.argtypes)(post_send)
    world.vctx.context.ops.post_send = ctypes.cast(fn, ctypes.c_void_p).value
    raw = binding.call("ibv_post_send", qp, wr, bad)
    assert (raw.value, raw.route) == (-22, "provider:post_send")
    assert ctypes.c_void_p.from_address(bad).value == wr
