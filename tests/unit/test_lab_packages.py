"""Every program the lab runs, or virtme-ng looks up for it, comes from a package the lab installs.

A fresh Debian 12 had no busybox-static, so virtme-ng could not build the initramfs and the lab
said "the VM printed nothing"; CI's machine had the package, so nothing noticed. These tests hold
the lab's code, its bootstrap and the installed virtme-ng to the table of programs -> packages in
pytest_rdma/lab/prereqs.py (EXECUTABLES):

- (a) each program the lab's code runs (argv[0] of its subprocess calls and _run) and each one
  virtme-ng looks up or runs on the way the lab calls it (`vng --run IMAGE ... --exec CMD`) has an
  entry, and the entry's package is one the lab installs (or every Debian has). virtme-ng's
  lookups that this call does not reach are listed below with the reason; a lookup that is in
  neither list (a new virtme-ng) fails, and so does a listed one that is gone;
- (b) where the package is installed here, `dpkg -S` on the program's path names that package
  (e.g. /bin/busybox is busybox-static's: Debian's "busybox" package is dynamically linked).

The scan is static (tests/unit/program_scan.py). tests/fresh/ runs the lab on a machine that has
nothing else installed, which is the proof these tests approximate in a second.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from program_scan import Found, scan_tree, shell_programs

from pytest_rdma.lab import guest, prereqs
from pytest_rdma.lab.prereqs import EXECUTABLES, REQUIRED_PACKAGES, lab_packages
from pytest_rdma.selftest import SELFTEST_EXECUTABLES

REPO = Path(__file__).resolve().parents[2]
BOOTSTRAP = REPO / "pytest-rdma"
# The code the lab runs: its own modules, and the HTML report's builder it calls.
LAB_SOURCES = (
    *sorted((REPO / "pytest_rdma" / "lab").glob("*.py")),
    REPO / "pytest_rdma/report/allure_html.py",
    REPO / "pytest_rdma/cbuild.py",  # the lab's host builds the VM's C reproducers with it (lab/builds.py)
)
# Where programs are looked for (root's PATH, as the lab runs).
SEARCH_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

# A name looked up that another entry of the table serves.
SERVED_BY = {
    # The lab's translator, first on virtme-ng's PATH, answers as "virtiofsd" and runs QEMU's C daemon.
    "virtiofsd": "/usr/lib/qemu/virtiofsd",
    # virtme-ng: QEMU for the host's architecture (the lab gives no --arch and no --qemu-bin).
    "qemu-system-{arch}": "qemu-system-x86_64",
    # virtme-ng tries these names for a static busybox first; Debian's busybox-static ships "busybox".
    "busybox-static": "busybox",
    "busybox.static": "busybox",
    # lab/builds.py (as report/confirm.py) looks up cc, then gcc; Debian's cc is gcc's alternative.
    "cc": "gcc",
}
# virtme-ng's lookups and runs that `vng --run IMAGE --verbose --memory M --cpus N [--disable-kvm]
# [--force-9p] --rwdir DIR --exec CMD` does not reach, as root, on an amd64 Debian 12 host.
VIRTME_NOT_REACHED = {
    "qemu-kvm": "tried only when qemu-system-x86_64 is missing, which the lab installs",
    "qemu-img": "--disk / --root-disk only (detect_disk_format)",
    "curl": "create_root: --root DIR that does not exist yet",
    "sudo": "create_root (--root) and --snaps only",
    "lsb_release": "create_root: --root without --root-release",
    "dpkg": "mainline.py: --run vX.Y (an upstream tag to download); the lab passes an image's path",
    "git": "version.py: only with __VNG_LOCAL set (a virtme-ng source checkout)",
    "gdb": "--gdb only",
    "getfacl": "--snaps only",
    "make": "--build / --kconfig only: the lab boots the distro's built kernel",
    "{cross_compile_prefix}-gcc": "--build for a foreign --arch only",
    "setsid": "--ssh over vsock only",
    "systemd-socket-activate": "--ssh over vsock only",
    "socat": "--console / --console-client only",
    "ssh": "--ssh / ssh client only",
    "ssh-keygen": "--ssh only",
    "virtme-ssh-proxy": "--ssh only (a script of virtme-ng's own)",
    "virtme-prep-kdir-mods": "--kdir (a kernel build tree) only (a script of virtme-ng's own)",
    "vng-mcp": "--mcp only",
    "zstd": "arm64 EFI zboot images and .ko.zst modules only: Debian 12's amd64 modules are plain .ko "
    "(test_zstd_is_not_reached checks the installed kernels)",
    # The Rust daemon's places, tried after the lab's translator answered on PATH. Debian 12 has
    # none (Debian 13's virtiofsd package installs /usr/libexec/virtiofsd).
    "/usr/libexec/virtiofsd": "after PATH's virtiofsd (the lab's translator); not in Debian 12",
    "/usr/lib/virtiofsd/virtiofsd": "after PATH's virtiofsd (the lab's translator); not in Debian 12",
    "/usr/lib/virtiofsd": "after PATH's virtiofsd (the lab's translator); not in Debian 12",
    "{self.guest_tools_path}/bin/virtiofsd": "virtme-ng's wheel ships no virtiofsd (only virtme-ng-init)",
}
# virtme-ng's os.system() that starts virtiofsd, as the scan prints it.
VIRTIOFSD_START = (
    "f'{virtiofsd_path} --syslog --no-announce-submounts {acl_opt}{readonly_opt}' + "
    "f'--socket-path {self.sock} --shared-dir {path} ' + f'--sandbox none --cache {cache} {stderr} &'"
)
# What virtme-ng runs or looks up by a name the scan cannot read, and what it is.
VIRTME_UNRESOLVED = {
    "cmd": "run.py: vng runs `virtme-run ...` (from pip, next to vng) through /bin/sh (sh: in the table); "
    "mcp.py: --mcp only",
    "command": "check_call_cmd: git and make for --build / --commit only",
    "self._format_cmd(cmd)": "git status, for --commit only",
    "['make'] + archargs + [updatetarget]": "--kconfig only",
    "['make'] + make_args + archargs + [maketarget]": "--kconfig only",
    "cmd.split(' ')": "--snaps only (sudo setfacl)",
    VIRTIOFSD_START: "the virtiofsd found by the lookups above, started through /bin/sh (sh: in the table)",
    "path": "the virtiofsd candidates above, probed with --version and --help",
    "qemu.qemubin": "the QEMU found by qemu-system-{arch}",
    "self.qemubin": "the QEMU found by qemu-system-{arch}",
    "n": "find_binary's own lookup of the names its callers give (scanned at the callers)",
    "name": "find_script/run_script's own lookup of the names their callers give (scanned at the callers)",
    "tool": "all_tools_available's own lookup of the names its callers give (scanned at the callers)",
    "vng_mcp": "--mcp only",
}
# What the lab runs by a name the scan cannot read, and why it is no Debian package's program.
LAB_UNRESOLVED = {
    "sys.executable": "the venv's Python (the bootstrap made the venv from python3-venv), running pip",
    "python": "vm.warm_rewrite_caches: the lab's own Python (sys.executable), collecting the suite on the host",
    "argv": "vm.py: vng, from pip in the venv; guest.py: the venv's Python running pytest in the VM",
    "_vng_argv(vng, kernel, True, [], 'true', 1, '512M')": "vng, from pip in the venv, probing KVM",
    "list(argv)": "guest.py's _run(*argv) itself: its callers' argv are scanned",
    "plan['python']": "wire.py: the venv's Python (the plan's) running execnet's socket server in host 2's VM",
    "build_argv(compiler, c_file, program, text, shortcut)": "cbuild.py: the compiler builds.py looked up (cc or gcc)",
    "compiler": "cbuild.py: the same compiler, precompiling a reproducer's headers",
    "program": "guest.py's create_devices runs guest.device_commands() in batches: their programs are added below",
    "command": "virtiofsd.py: the C daemon, built by translate() from C_DAEMON (/usr/lib/qemu/virtiofsd)",
    "path": "virtiofsd.py: the virtiofsd candidates looked up by name (virtiofsd, in SERVED_BY)",
    "name": "prereqs.packages_for_missing's lookup of the names its callers give (entries of the table)",
    "*command": "report/allure_html.py: node and Allure 3's cli.js, both installed from npm into the cache",
}


def virtme_source() -> Path:
    spec = importlib.util.find_spec("virtme")
    if spec is None or spec.origin is None:
        pytest.fail("virtme-ng is not installed in this environment (pip install -e '.[lab]')")
    return Path(spec.origin).resolve().parents[1]


def virtme_scan() -> Found:
    site = virtme_source()
    return scan_tree([*site.glob("virtme/**/*.py"), *site.glob("virtme_ng/**/*.py")], site)


def bootstrap_packages() -> set[str]:
    found = re.search(r"^packages=\((.*)\)$", BOOTSTRAP.read_text(), re.MULTILINE)
    assert found, "the bootstrap has no packages=(...) line"
    return set(found.group(1).split())


def installed_by_someone() -> set[str]:
    """Packages the lab, its bootstrap or its selftest installs, or that every Debian has."""
    selftest = {EXECUTABLES[name] for name in SELFTEST_EXECUTABLES}
    return lab_packages() | bootstrap_packages() | REQUIRED_PACKAGES | selftest


def entry(name: str) -> str:
    """The table's entry that serves a looked-up name."""
    return SERVED_BY.get(name, name)


def test_every_program_the_lab_runs_has_a_package_the_lab_installs() -> None:
    found = scan_tree(LAB_SOURCES, REPO)
    # The commands guest.create_devices runs are data (device_commands): their programs are read from it.
    for argv in guest.device_commands(["rxe0", "siw0"]):
        found.programs.setdefault(argv[0], []).append("pytest_rdma/lab/guest.py:device_commands")
    missing = {name: places for name, places in found.programs.items() if entry(name) not in EXECUTABLES}
    assert not missing, f"programs the lab runs with no entry in prereqs.EXECUTABLES: {missing}"
    assert set(found.unresolved) == set(LAB_UNRESOLVED), (
        f"argv[0]s the scan cannot read, not explained in LAB_UNRESOLVED: "
        f"{ {k: v for k, v in found.unresolved.items() if k not in LAB_UNRESOLVED} }; "
        f"explained but gone: {set(LAB_UNRESOLVED) - set(found.unresolved)}"
    )
    # The guest's programs (it runs in the VM, from the host's root) are among them.
    assert {"ip", "rdma", "modprobe", "insmod", "dmesg"} <= set(found.programs)


def test_every_program_the_bootstrap_runs_has_an_entry() -> None:
    programs = shell_programs(BOOTSTRAP.read_text())
    assert {"dpkg-query", "apt-get", "/usr/bin/python3"} <= programs  # the scan reads the script at all
    missing = sorted(name for name in programs if name not in EXECUTABLES)
    assert not missing, f"programs ./pytest-rdma runs with no entry in prereqs.EXECUTABLES: {missing}"


def test_virtme_lookups_are_each_reached_and_in_the_table_or_explained() -> None:
    found = virtme_scan()
    unexplained = {
        name: places
        for name, places in found.programs.items()
        if name not in VIRTME_NOT_REACHED and entry(name) not in EXECUTABLES
    }
    assert not unexplained, (
        f"virtme-ng looks up or runs these, and they are neither in prereqs.EXECUTABLES "
        f"nor in VIRTME_NOT_REACHED: {unexplained}"
    )
    stale = sorted(set(VIRTME_NOT_REACHED) - set(found.programs))
    assert not stale, f"VIRTME_NOT_REACHED lists lookups this virtme-ng no longer makes: {stale}"
    assert set(found.unresolved) == set(VIRTME_UNRESOLVED), (
        f"unexplained: { {k: v for k, v in found.unresolved.items() if k not in VIRTME_UNRESOLVED} }; "
        f"explained but gone: {set(VIRTME_UNRESOLVED) - set(found.unresolved)}"
    )
    # The lookups behind the fresh machine's failures are found, so the scan does see them.
    assert {"busybox", "file", "modprobe", "qemu-system-{arch}"} <= set(found.programs)


def test_every_entry_names_a_package_that_is_installed_by_the_lab() -> None:
    packages = installed_by_someone()
    orphans = {name: package for name, package in EXECUTABLES.items() if package not in packages}
    assert not orphans, (
        f"programs whose package nothing installs (add it to the lab's lists in "
        f"pytest_rdma/lab/prereqs.py or the bootstrap's packages=(...)): {orphans}"
    )


def _dpkg(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["dpkg-query", *args], capture_output=True, text=True, check=False)


def _installed(package: str) -> bool:
    return "install ok installed" in _dpkg("-W", "-f=${Status}", package).stdout


def _dpkg_names(path: str) -> set[str]:
    """The packages dpkg says own `path`, or its /bin <-> /usr/bin twin (a merged /usr has both)."""
    twins = {path}
    for merged, plain in (("/usr/bin/", "/bin/"), ("/usr/sbin/", "/sbin/")):
        if path.startswith(merged):
            twins.add(plain + path[len(merged) :])
        elif path.startswith(plain):
            twins.add(merged + path[len(plain) :])
    owners: set[str] = set()
    for candidate in twins:
        for line in _dpkg("-S", candidate).stdout.splitlines():
            owners.update(name.strip().split(":")[0] for name in line.split(": ", 1)[0].split(","))
    return owners


needs_dpkg = pytest.mark.skipif(shutil.which("dpkg-query") is None, reason="not a Debian host: no dpkg")


def _from_an_archive(package: str) -> bool:
    """Whether the installed version of `package` is one an apt source offers (not a local or foreign build)."""
    policy = subprocess.run(["apt-cache", "policy", package], capture_output=True, text=True, check=False).stdout
    installed = re.search(r"^ \*\*\* .*\n((?:        .*\n)*)", policy, re.MULTILINE)
    return bool(installed) and any("/var/lib/dpkg/status" not in line for line in installed.group(1).splitlines())


@needs_dpkg
@pytest.mark.parametrize(("program", "package"), sorted(EXECUTABLES.items()))
def test_dpkg_confirms_the_table(program: str, package: str) -> None:
    path = program if program.startswith("/") else shutil.which(program, path=SEARCH_PATH)
    if _installed(package):
        assert path is not None and Path(path).exists(), f"{package} is installed, but there is no {program}"
        owners = _dpkg_names(path)
        assert package in owners, f"{path} belongs to {', '.join(sorted(owners)) or 'no package'}, not {package}"
        return
    # Not installed: the program may still be here, from another package (busybox-static's
    # /bin/busybox where the table would say "busybox"). That package's word counts when it
    # comes from the archives; one built elsewhere (NodeSource's nodejs ships npm) does not.
    owners = {owner for owner in _dpkg_names(path) if _from_an_archive(owner)} if path else set()
    assert not owners, f"{path} belongs to {', '.join(sorted(owners))} (from the archive), not {package}"
    pytest.skip(f"{package} is not installed here" + (f"; {path} is from a package built elsewhere" if path else ""))


@pytest.mark.skipif(shutil.which("apt-cache") is None, reason="not a Debian host: no apt")
def test_every_package_is_known_to_apt() -> None:
    """A misspelt package fails here, not on a fresh machine's apt-get install."""
    packages = sorted(installed_by_someone() | set(EXECUTABLES.values()))
    known = subprocess.run(
        ["apt-cache", "show", "--no-all-versions", *packages], capture_output=True, text=True, check=False
    ).stdout
    names = set(re.findall(r"^Package: (\S+)$", known, re.MULTILINE))
    if not names:
        pytest.skip("apt has no package lists here (apt-get update)")
    assert set(packages) <= names, f"unknown to apt: {sorted(set(packages) - names)}"


@needs_dpkg
@pytest.mark.parametrize("package", sorted(REQUIRED_PACKAGES))
def test_required_packages_are_on_every_debian(package: str) -> None:
    """The lab installs none of these because a minimal Debian (debootstrap minbase) has them."""
    if not _installed(package):
        pytest.fail(f"{package} is not installed: then it is not on every Debian")
    assert _dpkg("-W", "-f=${Priority}", package).stdout == "required"


def test_zstd_is_not_reached() -> None:
    """virtme-ng decompresses .ko.zst modules with zstd, a lookup of virtme-ng's the lab does not rely on
    (the lab installs zstd for its own use, lab/boot_image.py, not for virtme-ng's)."""
    kernels = list(Path("/lib/modules").glob("*/kernel"))
    if not kernels:
        pytest.skip("no kernel modules installed here")
    compressed = [str(path) for kernel in kernels for path in kernel.rglob("*.ko.zst")]
    assert not compressed, f"zstd-compressed modules (install zstd for virtme-ng): {compressed[:3]}"


class FakeApt:
    def __init__(self) -> None:
        self.installed: list[list[str]] = []

    def __call__(self, packages: list[str], log: object = print, purpose: str = "") -> None:
        self.installed.append(list(packages))


@pytest.fixture
def apt(monkeypatch: pytest.MonkeyPatch) -> FakeApt:
    fake = FakeApt()
    monkeypatch.setattr(prereqs, "apt_install", fake)
    return fake


def on_path(monkeypatch: pytest.MonkeyPatch, *present: str) -> None:
    monkeypatch.setattr(prereqs.shutil, "which", lambda name, **_: f"/usr/bin/{name}" if name in present else None)


def test_the_report_tools_come_from_debian_when_missing(monkeypatch: pytest.MonkeyPatch, apt: FakeApt) -> None:
    on_path(monkeypatch)
    monkeypatch.setattr(prereqs, "_node_version", lambda: "v18.20.4")  # Debian 12's, once installed
    prereqs.ensure_report_tools()
    assert apt.installed == [["nodejs", "npm"]]


def test_a_node_from_elsewhere_is_kept(monkeypatch: pytest.MonkeyPatch, apt: FakeApt) -> None:
    on_path(monkeypatch, "node", "npm")
    monkeypatch.setattr(prereqs, "_node_version", lambda: "v20.20.2")
    prereqs.ensure_report_tools()
    assert apt.installed == [[]]


@pytest.mark.parametrize("version", ["v12.22.9", None])
def test_a_node_too_old_for_allure_is_an_error_naming_no_html(
    monkeypatch: pytest.MonkeyPatch, apt: FakeApt, version: str | None
) -> None:
    on_path(monkeypatch, "node", "npm")
    monkeypatch.setattr(prereqs, "_node_version", lambda: version)
    with pytest.raises(prereqs.LabError, match=r"needs Node.js 18 or newer; .* pass --no-html"):
        prereqs.ensure_report_tools()
