"""A device's identity without the rest of a test session (for headers and the CLI)."""

from __future__ import annotations

from functools import cache

from pytest_rdma.provider import pyverbs_env
from pytest_rdma.provider.identity import DeviceIdentity, identify


@cache
def describe(name: str) -> DeviceIdentity:
    pyverbs_env.require()
    import pyverbs.device as d

    with d.Context(name=name) as ctx:
        attr = ctx.query_device()
        return identify(name, attr.vendor_id, attr.vendor_part_id, attr.fw_version)
