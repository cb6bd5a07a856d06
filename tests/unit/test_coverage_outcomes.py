"""`pytest-rdma coverage --results` counts each function's outcomes per device, and the totals."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_rdma.coverage import main

CASE = """<testcase classname="{driver}.ibv_alloc_pd" name="{claim}"><properties>
<property name="driver" value="{driver}"/><property name="device" value="{device}"/>
<property name="stable_id" value="test_ibv_alloc_pd[{claim}]"/>
<property name="outcome" value="{outcome}"/></properties>{extra}</testcase>"""


def junit(path: Path, device: str, driver: str, outcomes: dict[str, str]) -> Path:
    cases = "".join(
        CASE.format(
            device=device,
            driver=driver,
            claim=claim,
            outcome=outcome,
            extra=f'<skipped message="{outcome}: attr.x = 0"/>' if outcome != "conforms" else "",
        )
        for claim, outcome in outcomes.items()
    )
    path.write_text(f'<testsuites><testsuite name="{device} ({driver})">{cases}</testsuite></testsuites>')
    return path


def test_outcomes_are_counted_per_device_and_in_total(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rxe = junit(
        tmp_path / "rxe.xml",
        "rxe0",
        "rxe",
        {"distinct-pds-x16": "conforms", "of-the-context-context-under-test": "conforms"},
    )
    siw = junit(
        tmp_path / "siw.xml",
        "siw0",
        "siw",
        {"distinct-pds-x16": "conforms", "of-the-context-context-under-test": "unsupported"},
    )
    assert main(["--verb", "ibv_alloc_pd", "--results", str(rxe), "--results", str(siw)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "  outcomes: rxe0: 2 conforms; siw0: 1 conforms, 1 unsupported" in out
    assert out[-2:] == ["rxe0: 2 conforms", "siw0: 1 conforms, 1 unsupported"]
