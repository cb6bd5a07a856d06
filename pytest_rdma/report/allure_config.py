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
- qualityGate: no non-waived deviation, crash or timeout among our results (`allure quality-gate` exits
  1); another tool's results in the same folder are not judged (allure_gate.py counts them);
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

from pytest_rdma.outcomes import CRASH, DEVIATES, ERROR, NOT_EXERCISED, TIMEOUT, UNSUPPORTED, WAIVED
from pytest_rdma.report.allure_model import FRAMEWORK
from pytest_rdma.shapes import JsonObject

if TYPE_CHECKING:
    from pytest_rdma.report.record import Identity

# Each device's run writes its device's identity beside its results (allure_writer.py), one file per
# device, so runs of several devices into one folder keep each other's; ENVIRONMENT_FILE is the one
# file of all a run's devices that earlier versions wrote, still read.
ENVIRONMENT_FILE = "pytest-rdma-environment.json"
ENVIRONMENT_GLOB = "pytest-rdma-environment*.json"
GROUP_BY = ["parentSuite", "suite", "subSuite"]  # driver > verb > claim (allure_model.labels)
GATED = (DEVIATES, CRASH, TIMEOUT)  # outcomes that fail the release gate
GATE_ID = "no-new-deviation-or-crash"
# Environment variables shown per driver: the identity field -> its heading.
# (The driver is the environment's name.)
IDENTITY_FIELDS = (
    ("name", "device"),
    ("kernel", "kernel"),
    ("rdma_core", "rdma-core"),
    ("firmware", "firmware"),
    ("vendor", "vendor / part"),
    ("node_type", "node type"),
    ("transport", "transport"),
)
GATE_VARIABLE = "quality gate"


class Environment(TypedDict):
    """One driver's Allure environment: its name and the variables shown for it."""

    name: str
    variables: dict[str, str]


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


def read_environment_file(path: Path) -> dict[str, Identity] | None:
    """device -> identity from one environment file; None when it is not one of ours (unreadable, edited)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    devices = data.get("devices") if isinstance(data, dict) else None
    if not isinstance(devices, dict) or not all(isinstance(identity, dict) for identity in devices.values()):
        return None
    return dict(devices)


def read_environment(directory: Path) -> dict[str, Identity]:
    """device -> identity, from a results directory (empty when the runs wrote none).

    A device a run named before any of its checks reported has an empty identity; another file's
    identity of it wins.
    """
    devices: dict[str, Identity] = {}
    for path in sorted(directory.glob(ENVIRONMENT_GLOB)):
        for device, identity in (read_environment_file(path) or {}).items():
            if identity or device not in devices:
                devices[device] = identity
    return devices


def environments(devices: Mapping[str, Identity]) -> dict[str, Environment]:
    """driver -> {"name", "variables"}: each driver's devices and their identities."""
    by_driver: dict[str, dict[str, Identity]] = {}
    for device, identity in sorted(devices.items()):
        by_driver.setdefault(str(identity.get("driver") or "unknown"), {})[device] = identity
    out: dict[str, Environment] = {}
    for driver, members in sorted(by_driver.items()):
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
        out[driver] = {"name": driver, "variables": variables}
    return out


def _field(identity: Identity, key: str, device: str) -> str:
    if key == "name":
        return str(identity.get("name") or device)
    if key == "vendor":
        vendor, part = identity.get("vendor_id"), identity.get("vendor_part_id")
        return f"{vendor}:{part}" if vendor or part else ""
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
            f'      matcher: ({{ labels }}) => hasLabel(labels, "driver", {json.dumps(driver)}),\n'
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
        '          tr.labels.some((label) => label.name === "outcome" && GATED.includes(label.value)),',
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


def merged_devices(directories: Iterable[Path]) -> dict[str, Identity]:
    devices: dict[str, Identity] = {}
    for directory in directories:
        for device, identity in read_environment(directory).items():
            if not devices.get(device):
                devices[device] = identity
    return devices
