"""Allure results directory files written once per run: environment and outcome categories."""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from pytest_rdma.outcomes import CRASH
from pytest_rdma.report.results import Results

# Allure statuses: a Deviation (an AssertionError) is "failed", other exceptions "broken",
# skips and xfails "skipped". The messages matched are the suite's own wording.
CATEGORIES: list[dict[str, Any]] = [
    {"name": "crash", "matchedStatuses": ["failed", "broken"],
     "messageRegex": r"(?s).*crashed while running.*"},
    {"name": "timeout", "matchedStatuses": ["failed", "broken"], "messageRegex": r"(?s).*Timeout.*"},
    {"name": "fixed: remove the waiver", "matchedStatuses": ["failed", "passed"],
     "messageRegex": r"(?s).*(XPASS|fixed: remove the waiver).*"},
    {"name": "deviates", "matchedStatuses": ["failed"]},
    {"name": "waived (expected deviation)", "matchedStatuses": ["skipped"], "messageRegex": r"(?s)XFAIL.*"},
    {"name": "unsupported", "matchedStatuses": ["skipped"], "messageRegex": r"(?s).*unsupported:.*"},
    {"name": "unsupported (blocked)", "matchedStatuses": ["skipped"], "messageRegex": r"(?s).*blocked:.*"},
    {"name": "error (could not set up or finish the check)", "matchedStatuses": ["broken"]},
]


def environment_lines(identities: dict[str, dict[str, Any]]) -> list[str]:
    lines = []
    for device, identity in sorted(identities.items()):
        for key, value in identity.items():
            if key != "name":
                # .properties syntax: escape what would end a key or a value.
                text = str(value).replace("\\", "\\\\").replace("\n", " ")
                lines.append(f"{device}.{key}={text}")
    return lines


class AllureFiles:
    def __init__(self, directory: Path, results: Results) -> None:
        self.directory = directory
        self.results = results
        results.sinks.append(self.on_result)

    def on_result(self, record: dict[str, Any]) -> None:
        if record["outcome"] == CRASH and record.get("when") == "???":
            self.directory.mkdir(parents=True, exist_ok=True)
            result = crash_result(record)
            path = self.directory / f"{result['uuid']}-result.json"
            path.write_text(json.dumps(result), encoding="utf-8")

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        lines = environment_lines(self.results.identities)
        drivers = sorted({i.get("driver", "") for i in self.results.identities.values()} - {""})
        lines.insert(0, f"drivers={','.join(drivers)}")
        (self.directory / "environment.properties").write_text("\n".join(lines) + "\n", encoding="utf-8")
        categories = json.dumps(CATEGORIES, indent=1) + "\n"
        (self.directory / "categories.json").write_text(categories, encoding="utf-8")


def crash_result(record: dict[str, Any]) -> dict[str, Any]:
    """An Allure result for a check whose worker died: allure-pytest there wrote nothing."""
    now = int(time.time() * 1000)
    labels = [("parentSuite", record.get("driver") or "no device"),
              ("suite", record.get("verb") or record["test"]),
              ("subSuite", record.get("claim") or record["stable_id"]), ("driver", record.get("driver", "")),
              ("device", record.get("device", ""))]
    return {
        "uuid": str(uuid.uuid4()), "name": record["nodeid"].rsplit("::", 1)[-1], "fullName": record["nodeid"],
        "historyId": hashlib.md5(record["nodeid"].encode()).hexdigest(), "status": "broken",
        "statusDetails": {"message": record.get("reason") or "crashed",
                          "trace": f"reproduce: {record.get('reproducer', '')}"},
        "labels": [{"name": name, "value": value} for name, value in labels],
        "start": now, "stop": now,
    }
