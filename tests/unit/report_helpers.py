"""Material for the reporting self-tests: a tiny check kind whose outcome depends on the driver.

Pure logic on the host (allowed: no conformance claim rests on it). The pytester conftest
below stands in for the device fixture with a fixed identity, so the reporting can be tested
without any RDMA device; the checks go through the real generate.run_case and the real
Deviation / Unsupported / Blocked outcomes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CONFTEST = '''
import os
import time

import pytest

from pytest_rdma.checks.registry import KINDS, Case, check_kind
from pytest_rdma.outcomes import Blocked, Deviation, Unsupported
from pytest_rdma.provider.identity import DeviceIdentity

IDENTITIES = {
    "rxe0": DeviceIdentity("rxe0", "rxe", "CA", "roce", "none", "0x0", "0", "6.1.0-test", "44.0"),
    "siw0": DeviceIdentity("siw0", "siw", "RNIC", "iw", "0.0.0.0", "0x626d74", "0", "6.1.0-test", "44.0"),
}

# (driver, variant) -> what the demo check does; absent means the device conforms.
BEHAVIOUR = {
    ("rxe", "deviant"): "deviates",
    ("siw", "deviant"): "deviates",
    ("siw", "rc-only"): "unsupported",
    ("rxe", "blocked"): "blocked",
    ("siw", "blocked"): "blocked",
}


class Dut:
    def __init__(self, name):
        self.name = name
        self.identity = IDENTITIES[name]


@pytest.fixture(scope="session")
def rdma_dut(request):
    return Dut(request.param)


if "demo" not in KINDS:
    @check_kind("demo")
    class Demo:
        @staticmethod
        def expand(verb, claim):
            return []

        @staticmethod
        def run(case, dut, res):
            fallback = os.environ.get("DEMO_" + case.variant.upper().replace("-", "_"), "")
            what = BEHAVIOUR.get((dut.identity.driver, case.variant), fallback)
            if what == "deviates":
                raise Deviation("ibv_demo(3) RETURN VALUE", "EINVAL for a bad mask", "returned 0",
                                {"attr_mask": "0x1"}, "import pyverbs  # reproduce " + case.id)
            if what == "unsupported":
                raise Unsupported("IBV_QPT_UD")
            if what == "blocked":
                raise Blocked("no DET provider here")
            if what == "error":
                raise RuntimeError("ibv_alloc_pd failed: ENOMEM")
            if what == "hang":
                time.sleep(30)
            if what == "crash":
                os._exit(3)
'''

TESTS = '''
import pytest

from pytest_rdma.checks.registry import Case
from pytest_rdma.generate import run_case

VARIANTS = ["conforming", "deviant", "rc-only", "blocked"]
CASES = [Case("ibv_demo", "keeps-promise", "demo", v) for v in VARIANTS]


@pytest.mark.parametrize("rdma_case", CASES, ids=[c.id for c in CASES])
@pytest.mark.parametrize("rdma_dut", ["rxe0", "siw0"], indirect=True)
def test_ibv_demo(rdma_dut, rdma_case):
    run_case(rdma_case, rdma_dut, None)
'''

WAIVERS = {
    "rxe": '''
[[waiver]]
id = "test_ibv_demo[keeps-promise-deviant]"
reason = "rxe accepts the bad mask (known)"
link = "ibv_demo(3) RETURN VALUE"
observed = "returned 0"
''',
    "siw": '''
[[waiver]]
id = "test_ibv_demo[keeps-promise-dev*]"
reason = "siw accepts the bad mask (known)"
link = "https://example.org/bug/1"
''',
}


def make_project(pytester: Any, tests: str = TESTS, waivers: dict[str, str] | None = None) -> Path:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_demo=tests)
    directory = pytester.mkdir("expect")
    for driver, text in (WAIVERS if waivers is None else waivers).items():
        (directory / f"{driver}.toml").write_text(text)
    return directory


def outcomes(path: Path) -> dict[str, str]:
    document = json.loads(path.read_text())
    return {r["nodeid"]: r["outcome"] for r in document["results"]}
