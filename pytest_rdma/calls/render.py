"""A check's recorded calls, rendered three ways from the one record: C, Python, and step lines.

The C program is standalone (gcc repro.c -libverbs): it opens the device by name, makes the
same calls with the same arguments (objects by the variable names the record gave them,
fields of objects as expressions like qp0->qp_num, so a new run's numbers are used), prints
each result, and exits 0 when the decisive call shows the observation again ("REPRODUCED"),
1 when it does not, 2 when the setup before it failed. The Python script replays the same
record through pytest-rdma's call layer (pytest_rdma.replay).
"""

from __future__ import annotations

import json
import pprint
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypedDict, Union, cast

from pytest_rdma.calls.invoke import return_ctype
from pytest_rdma.calls.marshal import AS_STRUCT, TRAILING, parse_ctype
from pytest_rdma.calls.payload import C_FILL
from pytest_rdma.calls.record import (
    ArrayArg,
    Call,
    Field,
    Handle,
    OutArg,
    Resolved,
    Shown,
    StructArg,
    Sym,
    result_index,
    result_name,
)
from pytest_rdma.calls.values import is_flag_expr
from pytest_rdma.catalogue.model import RETURNS_ERRNO, RETURNS_POINTER, RETURNS_VOID, Array, Verb
from pytest_rdma.observations import Observation

# A struct's trailing specs as its record holds them (marshal.TRAILING): (struct name, fields) pairs.
Specs = tuple[tuple[str, Mapping[str, Resolved]], ...]

# A recorded value as the replay's JSON spells it (encode): objects, fields, flags and bytes as
# {"$handle": ...}-style mappings, structs as mappings, arrays as lists.
Encoded = Union[int, str, None, list["Encoded"], dict[str, "Encoded"]]

# One call of a Python reproducer's CALLS (python_script), as replay.replay reads it.
RecordedCall = TypedDict(
    "RecordedCall",
    {
        "index": int,
        "verb": str,
        "args": "dict[str, Encoded]",
        "as": "str | None",  # the name of the object it returned
        "outs_as": "dict[str, str]",  # out parameter -> the name of the object it returned
        "sets": "dict[str, Encoded]",  # only where the call wrote fields of an object argument first
        "step": "str | None",
        "phase": str,
    },
    total=False,
)

# The session's objects, opened by the prologue: the device under test's, and a peer's (--rdma-peer)
# under the names provider.device gives a peer's (role "peer").
SESSION_HANDLES = ("ctx", "device", "peer_ctx", "peer_device")
POLL_TRIES = 10000  # with 1 ms between tries: the 10 s a check waits for a completion


def step_line(call: Call) -> str:
    """One call as a person reads it: "ibv_modify_qp(qp0, {qp_state=IBV_QPS_INIT, ...}, IBV_QP_STATE) -> 0"."""
    written = "".join(f"{target} = {_short(value)}; " for target, value in call.set_targets())
    return f"{written}{call.verb}({', '.join(_short(value) for _, value in call.args)}) {call.outcome_text()}"


def _short(value: object) -> str:  # a Shown, or an item of an Array
    if isinstance(value, ArrayArg):
        return "[" + ", ".join(_short(item) for item in value.items) + "]"
    if isinstance(value, StructArg):
        inner = ", ".join(f"{path}={_short(v)}" for path, v in value.fields if path != TRAILING)
        specs = cast(Specs, dict(value.fields).get(TRAILING, ()))  # marshal.build_struct's layout of them
        more = "".join(f" + {name}{{...}}" for name, _ in specs)
        return f"{{{inner}}}{more}"
    if isinstance(value, OutArg):
        return f"&({value.ctype})"
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, Array):
        items = value.items
        return f"&[{items.hex()}]" if isinstance(items, bytes) else f"&[{', '.join(_short(v) for v in items)}]"
    return "NULL" if value is None else str(value)


# -- C ---------------------------------------------------------------------------------------------
def c_literal(value: object) -> str:  # a Shown, or an item of an Array
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, (Sym, Handle, Field)):
        return str(value)
    if isinstance(value, int):
        return str(value) if -(1 << 31) <= value < (1 << 31) else f"{value:#x}ULL"
    if isinstance(value, str):
        return json.dumps(value)
    raise TypeError(f"cannot write {value!r} in C")


def _c_bytes(data: bytes) -> str:
    return '"' + "".join(f"\\x{byte:02x}" for byte in data) + '"'


class CProgram:
    """Builds the C text of one check's calls."""

    def __init__(self, verbs: Mapping[str, Verb], device: str) -> None:
        self.verbs = verbs
        self.device = device
        self.lines: list[str] = []
        self.declared: set[str] = set(SESSION_HANDLES)

    def emit(self, text: str = "") -> None:
        self.lines.append(f"\t{text}" if text else "")

    def struct(self, name: str, arg: StructArg) -> str:
        """Declare and fill a struct argument; the expression that passes it."""
        specs = cast(Specs, dict(arg.fields).get(TRAILING, ()))  # marshal.build_struct's layout of them
        if specs:
            members = " ".join(f"struct {spec} spec{i};" for i, (spec, _) in enumerate(specs))
            # Packed, so the specs follow the head with no padding, as the flow API reads them;
            # aligned, so the head's address is as aligned as the struct it is.
            self.emit(f"struct {{ {arg.ctype} attr; {members} }} __attribute__((packed, aligned(8))) {name};")
            # The head is the packed struct's first member: pass the whole struct's (aligned) address.
            head, passed = f"{name}.attr", f"({arg.ctype} *)(void *)&{name}"
        else:
            self.emit(f"{arg.ctype} {name};")
            head, passed = name, f"&{name}"
        self.emit(f"memset(&{name}, 0, sizeof({name}));")
        self.assign(head, [(p, v) for p, v in arg.fields if p != TRAILING])
        for index, (_, fields) in enumerate(specs):
            spec = f"{name}.spec{index}"
            self.assign(spec, list(fields.items()))
            if "size" not in fields:
                self.emit(f"{spec}.size = sizeof({spec});")
        if specs and not any(path == "size" for path, _ in arg.fields):
            self.emit(f"{head}.size = sizeof({name});")
        return passed

    def array(self, name: str, value: ArrayArg) -> str:
        """Declare and fill an array of structs (chained through next for a WR list); its name."""
        self.emit(f"{value.ctype} {name}[{len(value.items)}];")
        self.emit(f"memset({name}, 0, sizeof({name}));")
        for index, item in enumerate(value.items):
            self.assign(f"{name}[{index}]", item.fields)
            if value.chained and index + 1 < len(value.items):
                self.emit(f"{name}[{index}].next = &{name}[{index + 1}];")
        return name

    def assign(self, target: str, fields: Sequence[tuple[str, Shown]]) -> None:
        for path, value in fields:
            if isinstance(value, ArrayArg):
                inner = f"{target.replace('[', '_').replace(']', '').replace('.', '_')}_{path.replace('.', '_')}"
                self.emit(f"{target}.{path} = {self.array(inner, value)};")
            elif isinstance(value, Array):
                memory = f"{target}_{path}".replace(".", "_").replace("->", "_")
                if isinstance(value.items, bytes):
                    self.emit(f"static uint8_t {memory}[] = {_c_bytes(value.items)};")
                else:
                    self.emit(f"void *{memory}[] = {{{', '.join(c_literal(item) for item in value.items)}}};")
                self.emit(f"{target}.{path} = (void *){memory};")
            elif isinstance(value, (bytes, bytearray)):
                self.emit(f"memcpy(&{target}.{path}, {_c_bytes(bytes(value))}, {len(value)});")
            else:
                self.emit(f"{target}.{path} = {c_literal(value)};")

    def call(self, call: Call, decisive: bool) -> None:
        verb = self.verbs[call.verb]
        self.emit(f"/* [{call.index}] {call.phase}{': the call the verdict rests on' if decisive else ''} */")
        passed = []
        for name, value in call.args:
            var = f"a{call.index}_{name}"
            if isinstance(value, ArrayArg):
                passed.append(self.array(var, value))
            elif isinstance(value, StructArg):
                expression = self.struct(var, value)
                declared = parse_ctype(verb.param(name).ctype)
                if declared.aggregate and value.ctype != declared.c_name:  # a sockaddr_in as a struct sockaddr *
                    expression = f"({declared.c_name} *){expression}"
                passed.append(expression)
            elif isinstance(value, OutArg) and "[" in value.ctype:
                element, count = value.ctype.rstrip("]").split("[")
                self.emit(f"{element} {var}[{count}];")
                self.emit(f"memset({var}, 0, sizeof({var}));")
                passed.append(var)
            elif isinstance(value, OutArg):
                base = parse_ctype(value.ctype)
                self.emit(f"{value.ctype if base.pointers or not base.aggregate else base.c_name} {var};")
                self.emit(f"memset(&{var}, 0, sizeof({var}));")
                passed.append(f"&{var}")
            elif isinstance(value, Handle) and value.kind == "buffer" and value.name not in self.declared:
                self.emit(f"void *{value.name} = aligned_alloc(4096, ({value.size} + 4095) / 4096 * 4096);")
                self.emit(f"memset({value.name}, 0, ({value.size} + 4095) / 4096 * 4096);")
                if value.seed is not None:
                    self.emit(C_FILL.format(seed=value.seed, size=value.size, buf=value.name))
                self.declared.add(value.name)
                passed.append(value.name)
            elif isinstance(value, Field) and verb.param(name).ctype.rstrip().endswith("*"):
                passed.append(f"(void *){c_literal(value)}")  # a buffer's address, given to a pointer parameter
            else:
                passed.append(c_literal(value))
        for target, value in call.set_targets():
            self.emit(f"{target} = {c_literal(value)};")
        self.emit("errno = 0;")
        invocation = f"{call.verb}({', '.join(passed)})"
        result = self.result_name(call)
        if verb.returns == RETURNS_VOID:
            self.emit(f"{invocation};")
        elif call.verb == "ibv_poll_cq":
            # The check polled until a completion came (or its deadline passed): so does the program.
            self.emit(f"int {result} = 0;")
            self.emit(
                f"for (int t = 0; t < {POLL_TRIES} && {result} == 0; t++) {{ if (t) usleep(1000); "
                f"{result} = {invocation}; }}"
            )
            self.declared.add(result)
        elif call.verb == "ibv_start_poll" and call.repeat:
            # The check began the iteration once a completion came (ENOENT until then): so does the program.
            self.emit(f"int {result} = ENOENT;")
            self.emit(
                f"for (int t = 0; t < {POLL_TRIES} && {result} == ENOENT; t++) {{ if (t) usleep(1000); "
                f"{result} = {invocation}; }}"
            )
            self.declared.add(result)
        else:
            ctype = return_ctype(verb)
            known = result in self.declared
            self.emit(f"{result} = {invocation};" if known else f"{ctype} {result} = {invocation};")
            self.declared.add(result)
        self.emit(f"int e{call.index} = errno;")
        self.report(call, verb, result)
        if call.phase == "setup" and not decisive and verb.returns in (RETURNS_POINTER, RETURNS_ERRNO) and call.ok:
            failed = f"!{result}" if verb.returns == RETURNS_POINTER else f"{result} != 0"
            self.emit(f'if ({failed}) {{ puts("SETUP FAILED at [{call.index}] {call.verb}"); return 2; }}')

    def result_name(self, call: Call) -> str:
        return call.result.name if isinstance(call.result, Handle) else result_name(call.index)

    def report(self, call: Call, verb: Verb, result: str) -> None:
        tag = f"[{call.index}] {call.verb}"
        if verb.returns == RETURNS_VOID:
            self.emit(f'printf("{tag}\\n");')
        elif verb.returns == RETURNS_POINTER or "*" in return_ctype(verb):
            self.emit(f'printf("{tag} -> %p (errno %d)\\n", (void *){result}, e{call.index});')
        else:
            self.emit(f'printf("{tag} -> %lld (errno %d)\\n", (long long){result}, e{call.index});')


def _out_expr(call: Call, path: str) -> str:
    """C for a field of what `call` wrote or returned: "attr.qp_state" -> a5_attr.qp_state.

    A field of an object the call was given reads the object: "wq.state" -> wq0->state.
    """
    if path == "ret":  # what the call returned, as the program keeps it
        return call.result.name if isinstance(call.result, Handle) else result_name(call.index)
    root, _, rest = path.partition(".")
    rest = re.sub(r"(^|\.)(\d+)(?=\.|$)", r"[\2]", rest).replace(".[", "[")  # "0.status" -> "[0].status"
    if root == "ret" and isinstance(call.result, Handle):
        return f"{call.result.name}->{rest}"
    given = dict(call.args).get(root)
    if isinstance(given, Handle) and given.kind != "buffer":
        return f"{given.name}->{rest}" if rest else given.name
    if rest.startswith("["):
        return f"a{call.index}_{root}{rest}"
    return f"a{call.index}_{root}.{rest}" if rest else f"a{call.index}_{root}"


def _literal_of(value: Shown) -> str:
    if isinstance(value, str) and value.isidentifier():
        return value
    return c_literal(value)


@dataclass(frozen=True)
class Site:
    """Where the program judges an observation (observations.CSite): its decisive call, by the program's names."""

    program: CProgram
    call: Call
    calls: Sequence[Call]
    steps: Mapping[str, int]
    returns: str

    def result(self) -> str:
        return self.program.result_name(self.call)

    def out(self, call: Call, path: str) -> str:
        return _out_expr(call, path)


def c_program(
    verbs: Mapping[str, Verb],
    device: str,
    calls: Sequence[Call],
    *,
    header: Sequence[str] = (),
    decisive: int | None = None,
    observation: Observation | None = None,
    steps: Mapping[str, int] | None = None,
    peer: str = "",
) -> str:
    """The standalone C reproducer of `calls` on `device` (`steps`: step names -> call index); with
    `peer`, it opens that device too, as peer_ctx (a two-device check's receiver is made there)."""
    program = CProgram(verbs, device)
    condition = ""
    for call in calls:
        if call.phase == "teardown":
            continue
        program.call(call, call.index == decisive)
        if call.index == decisive and observation is not None:
            site = Site(program, call, calls, steps or {}, verbs[call.verb].returns)
            condition = observation.c_condition(site)
    if condition:
        program.emit(f'if ({condition}) {{ puts("REPRODUCED"); return 0; }}')
        program.emit('puts("NOT REPRODUCED"); return 1;')
    else:
        program.emit('puts("DONE: compare the results printed above with the observation"); return 3;')
    comment = "\n".join(f" * {line}" for line in header)
    uses_cm = any(verbs[call.verb].family == "rdmacm" for call in calls)
    text = PROLOGUE.format(
        helpers=C_HELPERS,
        comment=comment,
        link="-libverbs -lrdmacm" if uses_cm else "-libverbs",
        include="#include <rdma/rdma_cma.h>\n" if uses_cm else "",
        opened=device_open(device) + (device_open(peer, "peer") if peer else ""),
    )
    return text + "\n".join(program.lines) + "\n}\n"


# The C helpers every reproducer may call (the one-host program and both programs of a two-host pair):
# written once here, put into each program's prologue by str.format's {helpers}.
C_HELPERS = """/* Whether a descriptor (a completion channel's) becomes readable within ms milliseconds. */
static __attribute__((unused)) int fd_ready(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	return poll(&p, 1, ms) > 0;
}

/* Whether n bytes are all zero (memory a refused operation must not have written). */
static __attribute__((unused)) int all_zero(const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}
"""

PROLOGUE = """/*
{comment}
 *
 * Reproducer written by pytest-rdma. Build and run on the machine with the device:
 *   gcc -o repro repro.c {link} && ./repro
 * Exit status: 0 the deviation reproduced, 1 it did not, 2 the setup failed, 3 no automatic verdict.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>
{include}
{helpers}
int main(void)
{{
	alarm(120); /* a provider that never answers ends the program instead of hanging it */
	struct ibv_device **list = ibv_get_device_list(NULL);
{opened}
"""

# One session device found by name in `list` and opened: the device under test ("device", "ctx"),
# then, for a two-device check, its peer ("peer_device", "peer_ctx"; --rdma-peer).
DEVICE_OPEN = """	struct ibv_device *{var} = NULL;
	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), {name}))
			{var} = list[i];
	if (!{var}) {{ fprintf(stderr, "no {what} %s\\n", {name}); return 2; }}
	struct ibv_context *{ctx} = ibv_open_device({var});
	if (!{ctx}) {{ perror("ibv_open_device{label}"); return 2; }}
"""


def device_open(name: str, role: str = "") -> str:
    """DEVICE_OPEN for `name`, under the names provider.device gives its role ("" or "peer")."""
    prefix = f"{role}_" if role else ""
    return DEVICE_OPEN.format(
        var=f"{prefix}device",
        ctx=f"{prefix}ctx",
        name=json.dumps(name),
        what=f"{role} device".lstrip(),
        label=f" ({role})" if role else "",
    )


# -- Python ----------------------------------------------------------------------------------------
def encode(value: object) -> Encoded:  # a Shown, or an item of an Array
    """A recorded value as JSON the replay understands."""
    if isinstance(value, Handle):
        if value.kind == "buffer":
            return {"$buffer": value.size, "$seed": value.seed, "$name": value.name}
        return {"$handle": value.name}
    if isinstance(value, Field):
        # An address inside the object's buffer keeps its offset (a window's range, an SGE past the start).
        return (
            {"$field": [value.handle, value.path, value.offset]}
            if value.offset
            else {"$field": [value.handle, value.path]}
        )
    if isinstance(value, Sym):
        if result_index(value) is not None:
            # What an earlier call returned (a type 2 window's key from ibv_inc_rkey): the replay's own
            # call returns it anew, as the C reproducer's variable does; the recorded number is stale.
            return {"$result": result_index(value), "$was": value.value}
        # By name where it has one; a mask of bare bits ("0", "0x40000000") would come back as a string.
        return value.text if is_flag_expr(value.text) else value.value
    if isinstance(value, (bytes, bytearray)):
        return {"$bytes": bytes(value).hex()}
    if isinstance(value, ArrayArg):
        return [encode(item) for item in value.items]
    if isinstance(value, Array):
        return {"$array": encode(value.items) if isinstance(value.items, bytes) else [encode(v) for v in value.items]}
    if isinstance(value, StructArg):
        out: dict[str, Encoded] = {AS_STRUCT: value.ctype.removeprefix("struct ")} if value.stands_in else {}
        for path, item in value.fields:
            if path == TRAILING:
                specs = cast(Specs, item)  # marshal.build_struct's layout of them
                out[TRAILING] = [[name, {k: encode(v) for k, v in fields.items()}] for name, fields in specs]
            else:
                out[path] = encode(item)
        return out
    if isinstance(value, OutArg):
        return None
    return cast(Encoded, value)  # what is left is a number or a string (a literal the record kept)


def python_script(
    device: str,
    calls: Sequence[Call],
    *,
    header: Sequence[str] = (),
    decisive: int | None = None,
    observation: Observation | None = None,
    steps: Mapping[str, int] | None = None,
    peer: str = "",
) -> str:
    names = {index: name for name, index in (steps or {}).items()}
    records = [
        {
            "index": call.index,
            "verb": call.verb,
            "args": {name: encode(value) for name, value in call.args},
            "as": call.result.name if isinstance(call.result, Handle) else None,
            "outs_as": dict(call.named_outs),
            **({"sets": {path: encode(value) for path, value in call.sets}} if call.sets else {}),
            "step": names.get(call.index),
            "phase": call.phase,
        }
        for call in calls
        if call.phase != "teardown"
    ]
    doc = "\n".join(header)
    written = observation.as_dict() if observation is not None else {}  # as results write it: replay reads it back
    return (
        "#!/usr/bin/env python3\n"
        f'"""{doc}\n\nReplays the recorded calls through pytest-rdma\'s call layer (pip install pytest-rdma).\n'
        'Exit status: 0 the deviation reproduced, 1 it did not, 2 the setup failed, 3 no automatic verdict."""\n'
        "from pytest_rdma.replay import replay\n\n"
        f"CALLS = {pprint.pformat(records, width=110, sort_dicts=False)}\n\n"
        f"raise SystemExit(replay({device!r}, CALLS, decisive={decisive!r}, "
        f"observation={written!r}{f', peer={peer!r}' if peer else ''}))\n"
    )
