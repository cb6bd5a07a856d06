"""The lab's command line, shared by `pytest-rdma lab` and `pytest-rdma selftest` (which boots the lab too).

Here rather than in cli.py so that selftest.py, which cli.py runs, imports neither cli.py nor anything
that imports it back.
"""

from __future__ import annotations

from pathlib import Path

from pytest_rdma import lab
from pytest_rdma.command_line import Parser

# The checkout this package runs from (the project's own tests live there; only a checkout has them).
REPO = Path(__file__).resolve().parents[2]


def split_passthrough(argv: list[str]) -> tuple[list[str], list[str]]:
    """Everything after `--` goes to pytest untouched."""
    if "--" in argv:
        index = argv.index("--")
        return argv[:index], argv[index + 1 :]
    return argv, []


LAB_DESCRIPTION = (
    "Run pytest inside a VM with Soft-RoCE (rxe) and soft-iWARP (siw) devices. "
    "Arguments after -- go to pytest; '{results}' in them is the per-run results directory."
)


def lab_parser(prog: str, description: str = LAB_DESCRIPTION) -> Parser:
    parser = Parser(prog=prog, description=description)
    parser.add_argument(
        "--dev",
        action="append",
        dest="devices",
        metavar="NAME",
        help="device to create and test: rxeN or siwN (repeatable; default rxe0 and siw0)",
    )
    parser.add_argument(
        "--results",
        type=Path,
        default=Path("results"),
        metavar="DIR",
        help="where results are written on the host (default ./results)",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=lab.LabRequest().cache,
        metavar="DIR",
        help="cache for siw.ko builds and the KVM probe (default ~/.cache/pytest-rdma)",
    )
    parser.add_argument("--no-install", action="store_true", help="do not apt/pip install missing prerequisites")
    parser.add_argument("--timeout", type=float, default=3600.0, metavar="S", help="kill the VM after S seconds")
    parser.add_argument("--no-html", action="store_true", help="skip the Allure HTML report (needs npm)")
    parser.add_argument(
        "--kernel",
        action="append",
        dest="kernels",
        metavar="RELEASE",
        help="boot this kernel release (uname -r), installing its image, headers and source when missing; "
        "repeatable, each in turn, results in DIR/RELEASE/DEVICE; 'all': every installed kernel with rdma_rxe "
        "(default: the distro's default kernel, results in DIR/DEVICE)",
    )
    parser.add_argument(
        "--hosts",
        type=int,
        default=1,
        metavar="N",
        help="2: boot two VMs joined by a wire, host 1 running the checks and host 2 their peers' ends through "
        "execnet's socket gateway; with it, --kernel once is both hosts' kernel, twice host 1's then host 2's",
    )
    parser.add_argument(
        "--wire-port",
        type=int,
        metavar="PORT",
        help="with --hosts 2: the TCP port on 127.0.0.1 that is the wire between the VMs (default: a free one)",
    )
    return parser


# Each device's run writes these into results/<device>/ ({results} is that directory). Its Allure results
# (results/<device>/allure) are written by the host from that results file once the VM has stopped
# (LabRequest.allure, lab.write_allure).
LAB_REPORTS = [
    "--rdma-json={results}/" + lab.LAB_JSON,
    "--rdma-junit={results}/junit.xml",
]
