"""pytest_rdma.ibv.abi and .enums against the installed <infiniband/verbs.h>, compiled by gcc.

A ctypes struct that differs from the header by one field corrupts every call that passes it,
silently; so every size, offset, alignment, integer sign, array length and pointer type is
printed by a C program built against the header and compared with what ctypes computes. The enum
values are checked the same way, and the header's own list of enums and structs is parsed so that
a member or struct missing from the binding fails too.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import c_layout
import pytest

from pytest_rdma.ibv import abi, enums

VERBS_H = Path("/usr/include/infiniband/verbs.h")
VERBS_API_H = Path("/usr/include/infiniband/verbs_api.h")

pytestmark = [
    pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed (apt-get install gcc)"),
    pytest.mark.skipif(not VERBS_H.exists(), reason=f"{VERBS_H} is missing (apt-get install libibverbs-dev)"),
]


def _header(path: Path) -> str:
    text = re.sub(r"/\*.*?\*/", "", path.read_text(), flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, int], dict[str, int], int]:
    program = c_layout.Program(["infiniband/verbs.h"])
    fields = sum(program.add_type(cls) for cls in abi.all_types())
    actual = c_layout.run(program, tmp_path_factory.mktemp("abi"))
    return program.expected, actual, fields


def test_every_struct_field_matches_the_header(layout: tuple[dict[str, int], dict[str, int], int]) -> None:
    expected, actual, fields = layout
    assert fields > 600, "the walk found too few fields: is abi.all_types() complete?"
    problems = c_layout.differences(expected, actual)
    assert not problems, f"{len(problems)} of {len(expected)} layout facts differ from verbs.h:\n" + "\n".join(problems)


def test_every_struct_of_the_header_is_bound() -> None:
    defined = set(re.findall(r"^((?:struct|union) \w+) \{", VERBS_H.read_text(), flags=re.M))
    missing = defined - set(abi.by_cname())
    assert not missing, f"structs of verbs.h without a ctypes class in pytest_rdma.ibv.abi: {sorted(missing)}"


def test_every_pointer_field_names_its_c_type() -> None:
    unnamed = [
        f"{member.owner.__name__}.{member.pypath}"
        for cls in abi.all_types()
        if not cls._opaque_
        for member in c_layout.members(cls)
        if member.kind is abi.ctypes.c_void_p and member.hint is None
    ]
    assert not unnamed


@pytest.fixture(scope="module")
def enum_values(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, int], dict[str, int]]:
    program = c_layout.Program(["infiniband/verbs.h"])
    for name, value in enums.VALUES.items():
        program.check(name, name, value)
    return program.expected, c_layout.run(program, tmp_path_factory.mktemp("enums"))


def test_every_enum_value_matches_the_header(enum_values: tuple[dict[str, int], dict[str, int]]) -> None:
    expected, actual = enum_values
    assert len(expected) > 400
    problems = c_layout.differences(expected, actual)
    assert not problems, "\n".join(problems)


def _header_enums() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for match in re.finditer(r"\benum\s+(\w*)\s*\{(.*?)\}\s*;", _header(VERBS_H), flags=re.S):
        names = [re.match(r"\s*(\w+)", part).group(1) for part in match.group(2).split(",") if part.strip()]
        found[match.group(1) or f"anon:{names[0]}"] = names
    return found


def test_every_enum_of_the_header_is_listed_with_all_its_members() -> None:
    header = _header_enums()
    assert set(header) <= set(enums.ENUMS), f"enums missing: {sorted(set(header) - set(enums.ENUMS))}"
    for name, members in header.items():
        assert list(enums.ENUMS[name]) == members, name


def test_the_renamed_kernel_enums_and_defines_are_listed() -> None:
    # verbs_api.h: "#define IBV_X IB_UVERBS_X" makes IB_UVERBS constants part of the verbs API.
    aliases = set(re.findall(r"#define\s+(IBV_\w+)\s+IB_UVERBS_\w+", _header(VERBS_API_H)))
    assert aliases <= set(enums.VALUES), sorted(aliases - set(enums.VALUES))


def test_name_of_reads_a_value_back() -> None:
    assert enums.name_of("ibv_qp_state", 3) == "IBV_QPS_RTS"
    assert enums.name_of("ibv_qp_state", 99) == "99"
