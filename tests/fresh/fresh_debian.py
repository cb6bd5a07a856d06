"""A fresh Debian 12 machine, made on this one, that runs the README's first command.

CI's machine already has what the lab forgets to install, so only a machine with nothing on it
proves the install steps. This builds one: a minimal Debian 12 (bookworm) root made with
debootstrap (`minbase`: only the packages every Debian has), a `git clone` of this repository
in it, and the README's first command run there as root, in a chroot, with /proc, /sys and /dev
mounted. The lab's VM boots from that root, as it would from a fresh machine's.

Cleanup does not depend on this process ending well: everything runs in its own mount and PID
namespaces (`unshare --mount --pid --fork --kill-child`), so the mounts are never visible to the
host and every process of the run (QEMU, virtiofsd) dies with the namespace, even when this
process is killed. The root directory is removed afterwards, or kept with `keep=True`.

Only downloads are cached (the debootstrap tarball, apt's .deb files, npm's download cache) under
~/.cache/pytest-rdma/fresh/: they change how fast packages arrive, never which packages the lab
asks for. The lab's own cache (siw.ko, its KVM probe, Allure's npm install) starts empty.

    python tests/fresh/fresh_debian.py [--keep] [-- COMMAND...]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

REPO = Path(__file__).resolve().parents[2]
SUITE = "bookworm"
MIRROR = os.environ.get("PYTEST_RDMA_FRESH_MIRROR", "http://deb.debian.org/debian")
SECURITY_MIRROR = os.environ.get("PYTEST_RDMA_FRESH_SECURITY_MIRROR", "http://deb.debian.org/debian-security")
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "pytest-rdma" / "fresh"
GUEST_REPO = "/root/pytest-rdma"
# The README's first command, on a slice of the suite so that the run is quick.
README_COMMAND = (
    "./pytest-rdma",
    "lab",
    "--dev",
    "rxe0",
    "--dev",
    "siw0",
    "--",
    "-k",
    "ibv_query_port or ibv_alloc_pd",
)
TIMEOUT_S = 45 * 60
# Where this machine's network needs a CA of its own (a TLS-intercepting proxy), pip and npm
# on the fresh machine need it too. That is the network's doing, not the lab's: the bundle
# these variables name is copied in and they point at the copy. Unset here, unset there.
TRUST_VARIABLES = ("PIP_CERT", "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE")
GUEST_TRUST_DIR = "/usr/local/share/pytest-rdma-fresh"
# Mounted in the namespace only. /proc is the new PID namespace's own; /dev/shm a tmpfs of the
# root's own, so nothing written there lands in the host's.
IN_NAMESPACE = r"""
set -eu
root=$1; shift
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
mount -t tmpfs -o mode=1777 shm "$root/dev/shm"
while [ "$1" != "--" ]; do
    mkdir -p "$1" "$root$2"
    mount --bind "$1" "$root$2"
    shift 2
done
shift
exec chroot "$root" "$@"
"""
# Download caches only: (host directory under CACHE, path in the root). pip's is left out: its HTTP
# cache stored nothing through this network's proxy, and pip takes seconds here.
DOWNLOAD_CACHES = (("apt-archives", "/var/cache/apt/archives"), ("npm", "/root/.npm"))


@dataclass
class FreshRun:
    code: int | None  # the command's exit code; None when it was killed at the time limit
    log: Path  # its output, each line prefixed with seconds since the command started
    root: Path  # the machine's root (gone unless kept)
    timings: dict[str, float] = field(default_factory=dict)

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def repo_path(self, relative: str) -> Path:
        return self.root / GUEST_REPO.lstrip("/") / relative


def tarball(cache: Path = CACHE, say: TextIO = sys.stdout) -> tuple[Path, float | None]:
    """The debootstrap tarball of a minimal bookworm, made once; (path, seconds it took or None if cached)."""
    path = cache / f"{SUITE}-minbase.tgz"
    if path.is_file():
        return path, None
    cache.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="debootstrap-", dir="/var/tmp") as scratch:
        partial = cache / f"{path.name}.part"
        _check([_debootstrap(), "--variant=minbase", f"--make-tarball={partial}", SUITE, scratch, MIRROR], say)
        partial.replace(path)
    return path, time.monotonic() - started


def _debootstrap() -> str:
    found = shutil.which("debootstrap") or shutil.which("debootstrap", path="/usr/sbin:/sbin")
    if found is None:
        raise RuntimeError("debootstrap is not installed: apt-get install debootstrap")
    return found


def _check(argv: Sequence[str], say: TextIO, cwd: Path | None = None) -> None:
    done = subprocess.run(list(argv), capture_output=True, text=True, cwd=cwd, check=False)
    if done.returncode:
        say.write(done.stdout + done.stderr)
        raise RuntimeError(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()[-1000:]}")


def make_root(parent: Path, cache: Path = CACHE, say: TextIO = sys.stdout) -> tuple[Path, dict[str, float]]:
    """A new minimal bookworm root under `parent`, with the apt sources a Debian 12 install has."""
    archive, cold = tarball(cache, say)
    timings = {"debootstrap tarball (cold)": cold} if cold is not None else {}
    root = Path(tempfile.mkdtemp(prefix="pytest-rdma-fresh-", dir=parent))
    root.chmod(0o755)  # a machine's / is; apt's _apt user and the VM's users must get through it
    started = time.monotonic()
    _check([_debootstrap(), "--variant=minbase", f"--unpack-tarball={archive}", SUITE, str(root), MIRROR], say)
    timings["debootstrap from the tarball"] = time.monotonic() - started
    (root / "etc/apt/sources.list").write_text(
        f"deb {MIRROR} {SUITE} main\ndeb {MIRROR} {SUITE}-updates main\ndeb {SECURITY_MIRROR} {SUITE}-security main\n"
    )
    shutil.copy2("/etc/resolv.conf", root / "etc/resolv.conf")
    return root, timings


def clone(root: Path, repo: Path = REPO) -> str:
    """`git clone` of `repo` into the root; uncommitted changes to tracked files are applied on top.

    The clone is what a user gets; the working tree's changes ride along so that a change can be
    tried on a fresh machine before it is committed (files git does not track are not copied).
    """
    dest = root / GUEST_REPO.lstrip("/")
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(repo), str(dest)], check=True)
    head = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    diff = subprocess.run(["git", "-C", str(repo), "diff", "HEAD", "--binary"], capture_output=True, check=True).stdout
    if not diff:
        return f"a clone of {repo} at {head}"
    subprocess.run(["git", "-C", str(dest), "apply", "--whitespace=nowarn"], input=diff, check=True)
    changed = subprocess.run(
        ["git", "-C", str(dest), "diff", "--name-only"], capture_output=True, text=True, check=True
    ).stdout.split()
    return f"a clone of {repo} at {head} plus the working tree's changes to {', '.join(changed)}"


def guest_environment(root: Path) -> dict[str, str]:
    """A login's environment on the fresh machine: nothing of this process's, but the network's trust."""
    env = {
        "HOME": "/root",
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "USER": "root",
        "LOGNAME": "root",
        # Only so that the log's timestamps are when lines were printed, not when a pipe's buffer filled.
        "PYTHONUNBUFFERED": "1",
    }
    copies: dict[str, str] = {}
    for variable in TRUST_VARIABLES:
        source = os.environ.get(variable)
        if not source or not Path(source).is_file():
            continue
        if source not in copies:
            inside = f"{GUEST_TRUST_DIR}/ca-{len(copies)}.crt"
            (root / inside.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, root / inside.lstrip("/"))
            copies[source] = inside
        env[variable] = copies[source]
    return env


def namespace_argv(
    root: Path, command: Sequence[str], env: dict[str, str], cache: Path = CACHE, cwd: str = GUEST_REPO
) -> list[str]:
    """The argv that runs `command` in `root`, in `cwd` there (the clone), in namespaces of its own."""
    binds: list[str] = []
    for name, inside in DOWNLOAD_CACHES:
        binds += [str(cache / name), inside]
    inner = ["/usr/bin/env", "-i", "-C", cwd, *(f"{k}={v}" for k, v in env.items()), *command]
    return [
        "unshare",
        "--mount",
        "--pid",
        "--fork",
        "--kill-child",
        "--propagation",
        "private",
        "sh",
        "-c",
        IN_NAMESPACE,
        "sh",
        str(root),
        *binds,
        "--",
        *inner,
    ]


def run_command(
    root: Path,
    command: Sequence[str],
    log: Path,
    timeout: float = TIMEOUT_S,
    cache: Path = CACHE,
    echo: TextIO | None = None,
    cwd: str = GUEST_REPO,
) -> int | None:
    """Run `command` on the fresh machine, in `cwd` there; its output goes to `log`, each line with its time."""
    argv = namespace_argv(root, command, guest_environment(root), cache, cwd)
    started = time.monotonic()
    with log.open("w") as out:
        proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            errors="replace",
        )
        killer = _Timer(timeout, lambda: stop(proc, root))
        assert proc.stdout is not None
        for line in proc.stdout:
            stamped = f"[{time.monotonic() - started:7.1f}] {line}"
            out.write(stamped)
            out.flush()
            if echo is not None:
                echo.write(stamped)
                echo.flush()
        code = proc.wait()
        timed_out = killer.cancel()
    return None if timed_out else code


STOP_GRACE_S = 5.0


def stop(proc: subprocess.Popen[str], root: Path) -> None:
    """End a run at its time limit: kill unshare, whose --kill-child takes the namespace's first
    process, and with it every process of the namespace; then kill, by pid, any process still
    running in `root` (only ours run there), so that nothing holds the output pipe open."""
    proc.kill()
    time.sleep(STOP_GRACE_S)
    for pid in processes_in(root):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


class _Timer:
    def __init__(self, seconds: float, action: Callable[[], None]) -> None:
        self._fired = False

        def fire() -> None:
            self._fired = True
            action()

        self._timer = threading.Timer(seconds, fire)
        self._timer.daemon = True
        self._timer.start()

    def cancel(self) -> bool:
        """Stop it; whether it had already fired."""
        self._timer.cancel()
        return self._fired


def mounts_under(root: Path) -> list[str]:
    """Mount points of this process's namespace at or below `root` (there must be none)."""
    prefix = str(root.resolve())
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4].replace("\\040", " ")
        if point == prefix or point.startswith(prefix + "/"):
            found.append(point)
    return found


def processes_in(root: Path) -> list[int]:
    """Processes whose root directory is `root` (there must be none once the namespace is gone)."""
    found = []
    for entry in Path("/proc").glob("[0-9]*/root"):
        try:
            if os.readlink(entry) == str(root.resolve()):
                found.append(int(entry.parent.name))
        except OSError:
            continue
    return found


def remove_root(root: Path) -> None:
    """Delete the root, refusing while anything is mounted below it (rm would follow into the mount)."""
    mounted = mounts_under(root)
    if mounted:
        raise RuntimeError(f"not removing {root}: still mounted there: {', '.join(mounted)}")
    shutil.rmtree(root)


# Lines that start a phase of the README's command, and the phase each starts.
PHASES = (
    ("pytest-rdma: installing python", "bootstrap: apt-get"),
    ("pytest-rdma: installing pytest-rdma", "bootstrap: pip"),
    ("lab: installing", "lab: apt-get"),
    ("lab: building siw.ko", "lab: building siw.ko"),
    ("lab: building pytest_rdma_kwarn.ko", "lab: building the kernel-warning module, probing KVM"),
    ("lab: booting", "VM: boot to devices ready"),
    ("lab: === ", "VM: pytest runs"),
    ("lab: cold start to first test", "HTML report: Allure from npm, generate"),
)


def phase_timings(log_text: str) -> dict[str, float]:
    """Seconds spent in each phase of a lab run, from its stamped log: a phase lasts from its first
    line to the next line of the bootstrap or the lab (`pytest-rdma: ...`, `lab: ...`)."""
    marks: list[tuple[float, str]] = []
    for line in log_text.splitlines():
        found = re.match(r"\[\s*(\d+\.\d)\] ((pytest-rdma|lab): .*)", line)
        if found:
            marks.append((float(found.group(1)), found.group(2)))
    stamps = re.findall(r"^\[\s*(\d+\.\d)\]", log_text, re.MULTILINE)
    end = float(stamps[-1]) if stamps else 0.0
    timings: dict[str, float] = {}
    for index, (start, text) in enumerate(marks):
        label = next((name for prefix, name in PHASES if text.startswith(prefix)), None)
        if label is None:
            continue
        following = marks[index + 1][0] if index + 1 < len(marks) else end
        timings[label] = timings.get(label, 0.0) + following - start
    return timings


def fresh_run(
    command: Sequence[str] = README_COMMAND,
    parent: Path = Path("/var/tmp"),
    keep: bool = False,
    timeout: float = TIMEOUT_S,
    cache: Path = CACHE,
    log: Path | None = None,
    echo: TextIO | None = None,
    collect: Path | None = None,
) -> FreshRun:
    """Make a fresh machine, run `command` there, copy what it wrote under results/ to `collect`, clean up."""
    say = echo or sys.stdout
    started = time.monotonic()
    root, timings = make_root(parent, cache, say)
    if log is None:
        handle, name = tempfile.mkstemp(prefix="fresh-debian-", suffix=".log")
        os.close(handle)
        log = Path(name)
    try:
        say.write(f"fresh: Debian 12 root {root}; {clone(root)}\n")
        say.flush()
        run_started = time.monotonic()
        code = run_command(root, command, log, timeout, cache, echo)
        timings["the README's command"] = time.monotonic() - run_started
        timings.update(phase_timings(log.read_text(errors="replace")))
        if collect is not None:
            results = root / GUEST_REPO.lstrip("/") / "results"
            if results.is_dir():
                shutil.copytree(results, collect, dirs_exist_ok=True, ignore=shutil.ignore_patterns("allure", "*.tar"))
    finally:
        leftover = processes_in(root)
        if leftover:
            say.write(f"fresh: processes still running in {root}: {leftover}\n")
        if not keep:
            remove_root(root)
    timings["whole test"] = time.monotonic() - started
    return FreshRun(code, log, root, timings)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the root afterwards (to look around)")
    parser.add_argument("--timeout", type=float, default=TIMEOUT_S, metavar="S")
    parser.add_argument("command", nargs="*", help="what to run in the clone (default: the README's first command)")
    options = parser.parse_args(argv)
    run = fresh_run(
        tuple(options.command) or README_COMMAND, keep=options.keep, timeout=options.timeout, echo=sys.stdout
    )
    for label, seconds in run.timings.items():
        print(f"fresh: {label}: {seconds:.1f} s")
    print(f"fresh: exit code {run.code}; log {run.log}" + (f"; root kept in {run.root}" if options.keep else ""))
    return 1 if run.code != 0 else 0


if __name__ == "__main__":
    sys.exit(main())
