"""virtio-fs for the lab VM where the only virtiofsd is QEMU's old C daemon.

virtme-ng shares the host's root with the VM over virtio-fs when a virtiofsd can serve it,
else over 9p. Debian 12 ships only QEMU 7.2's C daemon, which takes other arguments than the
Rust daemon virtme-ng speaks to, so virtme-ng falls back to 9p. Under an emulated CPU every
9p file operation is a slow round trip, and Python's imports and pytest's tracebacks make
thousands of them: in one measurement, importing pytest, pyverbs and the plugin took 28-53 s
over 9p and 4.5 s over virtio-fs (cache=always), and collecting the suite 84-140 s against
8.6 s (a busy machine, same conditions for both).

So the lab puts this translator first on virtme-ng's PATH, named virtiofsd: it starts the C
daemon with the same share and cache mode, and writes the pid file virtme-ng waits for.
"""

from __future__ import annotations

import os
import shlex
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

C_DAEMON = Path("/usr/lib/qemu/virtiofsd")
RUST_STYLE = "--shared-dir"  # an option only the daemon virtme-ng expects knows
SOCKET_WAIT_S = 2.5  # virtme-ng gives up on the pid file after about 3 s


def _help(path: str) -> str:
    try:
        done = subprocess.run([path, "--help"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout + done.stderr


def needs_translator(candidates: tuple[str, ...]) -> bool:
    """No daemon virtme-ng can speak to, but QEMU's C daemon is there (and we are root, as it needs)."""
    if os.geteuid() != 0 or not os.access(C_DAEMON, os.X_OK):
        return False
    found = [path for path in (shutil.which("virtiofsd"), *candidates) if path and os.access(path, os.X_OK)]
    return not any(RUST_STYLE in _help(path) for path in found)


def install(bin_dir: Path) -> Path:
    """Write the `virtiofsd` translator into `bin_dir` (to go first on virtme-ng's PATH)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "virtiofsd"
    # virtme-ng probes the daemon with --version and --help before each of its two starts: the shell
    # answers those (as main() would) without starting Python, about 0.2 s each under the boot's clock.
    text = (
        "#!/bin/sh\n"
        "# pytest-rdma's virtiofsd translator: pytest_rdma/lab/virtiofsd.py\n"
        'case "${1-}" in ""|--version|-V|--help|-h) exit 0 ;; esac\n'
        f"exec {shlex.quote(sys.executable)} -c "
        "'import sys; from pytest_rdma.lab.virtiofsd import main; sys.exit(main(sys.argv[1:]))' \"$@\"\n"
    )
    if not script.exists() or script.read_text() != text:
        script.write_text(text)
        script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return bin_dir


def translate(argv: list[str]) -> tuple[str, list[str]] | None:
    """virtme-ng's daemon arguments -> (socket path, the C daemon's argv); None when not a start."""
    values: dict[str, str] = {}
    index = 0
    while index < len(argv):
        if argv[index] in ("--socket-path", "--shared-dir", "--cache") and index + 1 < len(argv):
            values[argv[index]] = argv[index + 1]
            index += 2
        else:
            index += 1  # --syslog, --sandbox none, --readonly...: the C daemon has its own defaults
    if "--socket-path" not in values or "--shared-dir" not in values:
        return None
    cache = values.get("--cache", "auto")
    # chroot into the share (the C daemon has no "none"); posix locks and xattrs off, as
    # virtme-ng asks of the Rust daemon for a shared root.
    options = f"source={values['--shared-dir']},cache={cache},sandbox=chroot,no_posix_lock,no_xattr"
    return values["--socket-path"], [str(C_DAEMON), f"--socket-path={values['--socket-path']}", "-o", options]


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("--version", "-V", "--help", "-h"):
        return 0  # virtme-ng probes with these; the help must not offer --readonly (the C daemon has none)
    plan = translate(argv)
    if plan is None:
        print(f"pytest-rdma virtiofsd translator: cannot read {argv}", file=sys.stderr)
        return 2
    socket_path, command = plan
    Path(socket_path).unlink(missing_ok=True)  # virtme-ng made it as a temporary file; the daemon binds it
    daemon = subprocess.Popen(command, stdin=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + SOCKET_WAIT_S
    while time.monotonic() < deadline and daemon.poll() is None and not os.path.exists(socket_path):
        time.sleep(0.02)
    if daemon.poll() is not None or not os.path.exists(socket_path):
        return 1  # no pid file: virtme-ng falls back to 9p, as without us
    # virtme-ng waits for this file, and at exit stops the daemon whose pid it holds.
    Path(socket_path + ".pid").write_text(f"{daemon.pid}\n")
    return 0
