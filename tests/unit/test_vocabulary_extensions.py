"""Small extensions of the catalogue's vocabulary, each checked on its own (no RDMA device).

- the "neg-code" return convention (ibv_rereg_mr: 0, or a negative code of the page's enum);
- a verb that cannot fail (void, or a plain value) counts as succeeding;
- "refused" also checks its expectations on the refused call (the code it returned);
- an expectation may compare with a tuple of flag names ("in");
- "context" is a root of device facts (Dev("context.num_comp_vectors"));
- "refused" with the verb's "not implemented" answer is unsupported (unless the claim names it);
- a `then` step may be required to fail (a handle that no longer names anything);
- a C string a verb returns reads as text; a pointer field compares with an object (a resource,
  a step's result or an argument) by address;
- a capability may name several flags ("attr.device_cap_flags&A|B": any of them);
- a step that answers the verb's "not implemented" makes the check unsupported;
- errnos=("*",): a refusal may carry any errno, whatever the page lists for other conditions.
"""

from __future__ import annotations

import dataclasses
import errno
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, TypeVar

import pytest

from pytest_rdma.calls.convention import Judged, judge
from pytest_rdma.calls.record import Call, Handle, Sym
from pytest_rdma.catalogue.model import (
    RETURN_CONVENTIONS,
    RETURNS_NEG_CODE,
    Cap,
    Claim,
    Dev,
    Error,
    Expect,
    Param,
    Ref,
    Step,
    Verb,
)
from pytest_rdma.catalogue.params import read_params
from pytest_rdma.catalogue.validate import problems_of
from pytest_rdma.ibv.enums import VALUES
from pytest_rdma.kinds import calls as call_kinds
from pytest_rdma.kinds.check import COMPARE, Check, plain
from pytest_rdma.observations import Produced
from pytest_rdma.outcomes import Deviation, Unsupported
from pytest_rdma.provider.device import DeviceUnderTest


def test_neg_code_convention() -> None:
    assert RETURNS_NEG_CODE in RETURN_CONVENTIONS
    assert judge(RETURNS_NEG_CODE, 0, 0) == Judged(True, 0, "")
    # The code is the value; errno (EINVAL here) is kept as the cause, and its absence is no breach.
    assert judge(RETURNS_NEG_CODE, -1, errno.EINVAL) == Judged(False, errno.EINVAL, "")
    assert judge(RETURNS_NEG_CODE, -4, 0) == Judged(False, 0, "")
    assert judge(RETURNS_NEG_CODE, 3, 0).problem == "returned 3: the page promises 0 or a negative code"


def _call(ok: bool | None, value: Any = 0, errno_value: int = 0) -> Call:
    return Call(0, "ibv_frob", (), value, value, errno_value, "libibverbs", ok)


def test_a_verb_that_cannot_fail_succeeds() -> None:
    call_kinds.expect_success(object(), _call(None, b"active"))  # type: ignore[arg-type]


P = TypeVar("P")


class FakeCheck:
    """Just what the "refused" kind touches: its spec, its verb's errors, one call, expectations."""

    def __init__(self, call: Call, spec: Mapping[str, Any]) -> None:
        self.the_call = call
        self.spec = MappingProxyType(dict(spec))
        self.verb = Verb("ibv_frob", "ibv_frob(3)", "int ibv_frob(void);", RETURNS_NEG_CODE, "frob")
        self.catalogue = {"ibv_frob": self.verb}
        self.expected: list[Expect] = []
        self.steps: dict[str, Call] = {}

    def params(self, schema: type[P]) -> P:
        return read_params(schema, self.spec.get("params", {}))

    def expects(self) -> tuple[Expect, ...]:
        return tuple(self.spec.get("expect", ()))

    def require_transport(self) -> None: ...

    def require(self, caps: Any) -> None: ...

    def run_steps(self, steps: Any) -> None: ...

    def call(self) -> Call:
        return self.the_call

    def expect(self, call: Call, expects: Any) -> None:
        for item in expects:
            if call.value != item.right:
                raise Deviation(f"{item.left} == {item.right}", f"{call.value}", Produced(call.value))
            self.expected.append(item)

    def deviation(self, expected: str, observed: str, observation: Any, call: Any = None, **_: Any) -> Deviation:
        return Deviation(expected, observed, observation)


def test_refused_checks_its_expectations_on_the_refused_call() -> None:
    code = Expect("ret", "==", -1)
    check = FakeCheck(_call(False, -1, errno.EINVAL), {"expect": (code,), "errnos": ("EINVAL",)})
    call_kinds.refused(check)  # type: ignore[arg-type]
    assert check.expected == [code]
    wrong = FakeCheck(_call(False, -4, errno.EINVAL), {"expect": (code,), "errnos": ("EINVAL",)})
    with pytest.raises(Deviation):
        call_kinds.refused(wrong)  # type: ignore[arg-type]


def test_in_compares_with_a_tuple_of_flag_names() -> None:
    names = (Sym(0, "IBV_FORK_DISABLED"), Sym(1, "IBV_FORK_ENABLED"), Sym(2, "IBV_FORK_UNNEEDED"))
    assert COMPARE["in"](2, plain(names))
    assert not COMPARE["in"](3, plain(names))


def test_context_is_a_root_of_device_facts() -> None:
    verb = Verb(
        "ibv_frob",
        "ibv_frob(3)",
        "int ibv_frob(int v);",
        "errno",
        "frob",
        claims=(Claim("c", "succeeds", "says", "DESCRIPTION", call={"v": Dev("context.num_comp_vectors")}),),
    )
    assert problems_of(verb, kinds=frozenset({"succeeds"}), names={"ibv_frob": verb}) == []


def test_refused_with_the_not_implemented_answer_is_unsupported() -> None:
    check = FakeCheck(_call(False, -4, errno.EOPNOTSUPP), {})
    check.catalogue = {"ibv_frob": dataclasses.replace(check.verb, tables={"not_supported": {"EOPNOTSUPP": "no op"}})}
    with pytest.raises(Unsupported):
        call_kinds.refused(check)  # type: ignore[arg-type]
    # Unless the claim itself names that errno as the refusal it expects.
    named = FakeCheck(_call(False, -4, errno.EOPNOTSUPP), {"errnos": ("EOPNOTSUPP",)})
    named.catalogue = check.catalogue
    call_kinds.refused(named)  # type: ignore[arg-type]


class Invoker:
    def __init__(self, result: Call) -> None:
        self.result = result

    def invoke(self, *_: Any, **__: Any) -> Call:
        return self.result


@pytest.mark.parametrize(
    ("step", "result", "fails"),
    [
        (Step("ibv_frob", expect="fails"), _call(True), True),
        (Step("ibv_frob", expect="fails", errnos=("ENOENT",)), _call(False, 0, errno.EINVAL), True),
        (Step("ibv_frob", expect="fails", errnos=("EINVAL",)), _call(False, 0, errno.EINVAL), False),
        (Step("ibv_frob"), _call(False, 0, errno.EINVAL), True),
    ],
)
def test_then_steps_that_must_fail(step: Step, result: Call, fails: bool) -> None:
    check = FakeCheck(result, {})
    check.calls = Invoker(result)  # type: ignore[attr-defined]
    check.failure = lambda call, expected: Deviation(expected, "failed", {})  # type: ignore[attr-defined]
    if fails:
        with pytest.raises(Deviation):
            call_kinds.then(check, (step,))  # type: ignore[arg-type]
    else:
        call_kinds.then(check, (step,))  # type: ignore[arg-type]


def test_a_returned_c_string_reads_as_text_and_a_pointer_field_compares_with_an_object() -> None:
    check = Check.__new__(Check)
    pd = Handle("pd0", "pd", "struct ibv_pd *", 0x1000)
    check.steps = {"pd": Call(0, "ibv_alloc_pd", (), 0x1000, pd, 0, "libibverbs", True)}
    assert check.read(_call(None, b"active"), "ret") == "active"
    assert check.value_of(_call(True), Ref("pd"), address=True) == 0x1000
    assert check.value_of(_call(True), Ref("pd")) == "pd0"


def test_an_argument_object_compares_by_address_and_a_cap_may_name_several_flags() -> None:
    check = Check.__new__(Check)
    buf = Handle("buf0", "buffer", "void *", 0x2000)
    call = Call(0, "ibv_reg_mr", (("addr", buf), ("length", 4096)), 0x3000, None, 0, "libibverbs", True)
    assert check.argument(call, "addr", address=True) == 0x2000
    assert check.argument(call, "addr") == "buf0"
    assert check.argument(call, "length") == 4096
    dut = DeviceUnderTest.__new__(DeviceUnderTest)
    dut.facts = {"attr": {"device_cap_flags": VALUES["IBV_DEVICE_MEM_WINDOW_TYPE_2B"]}}
    assert dut.missing(Cap("attr.device_cap_flags&IBV_DEVICE_MEM_WINDOW_TYPE_2A|IBV_DEVICE_MEM_WINDOW_TYPE_2B")) == ""
    assert dut.missing(Cap("attr.device_cap_flags&IBV_DEVICE_MEM_WINDOW_TYPE_2A")) != ""


def test_a_step_answered_not_implemented_makes_the_check_unsupported() -> None:
    check = Check.__new__(Check)
    verb = Verb(
        "ibv_frob",
        "ibv_frob(3)",
        "int ibv_frob(void);",
        "errno",
        "frob",
        tables={"not_supported": {"EOPNOTSUPP": "no frob op"}},
    )
    check.catalogue = {"ibv_frob": verb}  # type: ignore[assignment]
    check.calls = Invoker(_call(False, errno.EOPNOTSUPP, errno.EOPNOTSUPP))  # type: ignore[assignment]
    check.spec = {}
    check.steps = {}
    with pytest.raises(Unsupported, match="no frob op"):
        check.run_steps((Step("ibv_frob"),))


def test_whose_code_ran_is_looked_up_from_the_context_read_before_the_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """A destroy verb frees its object: the object's context must be read before the call, not after."""
    import ctypes

    from pytest_rdma.calls import ends, invoke
    from pytest_rdma.ibv import abi, binding, lib, mirrors

    window = abi.ibv_mw(context=0x5000)
    handle = Handle("mw0", "mw", "struct ibv_mw *", ctypes.addressof(window))

    def freeing_call(name: str, *args: Any) -> lib.Raw:
        window.context = 0  # what a free may leave behind
        return lib.Raw(0, 0, "provider:dealloc_mw")

    monkeypatch.setattr(binding, "call", freeing_call)
    monkeypatch.setattr(mirrors, "op_owner", lambda context, op: f"/lib/owner-of-{context:#x}.so")
    monkeypatch.setattr(ends, "_OWNERS", {})
    verb = Verb(
        "ibv_dealloc_mw",
        "ibv_alloc_mw(3)",
        "int ibv_dealloc_mw(struct ibv_mw *mw);",
        "errno",
        "free",
        params=(Param("mw", "struct ibv_mw *"),),
    )
    call = invoke.Calls({"ibv_dealloc_mw": verb}, None).invoke("ibv_dealloc_mw", {"mw": handle})  # type: ignore[arg-type]
    assert call.owner == "owner-of-0x5000.so"


def test_errnos_star_allows_any_errno_even_where_the_page_lists_some() -> None:
    check = FakeCheck(_call(False, -1, errno.EINVAL), {"errnos": ("*",)})
    check.verb = dataclasses.replace(check.verb, errors=(Error("ENODATA", "an empty entry"),))
    call_kinds.refused(check)  # type: ignore[arg-type]
    listed = FakeCheck(_call(False, -1, errno.EINVAL), {})
    listed.verb = check.verb
    with pytest.raises(Deviation):
        call_kinds.refused(listed)  # type: ignore[arg-type]


def test_a_variable_may_hold_a_struct() -> None:
    check = Check.__new__(Check)
    verb = Verb("ibv_frob", "ibv_frob(3)", "int ibv_frob(void);", "errno", "frob", tables={"needs": {"qp_type": {}}})
    check.catalogue = {"ibv_frob": verb}  # type: ignore[assignment]
    check.require_vars("ibv_frob", {"input": MappingProxyType({"comp_mask": 0}), "qp_type": "IBV_QPT_RC"})


def test_a_provider_that_implements_the_verb_refuses_with_the_not_implemented_number() -> None:
    """rxe's create_qp_ex answers EOPNOTSUPP for an unknown comp_mask bit: that is a refusal, not 'unsupported'."""
    refusal = Call(0, "ibv_frob", (), None, None, errno.EOPNOTSUPP, "provider:frob", False, owner="librxe-rdmav34.so")
    check = FakeCheck(refusal, {})
    check.catalogue = {"ibv_frob": dataclasses.replace(check.verb, tables={"not_supported": {"EOPNOTSUPP": "no op"}})}
    call_kinds.refused(check)  # type: ignore[arg-type]
    default = dataclasses.replace(refusal, owner="libibverbs.so.1")
    check = FakeCheck(default, {})
    check.catalogue = {"ibv_frob": dataclasses.replace(check.verb, tables={"not_supported": {"EOPNOTSUPP": "no op"}})}
    with pytest.raises(Unsupported):
        call_kinds.refused(check)  # type: ignore[arg-type]
