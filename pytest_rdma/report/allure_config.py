"""The Allure 3 configuration of a report (allurerc.mjs), made from what the runs wrote.

Allure 3 reads its configuration as a JavaScript module; the parts that are functions
(environment matchers, the quality gate's filter) cannot be JSON. Everything else is data,
written here with json.dumps, so no value from a result is ever pasted into code unquoted.

- environments: one per driver (Allure's environment selector), matched by the result's
  `driver` label, each showing that driver's devices with their kernel, rdma-core, firmware,
  vendor/part, node type and transport (from each results directory's
  pytest-rdma-environment.json, allure_writer.py);
- categories: Allure 3's rules on labels (Allure 3 ignores an Allure 2 categories.json): new
  deviation, crash or timeout, error, waived deviation (known, by its reason and link),
  unsupported (by the capability the device does not advertise), not exercised, and a waiver
  that is no longer needed;
- qualityGate: no non-waived deviation, crash or timeout, and no check unsupported for the lack of a
  required capability, among our results (`allure quality-gate` exits 1); another tool's results in the
  same folder are not judged (allure_gate.py counts them);
- historyPath: a JSON-lines file each report appends to, so the next report marks what changed
  (new, fixed, regressed) since this one;
- the "awesome" report as one self-contained HTML file, its tree grouped driver > verb > claim.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from pytest_rdma.command_line import InputError
from pytest_rdma.outcomes import CRASH, DEVIATES, ERROR, NOT_EXERCISED, TIMEOUT, UNSUPPORTED, WAIVED
from pytest_rdma.report import schema
from pytest_rdma.shapes import JsonObject

if TYPE_CHECKING:
    from pytest_rdma.report.record import Identity

# Each device's run writes its device's identity beside its results (allure_writer.py), one file per
# device, so runs of several devices into one folder keep each other's; ENVIRONMENT_FILE is the one
# file of all a run's devices that earlier versions wrote, still read.
ENVIRONMENT_FILE = "pytest-rdma-environment.json"
# The `framework` label of every result we write: how `pytest-rdma report` tells our results from
# another tool's in the same folder (allure-pytest writes "pytest") and the writer its own files.
# Here, not in allure_model.py, so the gate and the report need no allure-python-commons.
FRAMEWORK = "pytest-rdma"
NO_DEVICE = "no device"
ENVIRONMENT_GLOB = "pytest-rdma-environment*.json"
GROUP_BY = ["parentSuite", "suite", "subSuite"]  # driver > verb > claim (allure_model.labels)
GATED = (DEVIATES, CRASH, TIMEOUT)  # outcomes that fail the release gate
GATE_ID = "no-new-deviation-or-crash"
# Environment variables shown per driver: the identity field -> its heading.
# (The driver is the environment's name.)
IDENTITY_FIELDS = (
    ("name", "device"),
    ("kernel", "kernel"),  # with its Debian package version: "6.1.0-56-amd64 (6.1.192-2)", as the header shows it
    ("rdma_core", "rdma-core"),
    ("firmware", "firmware"),
    ("vendor", "vendor / part"),
    ("node_type", "node type"),
    ("transport", "transport"),
)
GATE_VARIABLE = "quality gate"
REQUIRED_VARIABLE = "required capabilities"  # the run's profile (report/profile.py), per driver


class Environment(TypedDict):
    """One driver's Allure environment (one driver on one kernel, in a kernel matrix): its name, the
    variables shown for it, and the labels its results carry (kernel "" when the runs had one kernel)."""

    name: str
    variables: dict[str, str]
    driver: str
    kernel: str


def _outcome(*outcomes: str) -> JsonObject:
    return {"labels": {"outcome": "^(" + "|".join(re.escape(o) for o in outcomes) + ")$"}}


CATEGORIES: list[JsonObject] = [
    {
        "id": "new-deviation",
        "name": "New deviation (no waiver covers it)",
        "matchers": _outcome(DEVIATES),
        "groupBy": ["environment", {"label": "verb"}],
        "groupByMessage": False,
        "expand": True,
    },
    {
        "id": "crash-or-timeout",
        "name": "Crash or timeout",
        "matchers": _outcome(CRASH, TIMEOUT),
        "groupBy": ["environment", {"label": "outcome"}],
        "groupByMessage": False,
        "expand": True,
    },
    {
        "id": "error",
        "name": "Error: the check could not be set up or finished",
        "matchers": _outcome(ERROR),
        "groupBy": ["environment"],
    },
    {
        "id": "waived",
        "name": "Waived deviation (known: reason and link)",
        "matchers": _outcome(WAIVED),
        "groupBy": ["environment", {"label": "known_issue"}],
        "groupByMessage": False,
    },
    {
        "id": "required",
        "name": "Required, not advertised (a capability the run requires: --rdma-require, require = [...])",
        "matchers": {"labels": {"required": ".+"}},
        "groupBy": ["environment", {"label": "required"}],
        "groupByMessage": False,
        "expand": True,
    },
    {
        "id": "unsupported",
        "name": "Unsupported (the device does not advertise the capability)",
        "matchers": _outcome(UNSUPPORTED),
        "groupBy": ["environment"],
    },
    {
        "id": "not-exercised",
        "name": "Not exercised (the precondition could not be reached)",
        "matchers": _outcome(NOT_EXERCISED),
        "groupBy": ["environment"],
    },
    {
        "id": "waiver-fixed",
        "name": "Conforms again: remove its waiver",
        "matchers": {"labels": {"waiver": "^fixed$"}},
        "groupBy": ["environment"],
    },
]


def env_id(driver: str) -> str:
    """An Allure environment id (latin letters, digits, _ and -) for a driver name."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", driver) or "unknown"


def environment_file(device: str) -> str:
    """The name of the file that holds one device's identity in a results directory."""
    return f"pytest-rdma-environment-{env_id(device)}.json"


GIVE_RESULTS = "give the results directory as pytest --rdma-allure wrote it, or remove that file"


def _environment_document(path: Path) -> dict[str, object]:
    """One environment file as allure_writer.py writes it (an object with a 'devices' object); else an
    InputError naming the file and what is wrong."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"{path}: cannot read the run's devices ({exc}); {GIVE_RESULTS}") from None
    if not isinstance(data, dict) or not isinstance(data.get("devices"), dict):
        raise InputError(f"{path}: no 'devices' object (device -> identity); {GIVE_RESULTS}")
    return data


def read_environment_file(path: Path) -> dict[str, Identity] | None:
    """device -> identity from one environment file; None when it is not one of ours (unreadable, edited)."""
    try:
        devices = _environment_document(path)["devices"]
    except InputError:
        return None
    assert isinstance(devices, dict)  # _environment_document checked it
    if not all(isinstance(identity, dict) for identity in devices.values()):
        return None
    return dict(devices)


def read_environment(directory: Path) -> dict[str, Identity]:
    """device -> identity, from a results directory (empty when the runs wrote none); a file there that is
    not what allure_writer.py writes is an InputError naming it (docs/results-schema.md: Identity).

    A device a run named before any of its checks reported has an empty identity; another file's
    identity of it wins.
    """
    devices: dict[str, Identity] = {}
    for path in sorted(directory.glob(ENVIRONMENT_GLOB)):
        for device, identity in _checked_environment(path).items():
            if identity or device not in devices:
                devices[device] = identity
    return devices


def _checked_environment(path: Path) -> dict[str, Identity]:
    devices = _environment_document(path)["devices"]
    assert isinstance(devices, dict)  # _environment_document checked it
    named = {device: identity for device, identity in devices.items() if identity != {}}  # {}: named before a check
    try:
        schema.check_devices(named)
    except schema.SchemaError as exc:
        raise InputError(f"{path}: {exc}; {GIVE_RESULTS}") from None
    return dict(devices)


def read_profile(directory: Path) -> dict[str, list[JsonObject]]:
    """device -> its required capabilities and how each held (empty when none was required), from the
    devices' environment files; a damaged one is the same InputError as read_environment's."""
    profile: dict[str, list[JsonObject]] = {}
    for path in sorted(directory.glob(ENVIRONMENT_GLOB)):
        found = _environment_document(path).get("profile")
        if isinstance(found, dict):
            profile.update(found)
    return profile


def merged_profiles(directories: Iterable[Path]) -> dict[str, list[JsonObject]]:
    profiles: dict[str, list[JsonObject]] = {}
    for directory in directories:
        for device, entries in read_profile(directory).items():
            profiles.setdefault(device, entries)
    return profiles


def required_text(entries: Iterable[Mapping[str, object]]) -> str:
    """ "srq held (command line --rdma-require) · mw1 failed: attr.device_cap_flags&... = 0 (siw.toml:3)"."""
    shown = []
    for entry in entries:
        why = f": {entry.get('why')}" if entry.get("status") == "failed" else ""
        shown.append(f"{entry.get('capability')} {entry.get('status')}{why} ({entry.get('source')})")
    return " · ".join(shown)


def environment_name(driver: str, kernel: str) -> str:
    """A kernel matrix's environment: one driver on one kernel (pure)."""
    return f"{driver} on {kernel}" if kernel else driver


def environments(
    devices: Mapping[str, Identity], profiles: Mapping[str, Iterable[Mapping[str, object]]] | None = None
) -> dict[str, Environment]:
    """environment -> {"name", "variables", ...}: each driver's devices and their identities, and what each
    device was required to support (`profiles`, device -> its profile); one environment per driver, or per
    driver and kernel when the runs booted several kernels."""
    kernels = {str(identity.get("kernel") or "") for identity in devices.values()}
    per_kernel = len(kernels) > 1
    by_driver: dict[tuple[str, str], dict[str, Identity]] = {}
    for device, identity in sorted(devices.items()):
        group = (str(identity.get("driver") or "unknown"), str(identity.get("kernel") or "") if per_kernel else "")
        by_driver.setdefault(group, {})[str(identity.get("name") or device)] = identity
    out: dict[str, Environment] = {}
    for (driver, kernel), members in sorted(by_driver.items(), key=lambda item: (item[0][0], _kernel_key(item[0][1]))):
        variables: dict[str, str] = {}
        for key, heading in IDENTITY_FIELDS:
            values = {device: _field(identity, key, device) for device, identity in members.items()}
            shown = set(values.values())
            if shown == {""}:
                continue
            if len(shown) == 1:
                variables[heading] = next(iter(shown))
            elif key == "name":  # several devices of one driver
                variables[heading] = ", ".join(values.values())
            else:
                variables[heading] = "; ".join(f"{device}: {value}" for device, value in values.items())
        required = {device: required_text((profiles or {}).get(device, ())) for device in members}
        required = {device: text for device, text in required.items() if text}
        if required:
            variables[REQUIRED_VARIABLE] = (
                next(iter(required.values()))
                if len(members) == 1
                else "; ".join(f"{device}: {text}" for device, text in required.items())
            )
        name = environment_name(driver, kernel)
        out[name] = {"name": name, "variables": variables, "driver": driver, "kernel": kernel}
    return out


def _kernel_key(release: str) -> list[int]:
    return [int(part) for part in re.findall(r"\d+", release)]


def _field(identity: Identity, key: str, device: str) -> str:
    if key == "name":
        return str(identity.get("name") or device)
    if key == "vendor":
        vendor, part = identity.get("vendor_id"), identity.get("vendor_part_id")
        return f"{vendor}:{part}" if vendor or part else ""
    if key == "kernel" and identity.get("kernel_package"):
        # One variable, not two: Allure shows a panel's first eight and hides the rest behind "show more",
        # where a separate "kernel package" had pushed the transport (seen in the lab's report).
        return f"{identity.get('kernel')} ({identity.get('kernel_package')})"
    return str(identity.get(key) or "")


def summary_variables(drivers: Mapping[str, Environment], gate: str = "") -> dict[str, str]:
    """The report's own variables: the gate's verdict, then each identity field over all drivers at once.

    Allure shows a driver's environment with the report's variables, its own overriding those of
    the same name in place: with the same names, a driver's view lists its own values, in this order.
    """
    variables = {GATE_VARIABLE: gate} if gate else {}
    for _, heading in IDENTITY_FIELDS:
        shown = [
            (env["variables"].get("device", driver), env["variables"][heading])
            for driver, env in drivers.items()
            if heading in env["variables"]
        ]
        if len({value for _, value in shown}) == 1:
            variables[heading] = shown[0][1]
        elif shown:
            variables[heading] = " · ".join(f"{device} {value}" for device, value in shown)
    if "device" in variables and len(drivers) > 1:
        variables["device"] = " · ".join(
            f"{env['variables'].get('device', '?')} ({driver})" for driver, env in drivers.items()
        )
    return variables


def config_module(name: str, drivers: Mapping[str, Environment], history: Path | None, gate: str = "") -> str:
    """The text of allurerc.mjs; `gate` is the quality gate's verdict, shown among the report's variables."""
    variables = summary_variables(drivers, gate)
    envs = []
    for driver, env in drivers.items():
        envs.append(
            f"    {json.dumps(env_id(driver))}: {{\n"
            f"      name: {json.dumps(env['name'])},\n"
            f"      variables: {json.dumps(env['variables'], sort_keys=False)},\n"
            f"      matcher: ({{ labels }}) => {_matcher(env)},\n"
            "    },"
        )
    lines = [
        "// Made by pytest-rdma (pytest_rdma/report/allure_config.py) from the runs' results: do not edit.",
        "const hasLabel = (labels, name, value) =>",
        "  labels.some((label) => label.name === name && label.value === value);",
        f"const GATED = {json.dumps(list(GATED))};",
        "",
        "export default {",
        f"  name: {json.dumps(name)},",
        f"  variables: {json.dumps(variables)},",
    ]
    if history is not None:
        lines.append(f"  historyPath: {json.dumps(str(history))},")
    lines += [
        "  environments: {",
        *envs,
        "  },",
        f"  categories: {json.dumps(CATEGORIES, indent=2)},",
        "  qualityGate: {",
        "    rules: [",
        "      {",
        f"        id: {json.dumps(GATE_ID)},",
        "        maxFailures: 0,",
        "        filter: (tr) =>",
        f"          hasLabel(tr.labels, {json.dumps('framework')}, {json.dumps(FRAMEWORK)}) &&",
        "          tr.labels.some(",
        "            (label) =>",
        '              (label.name === "outcome" && GATED.includes(label.value)) || label.name === "required",',
        "          ),",
        "      },",
        "    ],",
        "  },",
        "  plugins: {",
        "    awesome: {",
        f"      options: {{ singleFile: true, reportName: {json.dumps(name)}, groupBy: {json.dumps(GROUP_BY)} }},",
        "    },",
        "  },",
        "};",
        "",
    ]
    return "\n".join(lines)


def _matcher(env: Environment) -> str:
    """The environment's matcher's body: its driver label, and its kernel's in a kernel matrix."""
    test = f'hasLabel(labels, "driver", {json.dumps(env["driver"])})'
    if env["kernel"]:
        test += f' && hasLabel(labels, "kernel", {json.dumps(env["kernel"])})'
    return test


def merged_devices(directories: Iterable[Path]) -> dict[str, Identity]:
    """device -> identity over the runs; a device seen on several kernels (a kernel matrix) once per kernel,
    as "DEVICE on KERNEL" from its second kernel on."""
    devices: dict[str, Identity] = {}
    for directory in directories:
        for device, identity in read_environment(directory).items():
            known = devices.get(device)
            if known and identity and known.get("kernel") != identity.get("kernel"):
                devices.setdefault(f"{device} on {identity.get('kernel')}", identity)
            elif not known:
                devices[device] = identity
    return devices
