"""A result quotes what the man page itself says: the cited section's passage nearest the claim (issue 12)."""

from __future__ import annotations

import pytest
from allure_records import find, record

from pytest_rdma.outcomes import DEVIATES
from pytest_rdma.report.allure_model import convert
from pytest_rdma.report.manpages import page_sections, passage, sections

SOURCE = r""".\" -*- nroff -*-
.TH IBV_DEMO 3 2024-01-01 libibverbs "Libibverbs Programmer's Manual"
.SH "NAME"
ibv_demo \- a page written for this test
.SH "DESCRIPTION"
.B ibv_demo()
changes the
.I thing
of \fIctx\fR to \fBvalue\fR.
.PP
.nf
struct ibv_demo_attr {
        int value;  /* never quoted: a listing */
};
.fi
.SH "NOTES"
If the \s-1QP\s0 mask is invalid, nothing is modified \- not even the state.
.PP
Not all devices support demos.
"""
MODIFY_RANGE = "test_ibv_modify_qp[out-of-range-RC-INIT>RTR-path_mtu=0]"


def test_sections_are_plain_text_paragraphs_without_listings() -> None:
    found = sections(SOURCE)
    assert list(found) == ["NAME", "DESCRIPTION", "NOTES"]
    assert found["DESCRIPTION"] == ["ibv_demo() changes the thing of ctx to value."]
    assert found["NOTES"] == [
        "If the QP mask is invalid, nothing is modified - not even the state.",
        "Not all devices support demos.",
    ]


def installed(page: str) -> None:
    if not page_sections(page, "3"):
        pytest.skip(f"{page}(3) is not installed here (Debian: apt-get install libibverbs-dev)")


def test_the_passage_of_the_cited_section_nearest_the_claim() -> None:
    installed("ibv_modify_qp")
    section, text = passage("ibv_modify_qp(3) NOTES", find(MODIFY_RANGE).says)
    assert section == "NOTES"
    assert text == (
        "If any of the modify attributes or the modify mask are invalid, none of the attributes will "
        "be modified (including the QP state)."
    )
    # The section of the same page that names the capability the claim names, not its neighbour's.
    _, text = passage(
        "ibv_modify_qp(3) NOTES", "IBV_QP_ALT_PATH works only on devices that advertise IBV_DEVICE_AUTO_PATH_MIG"
    )
    assert "IBV_DEVICE_AUTO_PATH_MIG" in text and "RESIZE" not in text


def test_no_quote_rather_than_an_unrelated_one() -> None:
    installed("ibv_modify_qp")
    # One word in common ("devices") is not enough: it would quote a paragraph about something else.
    assert passage("ibv_modify_qp(3) NOTES", "the moon is made of cheese, say the devices") == ("", "")
    assert passage("det_modify_qp(3) RETURN VALUES", "an invalid parameter fails with EINVAL") == ("", "")


def test_a_result_quotes_the_page_and_says_the_claim_in_our_words() -> None:
    case = find(MODIFY_RANGE)
    quote = "If any of the modify attributes or the modify mask are invalid, none of the attributes will be modified"
    description = convert(record(case, "rxe0", DEVIATES), stop_ms=1, quote=quote).document["description"]
    assert description.startswith(
        "**What the man page says** ([ibv_modify_qp(3) NOTES]"
        "(https://man7.org/linux/man-pages/man3/ibv_modify_qp.3.html#NOTES)):\n\n"
        f"> {quote}\n\n**The claim checked, in our words:** {case.says}\n"
    )
