"""Runs inside the lab VM: creates the devices, then runs pytest once per device.

The host hands over a plan (JSON in the results directory, which the VM can write), so
no shell command is ever built from the user's arguments. The exit code is written
next to it because it is the one thing the host must not lose.

Two defaults make a lab run robust: a provider that kills pytest costs one result, recorded as a crash,
and pytest starts again for the checks after it (run_restarting, lab/crash.py); and the devices' kernel
resource counts must be back where they started once pytest has exited.
"""

from __future__ import annotations

import concurrent.futures
import configparser
import functools
import importlib.util
import json
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from pytest_rdma import resume_files
from pytest_rdma.lab import wire

EXIT_DEVICE_FAILED = 3
EXIT_TESTS_FAILED = 1  # pytest's "some tests failed": a run that leaked is not clean

# A provider that kills pytest costs one result: the runner records the check and starts pytest again for
# the rest (lab/crash.py), as many times as xdist's --max-worker-restart=1000 allowed the lab's worker before.
MAX_CRASH_RESTARTS = 1000
# Options by which the user has already chosen how (or whether) xdist runs; --pdb and
# --trace need the terminal, which xdist workers do not have.
_XDIST_CHOICES = ("-n", "--numprocesses", "--dist", "--tx", "--pdb", "--trace", "-f", "--looponfail")

# Settings (pytest_rdma/settings.py's environment names) the lab's runs get unless told otherwise:
# a kernel fault fails its check, and each deviation's C reproducer is built and run.
LAB_SETTINGS = {"RDMA_KERNEL_LOG": "fail", "RDMA_CONFIRM": "true"}


def chooses_xdist(pytest_args: list[str]) -> bool:
    """Whether the user's pytest arguments already decide about xdist (then theirs are kept)."""
    for index, arg in enumerate(pytest_args):
        name = arg.split("=", 1)[0]
        if name in _XDIST_CHOICES or (arg.startswith("-n") and not arg.startswith("--")):
            return True  # -n 2, -n2, -nauto, --numprocesses=2, --dist load...
        plugin = (
            arg[2:]
            if arg.startswith("-p") and len(arg) > 2
            else (pytest_args[index + 1] if arg == "-p" and index + 1 < len(pytest_args) else "")
        )
        if plugin.lstrip("=") in ("no:xdist", "xdist"):
            return True
    return False


def xdist_args(pytest_args: list[str], xdist_available: bool = True) -> list[str]:
    """What the lab adds to pytest's arguments about xdist: nothing where the user's arguments choose, else
    `-p no:xdist` and its second plugin's `-p no:xdist.looponfail`. The checks run in pytest's own process (a crash
    costs its check: run_restarting), and xdist's import, unused then, is a cost of every start under TCG; its
    looponfail plugin, loaded without the first, imported execnet (3 ms of a start on the host)."""
    if not xdist_available or chooses_xdist(pytest_args):
        return []
    return ["-p", "no:xdist", "-p", "no:xdist.looponfail"]


# Plugins of the venv that every pytest process of a lab run loads (the controller and each worker) and
# that act only when asked: allure-pytest writes only with --alluredir (its import, allure-python-commons'
# model and attrs, is a sixth of a pytest start's imports); hypothesis's plugin, at the end of every run,
# imports the whole of hypothesis to ask whether anything wrote observations (a third of a second of host
# CPU, seconds under TCG). Each is left out of a run whose arguments, PYTEST_ADDOPTS or ini files in the
# working directory name it or what uses it (the words below), so a user's own --alluredir still works.
UNASKED_PLUGINS = {"allure_pytest": ("alluredir", "--allure-"), "hypothesispytest": ("hypothesis", "explore")}
# pytest's ini files and the sections of them it reads (pyproject.toml's are TOML tables).
INI_SECTIONS = {
    "pytest.ini": ("pytest",),
    ".pytest.ini": ("pytest",),
    "tox.ini": ("pytest", "tool:pytest"),
    "setup.cfg": ("tool:pytest",),
}


def unasked_plugins(args: list[str], env: dict[str, str], cwd: Path) -> list[str]:
    """`-p no:NAME` for each of UNASKED_PLUGINS nothing of this run asks for: its arguments, the
    environment's PYTEST_ADDOPTS and exploration setting, the ini files in `cwd`."""
    exploring = any("EXPLORE" in name and value for name, value in env.items())  # RDMA_EXPLORE
    # The run as nobody's own --rdma-explore=0 turns the exploration off: it asks for no Hypothesis.
    given = [arg for arg in args if arg not in NOT_AS_NOBODY]
    asked = " ".join([*given, env.get("PYTEST_ADDOPTS", ""), env.get("PYTEST_PLUGINS", ""), "explore" * exploring])
    asked += " " + pytest_ini_text(cwd)
    return [
        option
        for plugin, words in UNASKED_PLUGINS.items()
        if not any(word in asked for word in words) and not any(plugin in arg for arg in args)
        for option in ("-p", f"no:{plugin}")
    ]


def pytest_ini_text(cwd: Path) -> str:
    """The pytest settings of the ini files in `cwd` (its sections only: a pyproject.toml that lists
    hypothesis as a dependency asks for nothing), as text; an unreadable file counts whole."""
    found = []
    try:
        found.append(_pyproject_pytest_tables((cwd / "pyproject.toml").read_text(errors="replace")))
    except OSError:
        pass
    for name, sections in INI_SECTIONS.items():
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string((cwd / name).read_text(errors="replace"))
        except OSError:
            continue
        except configparser.Error:
            found.append((cwd / name).read_text(errors="replace"))
            continue
        found += [repr(dict(parser[section])) for section in sections if parser.has_section(section)]
    return " ".join(found)


def _pyproject_pytest_tables(text: str) -> str:
    """The lines of pyproject.toml's [tool.pytest...] tables (pure; by their headers, not parsed)."""
    kept, inside = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("["):
            inside = line.strip().strip("[]").strip().startswith("tool.pytest")
        if inside:
            kept.append(line)
    return "\n".join(kept)


def without_unasked_plugins(argv: list[str], env: dict[str, str], cwd: Path) -> list[str]:
    """A pytest command line (with `-p no:cacheprovider`) given unasked_plugins' options right after that one."""
    at = argv.index("no:cacheprovider") + 1
    return [*argv[:at], *unasked_plugins(argv, env, cwd), *argv[at:]]


# Where a run's reproducers go when nothing says: the plugin's default is the working directory,
# which in the VM is the host's cwd, read-only there unless it is under a writable share (a checkout
# on a mount of its own, as CI's is, is not). The run's results directory always is writable. Given
# as a setting from the environment, it yields to the user's own option or --rdma-json, and (as every
# setting from the environment does) overrides an ini file's rdma_reproducers.
OUTPUT_CHOICES = ("--rdma-reproducers", "--rdma-json")
OUTPUT_ENV = ("RDMA_REPRODUCERS", "RDMA_JSON")


def output_env(args: list[str], env: dict[str, str], run_dir: Path) -> dict[str, str]:
    """The environment of a run whose reproducers go to `run_dir`/reproducers unless its arguments
    or environment already say where (pure)."""
    if any(arg.split("=", 1)[0] in OUTPUT_CHOICES for arg in args) or any(env.get(name) for name in OUTPUT_ENV):
        return env
    return dict(env, RDMA_REPRODUCERS=str(run_dir / "reproducers"))


def placed(argv: list[str], results: Path, scratch: Path, label: str) -> list[str]:
    """The run's arguments with its places filled in: {results}, {scratch} and {dev} (pure)."""
    return [
        arg.replace("{results}", str(results)).replace("{scratch}", str(scratch)).replace("{dev}", label)
        for arg in argv
    ]


def peer_args(devices: list[str], pytest_args: list[str], peer_host: str = "") -> list[str]:
    """--rdma-peer for a run of one device (its own peer), unless the user's arguments name one (pure).

    A run of several devices gets none: one peer cannot be of every device's transport. With `peer_host`
    (the two-host lab, lab/wire.py) the peer is the device of the same name on that host."""
    if len(devices) != 1 or any(arg.split("=", 1)[0] == "--rdma-peer" for arg in pytest_args):
        return []
    if peer_host:
        return [f"--rdma-peer={devices[0]}", f"--rdma-peer-host={peer_host}"]
    return [f"--rdma-peer={peer_of(devices[0])}"]


def _uptime() -> float:
    return float(Path("/proc/uptime").read_text().split()[0])


def _run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), capture_output=True, text=True, check=False)


def _kernel_tail(lines: int = 30) -> str:
    return "\n".join(_run("dmesg").stdout.splitlines()[-lines:])


Counts = dict[str, dict[str, int]]


def resource_counts(devices: list[str]) -> Counts:
    """The kernel's per-device counts (pd, cq, qp, mr, ctx...), as `rdma resource` shows them."""
    from pytest_rdma.provider import netlink

    try:
        every = netlink.resource_counts()
    except OSError:
        return {}
    return {device: every.get(device, {}) for device in devices}


def leftover(before: Counts, after: Counts) -> Counts:
    """Per device, each kind counted more after the run than before it (pure).

    Whole devices' counts, not one process's: by now pytest has exited, so everything it
    made (its device contexts included) must be gone. Fewer objects than at the start is
    not a leak of this run.
    """
    out: Counts = {}
    for device, kinds in after.items():
        more = {kind: n - before.get(device, {}).get(kind, 0) for kind, n in sorted(kinds.items())}
        more = {kind: n for kind, n in more.items() if n > 0}
        if more:
            out[device] = more
    return out


def resource_report(devices: list[str], before: Counts, after: Counts) -> tuple[dict, list[str]]:
    """resources.json's content and the lines the lab prints, one per device (pure)."""
    leaked = leftover(before, after)
    lines = []
    for device in devices:
        if device not in before or device not in after:
            lines.append(f"{device}: resource counts not readable (no RDMA netlink?)")
        elif device in leaked:
            found = ", ".join(f"+{n} {kind}" for kind, n in leaked[device].items())
            lines.append(
                f"{device}: LEAKED after the run: {found} (rdma resource; before {before[device]}, "
                f"after {after[device]})"
            )
        else:
            lines.append(f"{device}: resource counts back to start")
    return {"before": before, "after": after, "leaked": leaked}, lines


# Each device's netdev gets an address of RFC 2544's range for testing network devices (never
# routed), as a /32: rdma_cm connects IP addresses, and iWARP (siw) connects only through it.
# Each device's peer (the second device of the two-device checks) gets one of the next /24.
LAB_NETWORK = "198.18.0.{}"
PEER_NETWORK = "198.18.1.{}"


def peer_of(device: str) -> str:
    """The name of the device the lab creates as `device`'s peer: rxe0 -> rxe0p."""
    return f"{device}p"


def lab_mac(index: int, end: int) -> str:
    """A netdev's MAC address, given (pure): locally administered, one per device index and end.

    Left random, udev replaces it a moment after the netdev appears (MACAddressPolicy=persistent):
    a netdev brought up before that keeps the IPv6 link-local address of the first MAC, while rxe's
    GID 0 follows the new one, and nothing answers for that GID (ETIMEDOUT in INIT>RTR). Given, the
    MAC stays; the GIDs are also the same at every boot, as the reproducers' literal GIDs need."""
    return f"02:00:c6:12:{index:02x}:{end:02x}"


def device_commands(devices: list[str]) -> list[tuple[str, ...]]:
    """The commands that give each device, and its peer, a netdev with an address (pure).

    rxe sends its packets on its netdev, so a device and its peer sit on the two ends of a veth:
    a dummy would drop what one sends to the other. Their GIDs at index 0 are IPv6 link-local
    addresses, which the kernel sends out of the given interface even though both are local
    (an IPv4 GID would be routed through lo, where no rxe listens). siw's traffic is TCP, which
    reaches a local address through lo whatever the netdev: two dummies do.
    """
    commands: list[tuple[str, ...]] = []
    for index, name in enumerate(devices):
        kind = "siw" if name.startswith("siw") else "rxe"
        netdev, peer_netdev = f"rdmalab{index}", f"rdmalab{index}p"
        mac, peer_mac = lab_mac(index, 1), lab_mac(index, 2)
        if kind == "rxe":
            commands.append(
                ("ip", "link", "add", netdev, "address", mac, "type", "veth", "peer", "name", peer_netdev)
                + ("address", peer_mac)
            )
        else:
            commands += [
                ("ip", "link", "add", netdev, "address", mac, "type", "dummy"),
                ("ip", "link", "add", peer_netdev, "address", peer_mac, "type", "dummy"),
            ]
        for dev, address, rdma_name in (
            (netdev, LAB_NETWORK.format(index + 1), name),
            (peer_netdev, PEER_NETWORK.format(index + 1), peer_of(name)),
        ):
            commands += [
                ("ip", "link", "set", dev, "up"),
                ("ip", "addr", "add", f"{address}/32", "dev", dev),
                ("rdma", "link", "add", rdma_name, "type", kind, "netdev", dev),
            ]
    return commands


def batches(commands: list[tuple[str, ...]]) -> list[tuple[str, list[str]]]:
    """Each program's commands as its batch lines, in the order the programs first appear (pure).

    Every ip command (netdevs, addresses) comes before every rdma one (devices on them), so
    grouping by program keeps each command after those it depends on."""
    grouped: dict[str, list[str]] = {}
    for argv in commands:
        grouped.setdefault(argv[0], []).append(" ".join(argv[1:]))
    return list(grouped.items())


def failed_command(program: str, commands: list[str], stderr: str) -> str:
    """The batch line that failed ("Command failed -:3" names it), with the program's message (pure)."""
    found = re.search(r"Command failed -:(\d+)", stderr)
    line = commands[int(found.group(1)) - 1] if found and 0 < int(found.group(1)) <= len(commands) else ""
    message = " ".join(part for part in stderr.strip().splitlines() if "Command failed" not in part)
    return f"{program} {line}: {message}" if line else stderr.strip()


def create_devices(devices: list[str], siw_ko: str | None, wire_netdev: str = "", wire_address: str = "") -> str:
    """Create each rxeN/siwN and its peer, each on a netdev with an IPv4 address; return "" or what went wrong.

    With `wire_netdev` (the two-host lab) every device is bound to that NIC, and its peer is on the other host."""
    kinds = {name: ("siw" if name.startswith("siw") else "rxe") for name in devices}
    # One modprobe for all (-a): rdma_cm for user space (the data path connects iWARP QPs with it),
    # rdma_rxe (which also brings ib_core, which siw.ko needs), and libcrc32c for siw.
    modules = ["rdma_ucm"]
    if any(kind == "rxe" for kind in kinds.values()) or siw_ko:
        modules.append("rdma_rxe")
    if "siw" in kinds.values():
        modules.append("libcrc32c")
    _run("modprobe", "-a", *modules)
    if "siw" in kinds.values():
        loaded = _run("insmod", siw_ko or "siw.ko")
        if loaded.returncode and "File exists" not in loaded.stderr:
            return f"insmod {siw_ko} failed: {loaded.stderr.strip()}"
    steps = wire.wire_commands(devices, wire_netdev, wire_address) if wire_netdev else device_commands(devices)
    for program, commands in batches(steps):
        # One process per program (ip, then rdma) reads all of its commands: under the emulated CPU
        # each process start costs tens of milliseconds. It stops at the first that fails.
        step = subprocess.run(
            # -b, not -batch: rdma's getopt reads "-batch" as -b "atch".
            [program, "-b", "-"],
            input="".join(line + "\n" for line in commands),
            capture_output=True,
            text=True,
        )
        if step.returncode:
            return f"{program} -b failed: {failed_command(program, commands, step.stderr)}"
    for name in [*devices, *([] if wire_netdev else map(peer_of, devices))]:
        if not Path(f"/sys/class/infiniband/{name}").exists():
            return f"{name} did not appear in /sys/class/infiniband after 'rdma link add'"
    return ""


SCRATCH_TAR = "scratch.tar"


def keep_scratch(scratch: Path, run_dir: Path) -> None:
    """Move what a run wrote to the VM's own memory into its results directory, as one file.

    Outputs that write several files per check belong in `{scratch}`, on the VM's tmpfs (a user's
    own `--rdma-allure={scratch}/allure`, say), because every file operation on the shared results
    directory is a round trip under an emulated CPU. One tar is one sequential write; the host
    unpacks it after the VM stops (`pytest_rdma.lab.unpack_scratch`). A VM killed mid-run loses
    these files; the JSON lines (written to the share as each check ends) are kept, and the lab's
    own Allure results are written from them on the host (`pytest_rdma.lab.write_allure`).

    Packed by GNU tar where there is one: Python's tarfile spends about 8 ms per file under TCG
    (a TarInfo, a passwd and a group lookup each), 11 s after a whole-catalogue run; tar packed
    the same 537 files in 0.43 s against 4.17 s. tarfile remains the fallback.
    """
    entries = sorted(path.name for path in scratch.iterdir())
    if not entries:
        return
    target = run_dir / SCRATCH_TAR
    tar = shutil.which("tar")
    if tar is not None:
        packed = subprocess.run(
            [tar, "-cf", str(target), "-C", str(scratch), "--", *entries], capture_output=True, check=False
        )
        if packed.returncode == 0:
            return
    with tarfile.open(target, "w") as archive:
        for name in entries:
            archive.add(scratch / name, arcname=name)


class RunOutput:
    """Where one of the runs made at once writes: the console, or (`log`) a file of its own, shown whole on
    the console once the runs before it have ended, so that two runs' lines never mix.

    pytest writes into a pipe, and a thread of this runner copies what arrives to the console or the file. Written
    there directly, each of pytest's writes (a progress dot, flushed) and each of its capture's dup2() calls, which
    close a descriptor of the file, was a round trip to the host's virtio-fs daemon that pytest waited for: 400
    empty tests in the VM took 3.0 to 5.1 s with the output in a file on the results share, 2.2 to 3.2 s through a
    pipe (TCG, one boot, interleaved)."""

    # A process pytest leaves behind may keep the pipe open: its later output is still copied, not waited for.
    COPY_GRACE_S = 2.0

    def __init__(self, log: Path | None) -> None:
        self.log = log

    def say(self, line: str) -> None:
        if self.log is None:
            print(line, flush=True)
        else:
            with self.log.open("a") as out:
                out.write(line + "\n")

    def run(self, argv: list[str], cwd: str, env: dict[str, str]) -> int:
        read_end, write_end = os.pipe()
        try:
            process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=write_end, stderr=subprocess.STDOUT)
        except BaseException:
            os.close(read_end)
            raise
        finally:
            os.close(write_end)
        copier = threading.Thread(target=self._copy, args=(read_end,), name="pytest output", daemon=True)
        copier.start()
        try:
            code = process.wait()
        except BaseException:  # as subprocess.run: the run does not outlive its runner
            process.kill()
            process.wait()
            raise
        copier.join(self.COPY_GRACE_S)
        return code

    def _copy(self, read_end: int) -> None:
        sink = self.log.open("ab") if self.log is not None else None
        out = sink if sink is not None else sys.stdout.buffer
        try:
            while chunk := os.read(read_end, 1 << 16):
                try:
                    out.write(chunk)
                    out.flush()
                except OSError:
                    pass  # the console or file is gone: go on reading, so that the run never blocks on a full pipe
        finally:
            os.close(read_end)
            if sink is not None:
                sink.close()


RUN_OUTPUT = "lab-output.txt"  # a run's console output, in its results directory, when it ran beside another


def at_once(jobs: Sequence[tuple[Callable[[RunOutput], int], Path]], resumed: bool = False) -> list[int]:
    """Run each job (given its output) at once, each in a thread of its own; their exit codes, in order.

    Used for the device runs (side_by_side) and the runs as nobody. The first job writes to the console as it
    goes; each other one to RUN_OUTPUT in its directory, printed after the jobs before it have ended. `resumed`: a
    boot after a kernel fault, which ended the VM before the jobs' output was printed: it is added to, not replaced.
    """
    if len(jobs) == 1:
        return [jobs[0][0](RunOutput(None))]
    outputs = [RunOutput(None if index == 0 else directory / RUN_OUTPUT) for index, (_, directory) in enumerate(jobs)]
    for output, (_, directory) in zip(outputs[1:], jobs[1:]):
        directory.mkdir(parents=True, exist_ok=True)
        assert output.log is not None
        if not resumed or not output.log.exists():
            output.log.write_text("")
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        futures = [pool.submit(job, output) for (job, _), output in zip(jobs, outputs)]
        codes = []
        for future, output in zip(futures, outputs):
            codes.append(future.result())
            if output.log is not None:
                print(output.log.read_text(errors="replace"), end="", flush=True)
    return codes


def device_run(
    plan: dict, devices: list[str], results: Path, env: dict[str, str], xdist: bool, peer_host: str, output: RunOutput
) -> int:
    """One run of pytest on `devices` (one device, or all of them at once) with its own results, reporters,
    restarts after a crash and resource counts; its exit code (a run that leaked is not clean)."""
    label = "+".join(devices)
    run_dir = results / label
    run_dir.mkdir(parents=True, exist_ok=True)
    argv = [
        plan["python"],
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        *(f"--rdma-dev={device}" for device in devices),
        *peer_args(devices, plan["pytest_args"], peer_host),
        *plan.get("report_args", []),
        *xdist_args(plan["pytest_args"], xdist),
        *plan["pytest_args"],
    ]
    argv = without_unasked_plugins(argv, env, Path(plan["cwd"]))
    scratch = Path(tempfile.mkdtemp(prefix=f"pytest-rdma-{label}-"))
    argv = placed(argv, run_dir, scratch, label)
    output.say(f"lab: === {label}: pytest {' '.join(argv[3:])}")
    # A check's objects on the peer must go too (on the peer host, host 2 counts its own).
    counted = [*devices, *([] if peer_host else map(peer_of, devices))]
    before = resource_counts(counted)
    code = run_restarting(output, argv, plan["cwd"], output_env(argv, env, run_dir), run_dir, label)
    keep_scratch(scratch, run_dir)
    output.say(f"lab: === {label}: pytest exited {code}")
    document, lines = resource_report(counted, before, resource_counts(counted))
    (run_dir / "resources.json").write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    for line in lines:
        output.say(f"lab: {line}")
    if document["leaked"] and code == 0:
        return EXIT_TESTS_FAILED  # so CI notices a run that left objects behind
    return code


def main(plan_path: str) -> int:
    plan = json.loads(Path(plan_path).read_text())
    results = Path(plan["results"])
    started = _uptime()
    on_wire = plan.get("wire")  # the two-host lab: this VM's devices on its wire NIC (lab/wire.py)
    if on_wire and on_wire.get("hostname"):
        socket.sethostname(on_wire["hostname"])  # each end's record names its host: not virtme-ng twice
    netdev = (wire.netdev_of(on_wire["mac"]) or "") if on_wire else ""
    if on_wire and not netdev:
        problem = f"no NIC with the wire's MAC {on_wire['mac']} in /sys/class/net"
    else:
        problem = create_devices(plan["devices"], plan.get("siw_ko"), netdev, on_wire["address"] if on_wire else "")
    if problem:
        print(f"lab: device setup failed: {problem}\nlab: the kernel's last lines:\n{_kernel_tail()}", flush=True)
        return EXIT_DEVICE_FAILED
    print(
        f"lab: {', '.join(plan['devices'])} ready at guest uptime {_uptime():.1f} s "
        f"(setup {_uptime() - started:.1f} s)",
        flush=True,
    )
    # From here the kernel log goes to results/lab-kernel.log (and to the checks that read it),
    # not to the console, where it would break into pytest's output mid-line.
    _run("dmesg", "--console-level", "1")
    if plan.get("serve"):  # host 2 of the two-host lab: it serves host 1's peer ends, and runs no pytest
        devices = plan["devices"]
        code = wire.serve(plan, lambda: resource_counts(devices), lambda b, a: resource_report(devices, b, a)[1])
        (results / "lab-kernel.log").write_text(_run("dmesg").stdout)
        return code
    peer_host = plan.get("peer_host", "")
    control = wire.PeerControl(plan["peer_address"]) if peer_host else None
    if control is not None:
        waited = control.wait_ready()
        if waited:
            print(f"lab: {waited}", flush=True)
            return EXIT_DEVICE_FAILED
        print(f"lab: peer host ready: {peer_host}", flush=True)
    env = dict(os.environ, PYTEST_RDMA_LAB_MARKS=str(results))
    for name, value in LAB_SETTINGS.items():
        env.setdefault(name, value)  # the command line's options still win over these
    env.update(plan.get("env", {}))  # what the host built for the lab's own tests (lab/kwarn.py)
    # Per device: each run's reports describe one driver. Otherwise one run tests them all.
    runs = [[device] for device in plan["devices"]] if plan.get("per_device", True) else [plan["devices"]]
    xdist = importlib.util.find_spec("xdist") is not None
    # A boot after a guest kernel fault (lab/fault.py) goes on where the one before stopped.
    ended = resume_files.ended_runs(results)
    worst = next((code for code in ended.values() if code), 0)
    pending = [devices for devices in runs if "+".join(devices) not in ended]
    for devices in runs:
        if devices not in pending:
            print(
                f"lab: === {'+'.join(devices)}: ran in a boot before (pytest exited {ended['+'.join(devices)]})",
                flush=True,
            )
    ended_lock = threading.Lock()

    def job(devices: list[str]) -> Callable[[RunOutput], int]:
        def run(output: RunOutput) -> int:
            code = device_run(plan, devices, results, env, xdist, peer_host, output)
            with ended_lock:  # two runs ending at once each rewrite the one file
                resume_files.run_ended(results, "+".join(devices), code)
            return code

        return run

    jobs = [(job(devices), results / "+".join(devices)) for devices in pending]
    if side_by_side(plan, len(pending), os.cpu_count() or 1, (results / resume_files.ONE_AFTER_ANOTHER_FILE).exists()):
        codes = at_once(jobs, resume_files.resumed(results))
    else:
        codes = [run(RunOutput(None)) for run, _ in jobs]
    worst = worst or next((code for code in codes if code), 0)
    if control is not None:
        told = control.done()
        for line in told:
            print(f"lab: {line}", flush=True)
        if any("LEAKED" in line for line in told) and worst == 0:
            worst = EXIT_TESTS_FAILED
    if plan.get("unprivileged", True):
        worst = worst or unprivileged_runs(plan, results, env, xdist)
    (results / "lab-kernel.log").write_text(_run("dmesg").stdout)
    return worst


def side_by_side(plan: dict, runs: int, cpus: int, one_after_another: bool) -> bool:
    """Whether the device runs go side by side, each pytest on a vCPU of its own (pure).

    They do where there is a vCPU for each and nothing else asks for the vCPUs: not with xdist's workers (-n), not
    in the two-host lab (host 2 serves one peer's end at a time). A check's kernel fault is still its own there: the
    kernel's report names its process, which the running file names too (lab/fault.py); after a fault whose report
    named neither's, the host leaves ONE_AFTER_ANOTHER_FILE, and the runs go one after the other. Measured on a
    2-core host under TCG, idle, outcomes the same: the README's command (rxe0 and siw0 with their peers, three boots
    for rxe's two Oopses) 228 s against 317 s one after the other; its first check 23.3 s after the start against
    18.8 s, the two pytest starts sharing the host's cores. The second run waiting for the first one's first check
    brings that to about 20 s, and made the whole 5 s and 32 s longer in an A/B interleaved in one phase of the
    machine (258.4 s and 279.8 s against 253.8 s and 248.0 s): siw's run, barely shorter than rxe's, then ends after
    it."""
    return (
        runs > 1
        and cpus >= runs
        and not one_after_another
        and not plan.get("peer_host")
        and not chooses_xdist(plan["pytest_args"])
    )


def run_restarting(
    output: RunOutput,
    argv: list[str],
    cwd: str,
    env: dict[str, str],
    run_dir: Path,
    label: str,
    owner: tuple[int, int] | None = None,
) -> int:
    """pytest on `argv` without the checks recorded before (a boot that a kernel fault ended, lab/fault.py);
    when it dies of a signal in a check, that check is recorded as a crash and pytest starts again for the
    rest (lab/crash.py). The last run's exit code: it replays every record before it, and fails for theirs.
    `owner`: the user and group pytest runs as, who must own the files written for it in `run_dir`."""
    restarts = 0
    while True:
        resumed = resume_files.resumed_nodeids(run_dir)
        if resumed:
            output.say(f"lab: === {label}: {len(resumed)} checks recorded before this pytest run: not run again")
        run_env = {**env, **resume_env(run_dir, bool(resumed))}
        code = output.run([*argv, *(f"--deselect={nodeid}" for nodeid in resumed)], cwd, run_env)
        if code >= 0 or restarts >= MAX_CRASH_RESTARTS:
            break
        from pytest_rdma.lab import crash  # pytest's reporting modules: imported only once a run has crashed

        record = crash.record_crash(run_dir / resume_files.RUNNING_FILE, -code)
        if record is None:
            output.say(f"lab: === {label}: pytest died of {crash.signal_name(-code)} outside any check")
            break
        restarts += 1
        if owner is not None:  # the next run, as nobody, rewrites its lines file
            for path in run_dir.iterdir():
                os.chown(path, owner[0], owner[1])
        output.say(
            f"lab: === {label}: {record['nodeid']}: {record['reason']}; recorded as a crash, and pytest starts "
            "again for the checks after it"
        )
    (run_dir / resume_files.RUNNING_FILE).unlink(missing_ok=True)  # no check runs now: no hang to watch
    return code


def resume_env(run_dir: Path, resumed: bool) -> dict[str, str]:
    """What tells a device's run where to write its running check, and where the records of the boots before
    are (report/resume.py): only one run writes each file."""
    env = {resume_files.RUNNING_ENV: str(run_dir / resume_files.RUNNING_FILE)}
    if resumed:
        env[resume_files.RESUME_ENV] = str(run_dir / resume_files.RESUME_FILE)
    return env


# nobody, with no capabilities and the kernel's default RLIMIT_MEMLOCK (8 MiB), as a user's job runs.
NOBODY = (65534, 65534)
AS_NOBODY = ("--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all")  # setpriv's options


def nobody_cannot_run(plan: dict) -> str:
    """Why nobody cannot run the plan's Python in its working directory, or "" when it can."""
    reachable = _run("setpriv", *AS_NOBODY, plan["python"], "-c", f"import os; os.chdir({plan['cwd']!r})")
    if reachable.returncode == 0:
        return ""
    return (reachable.stderr.strip().splitlines() or ["no reason given"])[-1]


def unprivileged_runs(plan: dict, results: Path, env: dict[str, str], xdist: bool) -> int:
    """Every device's run as nobody, each one even after another's failed; the first failure's exit code."""
    why_not = nobody_cannot_run(plan)  # once: the same Python and directory for every device
    # At once, as root's runs are (at_once); nobody's results go to results/<device>/unprivileged/.
    jobs = [
        (
            functools.partial(unprivileged_run, plan, device, results, env, xdist, why_not),
            results / device / "unprivileged",
        )
        for device in plan["devices"]
    ]
    codes = at_once(jobs)
    return next((code for code in codes if code), 0)


# A run as nobody holds only the checks about an unprivileged process: the exploration (a session-long
# search before any check) ran in root's run of the device and is not repeated for nothing.
NOT_AS_NOBODY = ("--rdma-explore=0",)


def nobody_argv(plan: dict, device: str, scratch: Path, xdist: bool, mark: str) -> list[str]:
    """The command of a device's run as nobody: its outputs in `scratch`, the user's arguments, only the
    checks marked `mark` (pure)."""
    return [
        "setpriv",
        *AS_NOBODY,
        plan["python"],
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        f"--rdma-dev={device}",
        f"--rdma-json={scratch}/results.json",
        f"--rdma-junit={scratch}/junit.xml",
        f"--rdma-reproducers={scratch}/reproducers",  # named: a setting inherited from root's run is not for nobody
        *xdist_args(plan["pytest_args"], xdist),
        # Its own places: nobody writes to its scratch directory, copied to results/<device>/unprivileged/.
        *placed(plan["pytest_args"], scratch, scratch, device),
        *NOT_AS_NOBODY,  # after the user's arguments: the last of an option given twice wins
        "-m",
        mark,
    ]


def unprivileged_run(
    plan: dict,
    device: str,
    results: Path,
    env: dict[str, str],
    xdist: bool,
    why_not: str | None = None,
    output: RunOutput | None = None,
) -> int:
    """The checks about an unprivileged process (Claim.when; marked rdma_process), run as nobody.

    As root they are not exercised (root is not held to RLIMIT_MEMLOCK); here they decide. Their
    results go to results/<device>/unprivileged/ (JSON and JUnit; the Allure report holds the root
    runs), written first on the VM's own /tmp, where nobody may write, and copied there as root.
    """
    from pytest_rdma.generate import PROCESS_MARK

    run_dir = results / device / "unprivileged"
    run_dir.mkdir(parents=True, exist_ok=True)
    output = output or RunOutput(None)
    why = nobody_cannot_run(plan) if why_not is None else why_not
    if why:
        output.say(
            f"lab: {device}: no run as nobody: nobody cannot run {plan['python']} in {plan['cwd']} ({why}); "
            "a checkout under a private directory (such as /root) keeps it out. The checks about an "
            "unprivileged process stay not exercised."
        )
        return 0
    scratch = Path(tempfile.mkdtemp(prefix=f"pytest-rdma-nobody-{device}-"))
    scratch.chmod(0o777)
    argv = nobody_argv(plan, device, scratch, xdist, PROCESS_MARK)
    argv = without_unasked_plugins(argv, env, Path(plan["cwd"]))
    # No first-test marks: they go to the results directory's top, which nobody may not write.
    own_env = {key: value for key, value in env.items() if key != "PYTEST_RDMA_LAB_MARKS"}
    output.say(f"lab: === {device} as nobody (unprivileged, memlock {_memlock()}): pytest -m {PROCESS_MARK}")
    code = run_restarting(output, argv, plan["cwd"], own_env, scratch, f"{device} as nobody", NOBODY)
    shutil.copytree(scratch, run_dir, dirs_exist_ok=True)
    shutil.rmtree(scratch, ignore_errors=True)
    output.say(f"lab: === {device} as nobody: pytest exited {code}")
    return 0 if code == NO_TESTS_COLLECTED else code


NO_TESTS_COLLECTED = 5  # a -k of the user's that left none of these checks: nothing to run as nobody


def _memlock() -> str:
    soft = resource.getrlimit(resource.RLIMIT_MEMLOCK)[0]
    return "unlimited" if soft == resource.RLIM_INFINITY else f"{soft // 1024} KiB"


def exit_with(code: int, plan_path: str) -> None:
    """Leave the exit code where the host reads it (the VM's own exit status does not reach it), then exit."""
    Path(json.loads(Path(plan_path).read_text())["results"], "lab-exit-code").write_text(f"{code}\n")
    time.sleep(0.1)
    sys.exit(code)


if __name__ == "__main__":
    exit_with(main(sys.argv[1]), sys.argv[1])
