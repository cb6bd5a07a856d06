"""One check's record as an Allure result: a statement about a driver that reads without the code.

Pure: a record (record.py) in, an Allure result out, as allure-python-commons' model (`model2.TestResult`,
the model allure-pytest fills; `document` is the JSON of its `<uuid>-result.json`), and its attachments;
allure_writer.py writes them with allure-python-commons' file writer. What each part holds:

- name: the claim in words plus the case ("a step missing one required attribute fails ...
  [RC RESET>INIT without STATE]"); description: what the man page says (its section, cited and
  linked), what was done on which device, and what was observed;
- status: conforms -> passed, deviates -> failed, crash / timeout / error -> broken,
  unsupported / not exercised -> skipped; a waived deviation is failed and *known*, which Allure
  3 shows as an accepted failure and its quality gate ignores;
- labels: driver > verb > claim as Allure's suites (the report's tree), and driver, device,
  verb, claim, qp_type, outcome, decided_by, transport for filters, categories and environments;
- links: the man page on man7.org (page and section), every other cited source, the waiver's link;
- parameters: the case's axes by name, the case and the device: readable values, never reprs;
- steps: every verb call the check made, with its arguments and result, grouped by phase; the
  decisive call of a deviation is the failed step;
- attachments: a deviation's C and Python reproducers, the kernel log a check provoked.

Identity: the test case is the stable id (the same for every device, so history follows a
check across runs); the device is a parameter, so one check on two devices is two results,
never a retry of one.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from allure_commons import model2 as model
from attr import fields as attr_fields
from attr import has as attr_has

from pytest_rdma.outcomes import (
    CONFORMS,
    CRASH,
    DEVIATES,
    ERROR,
    NOT_EXERCISED,
    TIMEOUT,
    UNSUPPORTED,
    WAIVED,
)
from pytest_rdma.report import links
from pytest_rdma.report.allure_config import FRAMEWORK, NO_DEVICE
from pytest_rdma.report.profile import failure_text
from pytest_rdma.report.redact import redact
from pytest_rdma.shapes import Json, JsonObject

if TYPE_CHECKING:
    from attr import AttrsInstance

    from pytest_rdma.report.record import Record, Reproducer

__all__ = ["FRAMEWORK", "NO_DEVICE", "Attachment", "Converted", "convert", "document", "title"]

STATUS = {
    CONFORMS: model.Status.PASSED,
    DEVIATES: model.Status.FAILED,
    WAIVED: model.Status.FAILED,
    CRASH: model.Status.BROKEN,
    TIMEOUT: model.Status.BROKEN,
    ERROR: model.Status.BROKEN,
    UNSUPPORTED: model.Status.SKIPPED,
    NOT_EXERCISED: model.Status.SKIPPED,
}
FINISHED = "finished"  # Allure's stage of a result or step that ran to its end
STEP_LINE = re.compile(r"^\[(?P<index>-?\d+)\] (?P<phase>\w+): (?P<text>.*)$", re.S)
TEXT_LIMIT = 4000


@dataclass
class Attachment:
    name: str
    extension: str  # the file's extension, e.g. "c"
    content: bytes
    mime: str = "text/plain"


@dataclass
class Converted:
    result: model.TestResult
    attachments: dict[str, Attachment] = field(default_factory=dict)  # file name -> attachment

    @property
    def document(self) -> JsonObject:
        return document(self.result)


def document(result: model.TestResult) -> JsonObject:
    """The JSON of a result as allure-python-commons' file writer writes it (empty values left out).

    What `attr.asdict(result, filter=...)` gives, the logger's own conversion, without its generic walk
    (which asks attrs of every value it meets, a third of a result's writing; unit-tested equal)."""
    data: JsonObject = _plain_attrs(result)
    return data


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _plain_attrs(instance: object) -> JsonObject:
    kind = type(instance)
    names = _FIELD_NAMES.get(kind)
    if names is None:
        names = _FIELD_NAMES[kind] = tuple(
            attribute.name for attribute in attr_fields(cast("type[AttrsInstance]", kind))
        )
    out: JsonObject = {}
    for name in names:
        value = getattr(instance, name)
        if value or value is False:  # the logger's filter: empty values left out, False kept
            out[name] = _plain(value)
    return out


def _plain(value: object) -> Json:
    if isinstance(value, (str, int, float)) or value is None:
        return value
    if type(value) in _FIELD_NAMES or attr_has(type(value)):
        return _plain_attrs(value)
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {cast(str, key): _plain(item) for key, item in value.items()}
    return cast(Json, value)  # what json.dumps then writes, as the logger's asdict leaves it


def digest(text: str) -> str:
    return hashlib.md5(text.encode("utf-8")).hexdigest()  # an id, not a secret


def ordered_params(record: Record) -> list[tuple[str, str]]:
    """The record's parameters that have a value, in the order of its variant (the case's axes; those the variant does
    not spell out after them, by name), whatever order its `params` has: a results file read back has them sorted by
    name (the lab writes its Allure results from one), and a result must not depend on which process wrote it."""
    tokens = [token for token in str(record.get("variant") or "").split("-") if token]
    taken: set[int] = set()

    def place(value: str) -> int:
        """Where the value's tokens first stand in the variant, not counting tokens another value took."""
        parts = value.split("-")
        for start in range(len(tokens) - len(parts) + 1):
            if tokens[start : start + len(parts)] == parts and not taken & set(range(start, start + len(parts))):
                taken.update(range(start, start + len(parts)))
                return start
        return len(tokens)

    named = [(str(name), str(value)) for name, value in (record.get("params") or {}).items() if str(value)]
    # Placed longest value first (qp-RC before RC, which then stands apart), and ties by name: the order the dict
    # gives must not decide. Values not in the variant (a field it names by its path) go last, by name.
    at = {name: place(value) for name, value in sorted(named, key=lambda item: (-len(item[1].split("-")), item[0]))}
    return sorted(named, key=lambda item: (at[item[0]], item[0]))


def case_words(record: Record) -> str:
    """The case as words: its axes by name where they say everything the variant says, else the variant."""
    params = dict(ordered_params(record))
    variant = str(record.get("variant") or "")
    tokens = [token for token in variant.split("-") if token]
    values = {token for value in params.values() for token in str(value).split("-")}
    if params and all(token in values for token in tokens):
        return ", ".join(f"{name} {value}" for name, value in params.items())
    return " ".join(tokens)


def title(record: Record) -> str:
    claim = str(record.get("claim_text") or "")
    if not claim:
        return str(record.get("title") or record.get("stable_id") or record.get("nodeid") or "?")
    words = case_words(record)
    return f"{claim} [{words}]" if words else claim


def driver_of(record: Record) -> str:
    return str(record.get("driver") or NO_DEVICE)


def qp_type(record: Record) -> str:
    return str((record.get("params") or {}).get("qp_type") or "")


def citation(record: Record) -> str:
    """The section the check's claim rests on (a deviation's own source when it names another page's)."""
    own = str(record.get("deviation_ref") or "")
    return links.once(own or str(record.get("ref") or ""))


def source_links(record: Record) -> list[links.Link]:
    identity = record.get("identity") or {}
    kernel = str(identity.get("kernel") or "")
    found = links.links(record.get("sources") or (), kernel)
    names = {link.name for link in found}
    deviation_ref = str(record.get("deviation_ref") or "")
    if deviation_ref and links.once(deviation_ref) not in names:
        found.append(links.text_link(deviation_ref, "man"))
    return found


def status_message(record: Record) -> str:
    """The one text Allure shows under the result's name, and its categories match."""
    outcome = record["outcome"]
    reason = str(record.get("reason") or "")
    expected, observed = str(record.get("expected") or ""), str(record.get("observed") or "")
    waiver = record.get("waiver") or {}
    if outcome == DEVIATES:
        text = f"deviates from {citation(record)}: expected {expected}; observed {observed}"
        if waiver.get("status") == "mismatch":
            text += f" (a waiver exists for another observation: {reason})"
        return text
    if outcome == WAIVED:
        return (
            f"waived: {waiver.get('reason') or reason.removeprefix('waived: ')} ({waiver.get('link', '')}); "
            f"expected {expected}; observed {observed}"
        )
    if record.get("required"):
        return failure_text(record["required"])
    if outcome == UNSUPPORTED:
        return f"unsupported: {reason}" + (
            " (blocked: no check of this kind can run here)" if record.get("blocked") else ""
        )
    if outcome == NOT_EXERCISED:
        return f"not exercised: {reason}"
    if outcome == CONFORMS:
        if waiver.get("status") == "fixed":
            return f"conforms: the waiver {waiver.get('file', '')}:{waiver.get('line', '')} is no longer needed"
        if waiver.get("status") == "unseen":
            return (
                f"conforms this run: the intermittent deviation its waiver {waiver.get('file', '')}:"
                f"{waiver.get('line', '')} records was not seen"
            )
        return ""
    return f"{outcome}: {reason}"


def description(record: Record, has_reproducer: bool, quote: str = "") -> str:
    """Markdown: what the page says (quoted from the installed page where it could be), what was done, what
    was observed."""
    lines: list[str] = []
    cited = links.once(str(record.get("ref") or ""))  # the section the claim paraphrases
    link = links.text_link(cited)
    where = f"[{cited}]({link.url})" if link.url else cited
    if record.get("claim_text") and quote:
        lines += [
            f"**What the man page says** ({where}):",
            "",
            f"> {quote}",
            "",
            f"**The claim checked, in our words:** {record['claim_text']}",
            "",
        ]
    elif record.get("claim_text"):
        lines += [f"**What the man page says** ({where}, in our words):", "", f"> {record['claim_text']}", ""]
    others = [link for link in source_links(record) if link.name != cited]
    if others:
        shown = "; ".join(f"[{link.name}]({link.url})" if link.url else link.name for link in others)
        lines += [f"**Also cited:** {shown}", ""]
    identity = record.get("identity") or {}
    device = record.get("device") or ""
    on = f"{device} (driver {record.get('driver')}, {identity.get('transport', '')})" if device else "no device"
    params = ", ".join(f"{name} = {value}" for name, value in ordered_params(record))
    calls = [line for line in record.get("steps") or () if ": " in line]
    lines.append(
        f"**What was done:** on {on}, case `{record.get('variant') or record.get('case_id') or '-'}`"
        + (f" ({params})" if params else "")
        + (f": {len(calls)} verb calls, each a step below." if calls else ".")
    )
    if record.get("decided_by"):
        who = {"provider": "the provider", "kernel": "the kernel"}.get(record["decided_by"], record["decided_by"])
        lines.append(
            f"The outcome was decided by {who}"
            + (f" ({', '.join(record['routes'])})." if record.get("routes") else ".")
        )
    lines.append("")
    lines += observed_lines(record, has_reproducer)
    return redact("\n".join(lines)).strip() + "\n"


def observed_lines(record: Record, has_reproducer: bool) -> list[str]:
    outcome = record["outcome"]
    lines = [f"**What was observed:** {outcome}."]
    if record.get("expected") or record.get("observed"):
        lines += ["", f"- expected: {record.get('expected', '')}", f"- observed: {record.get('observed', '')}"]
        lines += [f"- {key}: {value}" for key, value in (record.get("details") or {}).items()]
    elif record.get("reason"):
        lines += ["", f"- {record['reason']}"]
    waiver = record.get("waiver") or {}
    if waiver:
        link = links.text_link(str(waiver.get("link") or ""))
        shown = f"[{link.name}]({link.url})" if link.url else link.name
        lines += [
            "",
            f"**Waiver** ({waiver.get('status')}, {waiver.get('file')}:{waiver.get('line')}): "
            f"{waiver.get('reason', '')} ({shown})",
        ]
    if has_reproducer:
        reproducer = record.get("reproducer") or {}
        lines += [
            "",
            f"**Reproducers** (attached): `{reproducer.get('c', '')}` (C: gcc FILE -libverbs), "
            f"`{reproducer.get('python', '')}` (Python).",
        ]
    elif record.get("rerun"):
        lines += ["", f"**Rerun:** `{record['rerun']}`"]
    for name in ("leak", "kernel_log"):
        if record.get(name):
            lines += ["", f"**Guard finding ({name}):** {json.dumps(record[name], sort_keys=True)[:1000]}"]
    return lines


def labels(record: Record) -> list[model.Label]:
    identity = record.get("identity") or {}
    driver = driver_of(record)
    verb = str(record.get("verb") or record.get("test") or "")
    claim = str(record.get("claim") or record.get("stable_id") or "")
    pairs = [
        ("parentSuite", driver),
        ("suite", verb),
        ("subSuite", claim),
        ("driver", driver),
        ("device", str(record.get("device") or NO_DEVICE)),
        ("verb", verb),
        ("claim", claim),
        ("qp_type", qp_type(record)),
        ("outcome", record["outcome"]),
        ("decided_by", str(record.get("decided_by") or record.get("layer") or "")),
        ("transport", str(identity.get("transport") or "")),
        ("kernel", str(identity.get("kernel") or "")),  # a kernel matrix's environments match on it
        ("framework", FRAMEWORK),
    ]
    waiver = record.get("waiver") or {}
    if waiver.get("status"):
        pairs.append(("waiver", str(waiver["status"])))
    if record.get("required"):
        pairs.append(("required", record["required"]["capability"]))
    if record["outcome"] == WAIVED and waiver:
        pairs.append(("known_issue", f"{waiver.get('reason', '')} ({links.once(str(waiver.get('link', '')))})"))
    return [model.Label(name=name, value=value) for name, value in pairs if value]


def result_links(record: Record) -> list[model.Link]:
    found = [link for link in source_links(record) if link.url]
    waiver = record.get("waiver") or {}
    if waiver.get("link"):
        link = links.text_link(str(waiver["link"]))
        if link.url and all(link.url != other.url for other in found):
            found.append(links.Link(f"waiver: {link.name}", link.url, "issue" if link.kind == "issue" else "link"))
    return [
        model.Link(type="issue" if link.kind == "issue" else "link", url=link.url, name=link.name) for link in found
    ]


def pair_names(reproducer: Reproducer) -> str:
    """A two-host reproducer's two programs, as its C attachment (both, one after the other) is named when
    the programs' own files could not be read."""
    pair = reproducer.get("pair")
    return f"{pair['receiver']} (the peer's host), then {pair['sender']}" if pair else ""


# A two-host reproducer's sides, in the order they are started, and where each runs.
PAIR_SIDES = {"receiver": "on the peer's host", "sender": "on the device's host"}


def pair_files(reproducer: Reproducer) -> dict[str, str]:
    """A two-host reproducer's file of each side (PAIR_SIDES), relative to the reproducers directory."""
    pair = reproducer.get("pair")
    return {"receiver": pair["receiver"], "sender": pair["sender"]} if pair else {}


def parameters(record: Record) -> list[model.Parameter]:
    params = [model.Parameter(name=name, value=value) for name, value in ordered_params(record)]
    if record.get("variant"):
        params.append(model.Parameter(name="case", value=str(record["variant"])))
    params.append(model.Parameter(name="device", value=str(record.get("device") or NO_DEVICE)))
    for end, facts in (record.get("ends") or {}).items():  # a two-device check: where each end ran
        built = f"{facts['driver']}, kernel {facts['kernel']}, rdma-core {facts['rdma_core']}"
        shown = f"{facts['device']} on {facts['host']} ({built})"
        params.append(model.Parameter(name=f"{end} end", value=shown))
    return params


def steps(record: Record, start: int, stop: int) -> list[model.TestStepResult]:
    """The recorded verb calls as steps, under one step per phase (setup, call, teardown)."""
    decisive = record.get("decisive_call")
    failed_teardown = set(record.get("teardown_failures") or ())
    phases: dict[str, list[model.TestStepResult]] = {}
    for line in record.get("steps") or ():
        found = STEP_LINE.match(line)
        if found is None:
            continue
        text = redact(found.group("text"))
        status = model.Status.PASSED
        if record["outcome"] in (DEVIATES, WAIVED) and decisive is not None and int(found.group("index")) == decisive:
            status = model.Status.FAILED
        elif found.group("phase") == "teardown" and found.group("text") in failed_teardown:
            status = model.Status.BROKEN
        phases.setdefault(found.group("phase"), []).append(
            model.TestStepResult(name=text, status=status, stage=FINISHED, start=start, stop=stop)
        )
    out: list[model.TestStepResult] = []
    for phase, calls in phases.items():
        statuses = {call.status for call in calls}
        worst = next(
            (status for status in (model.Status.FAILED, model.Status.BROKEN) if status in statuses),
            model.Status.PASSED,
        )
        out.append(
            model.TestStepResult(
                name=f"{phase}: {len(calls)} verb call{'s' if len(calls) != 1 else ''}",
                status=worst,
                stage=FINISHED,
                start=start,
                stop=stop,
                steps=calls,
            )
        )
    return out


def convert(
    record: Record, *, stop_ms: int, python_text: str = "", quote: str = "", pair_texts: dict[str, str] | None = None
) -> Converted:
    """The Allure result of `record` and its attachments (file names under the results directory).

    `python_text` is the Python reproducer's text; `quote` the cited section's own words (manpages.py);
    `pair_texts` a two-host reproducer's programs by side (PAIR_SIDES), each its own attachment: one
    file holding both would not build.
    """
    outcome = record["outcome"]
    result_uuid = str(uuid.uuid4())
    duration_ms = int(float(record.get("duration") or 0) * 1000)
    start = stop_ms - duration_ms
    reproducer = record.get("reproducer") or {}
    attachments: dict[str, Attachment] = {}
    pair = pair_files(reproducer)
    if pair and pair_texts and set(pair_texts) == set(PAIR_SIDES):
        for side, where in PAIR_SIDES.items():
            attachments[f"{result_uuid}-c-{side}-attachment.c"] = Attachment(
                f"reproducer (C), the {side}, run {where}: {pair[side]}", "c", pair_texts[side].encode()
            )
    elif reproducer.get("c_text"):
        attachments[f"{result_uuid}-c-attachment.c"] = Attachment(
            f"reproducer (C): {reproducer.get('c') or pair_names(reproducer)}", "c", str(reproducer["c_text"]).encode()
        )
    if python_text:
        attachments[f"{result_uuid}-py-attachment.py"] = Attachment(
            f"reproducer (Python): {reproducer.get('python', '')}", "py", python_text.encode()
        )
    kernel_log = record.get("kernel_log") or {}
    if kernel_log.get("lines"):
        attachments[f"{result_uuid}-kmsg-attachment.txt"] = Attachment(
            "kernel log", "txt", "\n".join(kernel_log["lines"]).encode()
        )
    message = status_message(record)
    trace = str(record.get("message") or "")
    stable_id = str(record.get("stable_id") or record.get("nodeid") or "")
    # A check of the catalogue is its stable id on every device; a test of the user's own is its node id
    # (its stable id is the function's name, the same for each of its parameter sets).
    case_key = stable_id if record.get("case_id") else str(record.get("nodeid") or stable_id)
    device = str(record.get("device") or NO_DEVICE)
    result = model.TestResult(
        uuid=result_uuid,
        testCaseId=digest(case_key),
        historyId=digest(f"{case_key}|{driver_of(record)}|{device}"),
        fullName=f"{driver_of(record)}.{record.get('verb') or record.get('test') or ''}: {stable_id} on {device}",
        name=redact(title(record)),
        description=description(record, bool(reproducer.get("c_text") or python_text), quote),
        status=model.Status.FAILED if record.get("required") else STATUS.get(outcome, model.Status.UNKNOWN),
        statusDetails=model.StatusDetails(
            message=redact(message)[:TEXT_LIMIT],
            trace=redact(trace)[-TEXT_LIMIT:],
            known=outcome == WAIVED,
        ),
        stage=FINISHED,
        start=start,
        stop=stop_ms,
        labels=labels(record),
        links=result_links(record),
        parameters=parameters(record),
        steps=steps(record, start, stop_ms),
        attachments=[model.Attachment(name=a.name, source=name, type=a.mime) for name, a in attachments.items()],
    )
    return Converted(result, attachments)
