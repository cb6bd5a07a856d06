"""The results file's schema (docs/results-schema.md) as data, and the check of what a command reads.

The tables below are the document's tables: each field with the type words the document gives it
(tests/unit/test_results_schema.py holds the two equal, so neither changes alone). A command that
reads a results file checks every session line and record with them before it uses one: a file
edited by hand or written by something else is refused in one line naming the record, never read
into an `id = null` waiver or a comparison that passes. Fields the tables do not name are ignored,
as the document asks of readers (new fields may come within a version).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from pytest_rdma.outcomes import OUTCOMES

SESSION_FIELDS: dict[str, str] = {
    "schema_version": "int",
    "tool": "object",
    "started": "string",
    "finished": "string or null",
    "argv": "list of strings",
    "strict": "bool",
    "expectations": "list of strings",
    "exitstatus": "int or null",
    "usage_error": "string",
    "profile": "object",
    "unfinished": "list of strings",
    "devices": "object",
    "summary": "object",
    "waivers": "object",
    "results": "list",
}

RECORD_FIELDS: dict[str, str] = {
    "nodeid": "string",
    "stable_id": "string",
    "test": "string",
    "device": "string",
    "driver": "string",
    "identity": "object or null",
    "verb": "string",
    "claim": "string",
    "kind": "string",
    "variant": "string",
    "case_id": "string",
    "claim_text": "string",
    "ref": "string",
    "title": "string",
    "sources": "list",
    "transports": "list of strings",
    "layer": "string",
    "decided_by": "string",
    "peer": "string",
    "ends": "object",
    "family": "string",
    "capabilities": "list of strings",
    "required": "object",
    "params": "object",
    "outcome": "string",
    "pytest_outcome": "string",
    "when": "string",
    "reason": "string",
    "blocked": "bool",
    "expected": "string",
    "observed": "string",
    "observation": "object",
    "deviation_ref": "string",
    "details": "object",
    "steps": "list of strings",
    "routes": "list of strings",
    "decisive_call": "int",
    "teardown_failures": "list of strings",
    "reproducer": "object",
    "reproducer_error": "string",
    "rerun": "string",
    "message": "string",
    "waiver": "object or null",
    "duration": "number",
    "stop": "number",
    "worker": "string",
    "leak": "object or null",
    "kernel_log": "object or null",
}

# What every reader needs of a record: which check, on which driver, how it ended.
REQUIRED = ("stable_id", "driver", "outcome")
# The document's `pytest_outcome` values.
PYTEST_OUTCOMES = ("passed", "failed", "skipped", "xfailed", "xpassed", "error")
# What to give for a required field that is missing, in the document's words.
GIVE = {
    "stable_id": "the check's stable id (test function and case, e.g. test_ibv_alloc_pd[null-context])",
    "driver": 'the provider driver it ran on (rxe, siw, mlx5...; "" for a check that uses no device)',
    "outcome": f"one of {', '.join(OUTCOMES)}",
}


class SchemaError(ValueError):
    """What is wrong with one session line or record, and what to give instead; not where (the reader says)."""


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


# The document's type words -> the check of a JSON value.
TYPES: dict[str, Callable[[object], bool]] = {
    "string": lambda value: isinstance(value, str),
    "int": _is_int,
    "number": _is_number,
    "bool": lambda value: isinstance(value, bool),
    "object": lambda value: isinstance(value, dict),
    "list": lambda value: isinstance(value, list),
    "list of strings": _is_strings,
}
NULLABLE = " or null"


def conforms_to(value: object, words: str) -> bool:
    """Whether a JSON value is of the type the document's words give ("int or null", "list of strings")."""
    if words.endswith(NULLABLE):
        return value is None or TYPES[words[: -len(NULLABLE)]](value)
    return TYPES[words](value)


def json_type(value: object) -> str:
    """A JSON value's type in words, for a message."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"


# The document's type words as a message asks for them.
SHOWN = {
    "string": "a string",
    "int": "an integer",
    "number": "a number",
    "bool": "true or false",
    "object": "an object",
    "list": "a list",
    "list of strings": "a list of strings",
}


def shown(words: str) -> str:
    base = words[: -len(NULLABLE)] if words.endswith(NULLABLE) else words
    return SHOWN[base] + (NULLABLE if base != words else "")


def _check_types(entry: Mapping[str, object], fields: Mapping[str, str]) -> None:
    for name, words in fields.items():
        if name in entry and not conforms_to(entry[name], words):
            value = entry[name]
            found = "a list with an item that is not a string" if isinstance(value, list) else json_type(value)
            wanted = f"{shown(words)}: {GIVE[name]}" if name in GIVE else shown(words)
            raise SchemaError(f"'{name}' is {found}; give {wanted} (docs/results-schema.md)")


def check_session(entry: Mapping[str, object]) -> None:
    """A session line (or a final document's session fields): each known field of its type."""
    _check_types(entry, SESSION_FIELDS)
    devices = entry.get("devices")
    if isinstance(devices, dict):
        check_devices(devices)


def check_record(entry: Mapping[str, object]) -> None:
    """One record: the fields every reader needs, each known field of its type, a known outcome."""
    for name in REQUIRED:
        if name not in entry:
            raise SchemaError(f"the record has no '{name}'; give {GIVE[name]} (docs/results-schema.md)")
    _check_types(entry, RECORD_FIELDS)
    if entry.get("identity") is not None:
        check_identity(entry["identity"])
    if not entry["stable_id"]:
        raise SchemaError(f"the record's 'stable_id' is empty; give {GIVE['stable_id']} (docs/results-schema.md)")
    if entry["outcome"] not in OUTCOMES:
        raise SchemaError(f"outcome {entry['outcome']!r} is none of the schema's; give {GIVE['outcome']}")
    if "pytest_outcome" in entry and entry["pytest_outcome"] not in PYTEST_OUTCOMES:
        raise SchemaError(
            f"pytest_outcome {entry['pytest_outcome']!r} is none of the schema's; "
            f"give one of {', '.join(PYTEST_OUTCOMES)}"
        )


def check_identity(identity: object) -> None:
    """A device's identity (the document's Identity): an object naming its driver ("unknown" when the
    device could not be opened)."""
    if not isinstance(identity, dict):
        raise SchemaError(f"an identity is {json_type(identity)}; give an object with the device's driver")
    if not isinstance(identity.get("driver"), str):
        raise SchemaError(f"an identity's 'driver' is {json_type(identity.get('driver'))}; give {GIVE['driver']}")


def check_devices(devices: Mapping[str, object]) -> None:
    """`devices`: device name -> its identity."""
    for name, identity in devices.items():
        try:
            check_identity(identity)
        except SchemaError as exc:
            raise SchemaError(f"devices[{name!r}]: {exc}") from None


def record_name(entry: Mapping[str, object]) -> str:
    """How a message names a record: its stable id, else its node id, else nothing."""
    for key in ("stable_id", "nodeid"):
        value = entry.get(key)
        if isinstance(value, str) and value:
            return value
    return ""
