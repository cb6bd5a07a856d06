"""A resource the device advertises but fails to make is a deviation of the device, never "unsupported".

The device layer is stood in for (pure logic of kinds/check.py: no conformance claim rests on this
test): a device that advertises RC QPs, and whose ibv_create_qp fails with ENOMEM.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_rdma.calls.record import Call
from pytest_rdma.catalogue.index import Catalogue
from pytest_rdma.catalogue.model import Cap, Need
from pytest_rdma.generate import expand
from pytest_rdma.kinds.check import Check
from pytest_rdma.outcomes import Deviation, Unsupported
from pytest_rdma.verbs import CATALOGUE

CATALOG = Catalogue.of(CATALOGUE)


class AdvertisingDevice:
    """Stands in for DeviceUnderTest: advertises everything, or lacks `lacks`."""

    name = "rxe0"
    transport = "roce"

    def __init__(self, lacks: str = "") -> None:
        self.lacks = lacks

    def missing(self, cap: Cap) -> str:
        return f"{cap.attr} = 0" if cap.attr == self.lacks else ""

    def fact(self, path: str) -> Any:
        return 0 if path == self.lacks else 1


def failing_create(errno_name: str, errno: int):
    def invoke(verb: str, args: Any = None, *, variables: Any = None, phase: str = "call", **_: Any) -> Call:
        return Call(0, verb, (), None, None, errno, "provider:create_qp", False, "", {}, phase)

    return invoke


def a_case():
    return expand(CATALOG["ibv_query_qp"])[0]


def test_an_advertised_qp_that_cannot_be_made_is_a_deviation_with_its_errno(monkeypatch: pytest.MonkeyPatch) -> None:
    check = Check(a_case(), AdvertisingDevice(), CATALOG)  # type: ignore[arg-type]
    monkeypatch.setattr(check.calls, "invoke", failing_create("ENOMEM", 12))
    with pytest.raises(Deviation) as raised:
        check.resource(Need("qp", spec={"qp_type": "IBV_QPT_RC"}))
    deviation = raised.value
    assert "which the device advertises" in deviation.expected
    assert deviation.observation.as_dict() == {"verb": CATALOG.producer("qp").name, "errno": "ENOMEM"}


def test_a_qp_type_the_device_does_not_advertise_is_unsupported_naming_the_attribute(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    producer = CATALOG.producer("qp")
    needs = producer.tables["needs"]["qp_type"]["IBV_QPT_UD"]
    (cap,) = needs
    check = Check(a_case(), AdvertisingDevice(lacks=cap.attr), CATALOG)  # type: ignore[arg-type]
    monkeypatch.setattr(check.calls, "invoke", failing_create("EINVAL", 22))
    with pytest.raises(Unsupported) as raised:
        check.resource(Need("qp", spec={"qp_type": "IBV_QPT_UD"}))
    assert raised.value.capability == f"{cap.attr} = 0"
