"""Material for the reporting self-tests: a demo verb and claim kind whose outcome depends on the driver.

A pytester project made by `make_project` holds:
- rdma_demo.py: the demo verb, as data, named by the ini setting `rdma_catalogue_extra`
  (the way a user adds a verb: the plugin validates it at configure and generates its checks);
- conftest.py: the "demo" claim kind, registered with pytest_rdma.kinds.registry.kind, whose
  run records a call and raises Deviation / Unsupported / NotExercised / Blocked by driver;
  and `rdma_dut`, standing in for the device with a fixed identity and the active catalogue,
  parametrized over rxe0 and siw0 as the plugin does for --rdma-dev;
- test_demo.py: the suite's own two lines, for the demo verb alone.

So the checks run through the real generate.verb_test, running.run_case, Check and outcomes,
and the reporters see what they see in the lab, without any RDMA device. Pure logic on the
host (allowed: no conformance claim rests on it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

VARIANTS = ("conforming", "deviant", "rc-only", "unreached", "blocked")

DEMO_VERBS = f"""
from pytest_rdma.catalogue.model import RETURNS_ERRNO, Claim, Error, Need, Param, Verb

IBV_DEMO = Verb(
    name="ibv_demo",
    man="ibv_demo(3)",
    prototype="int ibv_demo(struct ibv_context *context, int attr_mask);",
    returns=RETURNS_ERRNO,
    summary="the reporting self-tests' verb: refuses a mask with an undefined bit",
    params=(Param("context", "struct ibv_context *", default=Need("context")), Param("attr_mask", "int", default=0)),
    errors=(Error("EINVAL", "attr_mask has a bit the page does not define", covered_by=("keeps-promise",)),),
    claims=(
        Claim("keeps-promise", "demo", "a mask with an undefined bit is refused with EINVAL", "RETURN VALUE",
              over={{"behaviour": {VARIANTS!r}}}, variant="{{behaviour}}"),
    ),
)
VERBS = (IBV_DEMO,)
"""

CONFTEST = '''
import errno
import os
import time

import pytest

from pytest_rdma import generate
from pytest_rdma.calls.record import Call, Handle, Sym
from pytest_rdma.catalogue.model import Cap
from pytest_rdma.kinds.registry import KINDS, kind
from pytest_rdma.observations import Errno, Returned
from pytest_rdma.outcomes import Blocked, NotExercised, Unsupported
from pytest_rdma.provider.identity import DeviceIdentity

IDENTITIES = {
    "rxe0": DeviceIdentity("rxe0", "rxe", "CA", "roce", "none", "0x0", "0", "6.1.0-test", "44.0"),
    "siw0": DeviceIdentity("siw0", "siw", "RNIC", "iw", "0.0.0.0", "0x626d74", "0", "6.1.0-test", "44.0"),
}

# (driver, behaviour) -> what the demo check does; absent: DEMO_<BEHAVIOUR> from the environment,
# else the device conforms.
BEHAVIOUR = {
    ("rxe", "deviant"): "deviates",
    ("siw", "deviant"): "deviates",
    ("siw", "rc-only"): "unsupported",
    ("rxe", "unreached"): "not-exercised",
    ("rxe", "blocked"): "blocked",
    ("siw", "blocked"): "blocked",
}
CONTEXT = Handle("ctx", "context", "struct ibv_context *", 0)
BAD_MASK = Sym(1 << 30, "0x40000000")


class Dut:
    """The device under test, as a check sees it: name, identity, catalogue."""

    def __init__(self, name):
        self.name = name
        self.identity = IDENTITIES[name]
        self.catalogue = generate.active()
        self.transport = self.identity.transport


@pytest.fixture(scope="session")
def rdma_dut(request):
    return Dut(request.param)


def pytest_generate_tests(metafunc):
    # What the plugin does for --rdma-dev rxe0 --rdma-dev siw0, for the generated checks.
    if "rdma_case" in metafunc.fixturenames and "rdma_dut" in metafunc.fixturenames:
        metafunc.parametrize("rdma_dut", ["rxe0", "siw0"], indirect=True, scope="session")


def recorded(check, errno_name):
    """The demo's one call, recorded as the call layer records a call (no libibverbs needed)."""
    code = getattr(errno, errno_name) if errno_name else 0
    call = Call(len(check.calls.log), "ibv_demo", (("context", CONTEXT), ("attr_mask", BAD_MASK)), code, code,
                code, "provider:demo", code == 0)
    check.calls.log.append(call)
    return call


def demo(check):
    """The demo kind: refused with EINVAL, or whatever BEHAVIOUR gives the device's driver."""
    behaviour = check.spec["vars"]["behaviour"]
    fallback = os.environ.get("DEMO_" + behaviour.upper().replace("-", "_"), "conforms")
    what = BEHAVIOUR.get((check.dut.identity.driver, behaviour), fallback)
    if what == "conforms":
        recorded(check, "EINVAL")
    elif what == "deviates":
        call = recorded(check, "")
        raise check.deviation("refused with EINVAL", "ibv_demo succeeded -> 0", Returned(), call,
                              attr_mask="0x40000000")
    elif what.startswith("errno:"):
        name = what.split(":", 1)[1]
        call = recorded(check, name)
        raise check.deviation("refused with EINVAL", f"errno {name}", Errno(name), call)
    elif what == "unsupported":
        raise Unsupported("attr.max_qp_wr = 0")
    elif what == "no-srq":  # unsupported for the lack of an attribute the capabilities' vocabulary names
        raise Unsupported("attr.max_srq = 0", Cap("attr.max_srq"))
    elif what == "not-exercised":
        raise NotExercised("could not reach RTS: ibv_modify_qp RTR>RTS failed (errno EINVAL)")
    elif what == "blocked":
        raise Blocked("no DET runner: see ibv_modify_qp")
    elif what == "error":
        raise RuntimeError("ibv_alloc_pd failed: ENOMEM")
    elif what == "hang":
        time.sleep(30)
    elif what == "crash":
        os._exit(3)
    elif what == "abort":  # the process dies of a signal, as a provider's abort() or segfault kills it
        os.abort()


kind("demo")(demo)


def pytest_unconfigure(config):
    KINDS.pop("demo", None)  # registered for this session only (in-process runs share the registry)
'''

TESTS = """
from pytest_rdma.generate import active, generated_tests

globals().update(generated_tests([active()["ibv_demo"]]))
"""

WAIVERS = {
    "rxe": """
[[waiver]]
id = "test_ibv_demo[keeps-promise-deviant]"
reason = "rxe accepts the bad mask (known)"
link = "ibv_demo(3) RETURN VALUE"
observed = { returned = "success" }
""",
    "siw": """
[[waiver]]
id = "test_ibv_demo[keeps-promise-dev*]"
reason = "siw accepts the bad mask (known)"
link = "https://example.org/bug/1"
observed = { returned = "success" }
""",
}

# The node id of a demo check: node("rxe0", "deviant").
NODE = "test_demo.py::test_ibv_demo"


def node(device: str, behaviour: str) -> str:
    return f"{NODE}[{device}-keeps-promise-{behaviour}]"


def make_project(pytester: Any, tests: str = TESTS, waivers: dict[str, str] | None = None) -> Path:
    """The demo project; returns the directory of its expectations files (by default WAIVERS)."""
    pytester.makepyfile(rdma_demo=DEMO_VERBS)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_demo=tests)
    pytester.makeini("[pytest]\nrdma_catalogue_extra = rdma_demo:VERBS\n")
    pytester.syspathinsert()
    directory = pytester.mkdir("expect")
    for driver, text in (WAIVERS if waivers is None else waivers).items():
        (directory / f"{driver}.toml").write_text(text)
    return directory


def records(path: Path) -> dict[str, dict[str, Any]]:
    return {r["nodeid"]: r for r in json.loads(path.read_text())["results"]}


def outcomes(path: Path) -> dict[str, str]:
    return {nodeid: r["outcome"] for nodeid, r in records(path).items()}


# pytest 9 puts the failure's first line after the node id in the short summary even with -q;
# pytest 8 gives the node id alone. What the plugin writes is the same on both.
PYTEST_9 = int(pytest.__version__.split(".")[0]) >= 9


def summary_message(pattern: str) -> str:
    """What follows a node id in the short test summary: ` - ` and the failure's first line, on pytest 9."""
    return f" - {pattern}" if PYTEST_9 else ""
