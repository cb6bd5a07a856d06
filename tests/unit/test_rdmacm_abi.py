"""pytest_rdma.ibv.rdmacm(_abi) against the installed <rdma/rdma_cma.h> and librdmacm.so.1, by gcc."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import c_layout
import pytest

from pytest_rdma.ibv import cdecl, rdmacm, rdmacm_abi

RDMA_CMA_H = Path("/usr/include/rdma/rdma_cma.h")

pytestmark = pytest.mark.skipif(
    shutil.which("gcc") is None or not RDMA_CMA_H.exists(),
    reason=f"gcc and {RDMA_CMA_H} are needed (apt-get install gcc librdmacm-dev)",
)


def test_every_struct_field_enum_and_prototype_matches_the_header(tmp_path: Path) -> None:
    program = c_layout.Program(["rdma/rdma_cma.h"])
    fields = sum(program.add_type(cls) for cls in rdmacm_abi.all_types())
    for name, value in rdmacm_abi.VALUES.items():
        program.check(name, name, value)
    for name, text in {**rdmacm.EXPORTED, **rdmacm.INLINE}.items():
        program.add_function(name, cdecl.signature(text))
    assert fields > 80
    problems = c_layout.differences(program.expected, c_layout.run(program, tmp_path))
    assert not problems, "\n".join(problems)


def test_every_struct_and_enum_member_of_the_header_is_bound() -> None:
    text = re.sub(r"/\*.*?\*/", "", RDMA_CMA_H.read_text(), flags=re.S)
    structs = set(re.findall(r"^(struct \w+) \{", text, flags=re.M))
    assert structs <= {cls._cname_ for cls in rdmacm_abi.all_types()}
    members = {
        re.match(r"\s*(\w+)", part).group(1)
        for body in re.findall(r"\benum\s*\w*\s*\{(.*?)\}", text, flags=re.S)
        for part in body.split(",")
        if part.strip()
    }
    assert members <= set(rdmacm_abi.VALUES)


def test_every_function_is_a_symbol_and_the_inlines_are_arithmetic() -> None:
    missing = [name for name in rdmacm.EXPORTED if not hasattr(rdmacm.library(), name)]
    assert not missing
    cm_id = rdmacm_abi.rdma_cm_id()
    local = rdmacm.call("rdma_get_local_addr", cm_id)
    assert local.route == "librdmacm:inline"
    assert local.value == rdmacm.address(cm_id) + rdmacm_abi.rdma_cm_id.route.offset
    assert rdmacm.call("rdma_event_str", 9).value == b"RDMA_CM_EVENT_ESTABLISHED"
