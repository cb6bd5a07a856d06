"""A two-host check's reproducer: two C programs from its one record, the receiving and the sending side.

With its peer on another host (--rdma-peer-host) every call of a two-device check was made on one
of two ends (`Call.at`: "" this host, "peer" the peer host). Each program makes its own end's calls,
as calls/render.py writes them, and the two take turns in the record's order over one TCP connection,
as rdma-core's pingpong examples exchange what their ends need: at each change of end, the end that
had the turn sends the fields of its objects the other end's calls read next (QP number, rkey, an
MR's address), and the receiving side opens the connection by sending its GID and LID, which the
sending side writes where the record has the peer's. After the last call, the end whose objects the
observation reads judges it (the same condition as the single-host program) and tells the other;
both print the verdict and exit with it: 0 reproduced, 1 not, 2 a setup failed (on either end),
3 no automatic verdict.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from pytest_rdma.calls.record import ArrayArg, Call, Field, Handle, StructArg
from pytest_rdma.calls.render import C_HELPERS, CProgram, Site, _c_bytes, device_open, step_line
from pytest_rdma.catalogue.model import Array, Verb
from pytest_rdma.observations import Observation

RECEIVER, SENDER = "peer", ""  # Call.at of each side's calls
PORT = 18516  # the receiving side's default TCP port (rc_pingpong's 18515, plus one: both may run)
NAMES = {RECEIVER: "receiver", SENDER: "sender"}
OTHER = {RECEIVER: SENDER, SENDER: RECEIVER}
CALL_NAME = re.compile(r"[are](\d+)(?:_\w+)?$")  # a call's C names: a5_attr, r5, e5


@dataclass
class Side:
    """One end's program as it is written, and what its objects are."""

    at: str
    program: CProgram
    made: set[str] = field(default_factory=set)  # the C names of its objects declared so far


def _fields(value: object) -> Iterator[Field]:
    if isinstance(value, Field):
        yield value
    elif isinstance(value, StructArg):
        for _, item in value.fields:
            yield from _fields(item)
    elif isinstance(value, ArrayArg):
        for struct in value.items:
            yield from _fields(struct)
    elif isinstance(value, Array) and not isinstance(value.items, bytes):
        for element in value.items:
            yield from _fields(element)
    elif isinstance(value, (tuple, list)):
        for member in value:
            yield from _fields(member)


def fields_read(call: Call) -> list[Field]:
    """Every field of an object the call's arguments (and the fields it writes first) read."""
    return [found for _, value in (*call.args, *call.sets) for found in _fields(value)]


def root(name: str) -> str:
    """The C variable an object's name starts from: "a12_event->id" -> "a12_event"."""
    found = re.match(r"\w+", name)
    return found.group(0) if found else name


def owners(calls: Sequence[Call]) -> dict[str, str]:
    """Each object's C name -> the end it lives on."""
    found = {"ctx": SENDER, "device": SENDER, "peer_ctx": RECEIVER, "peer_device": RECEIVER}
    for call in calls:
        for _, value in call.args:
            if isinstance(value, Handle):
                found.setdefault(root(value.name), value.at)
        if isinstance(call.result, Handle):
            found[call.result.name] = call.at
        for name in call.named_outs.values():
            found[name] = call.at
    return found


def judged_on(condition: str, calls: Sequence[Call], owner: Mapping[str, str]) -> set[str]:
    """The ends whose names the condition reads (both: no single program can judge it)."""
    ends = set()
    for token in re.findall(r"[A-Za-z_]\w*", condition):
        made = CALL_NAME.match(token)
        if made and int(made.group(1)) < len(calls):
            ends.add(calls[int(made.group(1))].at)
        elif token in owner:
            ends.add(owner[token])
    return ends


def is_pair(calls: Sequence[Call]) -> bool:
    """Whether the record's calls were made on two hosts (a peer through --rdma-peer-host)."""
    return any(call.at == RECEIVER for call in calls)


def c_pair(
    verbs: Mapping[str, Verb],
    device: str,
    peer: str,
    calls: Sequence[Call],
    *,
    header: Sequence[str] = (),
    decisive: int | None = None,
    observation: Observation | None = None,
    steps: Mapping[str, int] | None = None,
    peer_gid: bytes = b"",
    peer_lid: int = 0,
    port: int = 1,
    gid_index: int = 0,
) -> dict[str, str]:
    """The receiving and the sending side's C programs ("receiver", "sender") of a two-host record."""
    owner = owners(calls)
    sides = {at: Side(at, CProgram(verbs, device)) for at in (RECEIVER, SENDER)}
    sides[RECEIVER].made |= {"peer_ctx", "peer_device"}
    sides[SENDER].made |= {"ctx", "device"}
    slots: dict[tuple[str, str], int] = {}  # (object, field) -> its index in the receiving side's got[]
    replace: dict[str, dict[str, str]] = {RECEIVER: {}, SENDER: {}}  # per side: C text -> what it received
    if peer_gid:
        replace[SENDER][_c_bytes(peer_gid)] = "peer_gid.raw"
    live = [call for call in calls if call.phase != "teardown"]
    turn = live[0].at if live else SENDER
    condition = ""
    for position, call in enumerate(live):
        if call.at != turn:
            _pass_turn(sides[turn], sides[call.at], live[position:], owner, slots, replace[call.at])
            turn = call.at
        side, other = sides[call.at], sides[OTHER[call.at]]
        other.program.emit(f"/* [{call.index}] on the {NAMES[call.at]}'s host: {_comment(step_line(call))} */")
        start = len(side.program.lines)
        side.program.call(call, call.index == decisive)
        side.program.lines[start:] = [
            _replaced(line, replace[call.at], peer_lid) for line in side.program.lines[start:]
        ]
        if isinstance(call.result, Handle):
            side.made.add(call.result.name)
        side.made |= {*call.named_outs.values(), *_declared(call)}
        if call.index == decisive and observation is not None:
            site = Site(side.program, call, calls, steps or {}, verbs[call.verb].returns)
            condition = observation.c_condition(site)
    ends = judged_on(condition, calls, owner) if condition else set()
    if len(ends) > 1:  # the condition reads both ends' objects: neither program can test it alone
        condition = ""
    judge = next(iter(ends)) if len(ends) == 1 else SENDER
    if turn != judge:
        _pass_turn(sides[turn], sides[judge], [], owner, slots, replace[judge])
    _verdict(sides[judge], sides[OTHER[judge]], condition)
    texts = {}
    for at, side in sides.items():
        opened = device_open(peer, "peer") if at == RECEIVER else device_open(device)
        hello = RECEIVER_HELLO if at == RECEIVER else SENDER_HELLO
        text = PAIR_PROLOGUE.format(
            helpers=C_HELPERS,
            comment="\n".join(f" * {line}" for line in header),
            role=NAMES[at],
            link="-libverbs -lrdmacm" if any(verbs[c.verb].family == "rdmacm" for c in live) else "-libverbs",
            include="#include <rdma/rdma_cma.h>\n" if "rdma_" in "\n".join(side.program.lines) else "",
            slots=max(len(slots), 3),  # the receiver's hello takes three
            usage=USAGE[at],
            opened=opened + hello.format(port=port, gid_index=gid_index),
        )
        texts[NAMES[at]] = text + "\n".join(side.program.lines) + "\n}\n"
    return texts


def _comment(text: str) -> str:
    return text.replace("*/", "* /")


def _declared(call: Call) -> Iterator[str]:
    """Buffers a call's arguments declared in its program (render.CProgram.call declares them at first use)."""
    for _, value in call.args:
        if isinstance(value, Handle) and value.kind == "buffer":
            yield value.name


def _replaced(line: str, replace: Mapping[str, str], peer_lid: int) -> str:
    for text, by in replace.items():
        line = line.replace(text, by)
    if peer_lid:  # the LID the record has for the peer's port, as a destination: the one it sent
        line = re.sub(rf"(\.dlid = ){peer_lid};", r"\1peer_lid;", line)
    return line


def _pass_turn(
    giver: Side,
    taker: Side,
    ahead: Sequence[Call],
    owner: Mapping[str, str],
    slots: dict[tuple[str, str], int],
    replace: dict[str, str],
) -> None:
    """The turn goes from `giver` to `taker`, with the giver's fields the taker's calls `ahead` read."""
    sent: list[tuple[str, int]] = []
    for call in ahead:
        if call.at != taker.at:
            continue
        for found in fields_read(call):
            key = (found.handle, found.path)
            if owner.get(root(found.handle), call.at) != giver.at or root(found.handle) not in giver.made:
                continue
            if key in slots:
                continue
            slots[key] = len(slots)
            sent.append((f"(uint64_t)(uintptr_t){found.handle}->{found.path}", slots[key]))
            replace[f"(uintptr_t){found.handle}->{found.path}"] = f"(uintptr_t)got[{slots[key]}]"
    values = "(uint64_t[]){" + ", ".join(expr for expr, _ in sent) + "}" if sent else "NULL"
    indices = "(int[]){" + ", ".join(str(slot) for _, slot in sent) + "}" if sent else "NULL"
    giver.program.emit(f"/* the turn goes to the {NAMES[taker.at]}, with what its next calls read */")
    giver.program.emit(f"if (give_turn(sock, {values}, {len(sent)})) return lost();")
    taker.program.emit(f"/* the {NAMES[giver.at]}'s turn ends: what it sent */")
    taker.program.emit(f"if (take_turn(sock, {indices}, {len(sent)})) return lost();")


def _verdict(judge: Side, told: Side, condition: str) -> None:
    """The judging end tests the condition and tells the other; both print and exit with the verdict."""
    if condition:
        judge.program.emit(f"int verdict = ({condition}) ? 0 : 1;")
    else:
        judge.program.emit("int verdict = 3;")
    judge.program.emit("if (give_turn(sock, (uint64_t[]){(uint64_t)verdict}, 1)) return lost();")
    told.program.emit("if (take_turn(sock, (int[]){0}, 1)) return lost();")
    told.program.emit("int verdict = (int)got[0];")
    for side in (judge, told):
        side.program.emit('puts(verdict == 0 ? "REPRODUCED" : verdict == 1 ? "NOT REPRODUCED"')
        side.program.emit('     : "DONE: compare the results printed above with the observation");')
        side.program.emit("close(sock);")
        side.program.emit("return verdict;")


def commands(stem: str, c_text: Mapping[str, str], peer_host: str) -> dict[str, str]:
    """The two commands, one for each host: the receiver first (it listens), then the sender."""
    link = "-libverbs -lrdmacm" if "<rdma/rdma_cma.h>" in "".join(c_text.values()) else "-libverbs"
    return {
        "receiver": f"gcc -o receiver {stem}.receiver.c {link} && ./receiver {PORT}",
        "sender": f"gcc -o sender {stem}.sender.c {link} && ./sender {peer_host or 'RECEIVER_HOST'} {PORT}",
    }


USAGE = {
    RECEIVER: f"./receiver [PORT]   (the default {PORT}; 0: any free port, printed as LISTENING PORT)",
    SENDER: "./sender RECEIVER_HOST [PORT]",
}

PAIR_PROLOGUE = """/*
{comment}
 *
 * The {role} side of a two-host reproducer written by pytest-rdma: the receiving side runs on
 * the peer's host, the sending side on the host of the device under test; they take turns over TCP.
 * Build and run (the receiver first):
 *   gcc -o {role} {role}.c {link}
 *   {usage}
 * Exit status: 0 the deviation reproduced, 1 it did not, 2 the setup failed (on either end),
 * 3 no automatic verdict.
 */
#include <endian.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <infiniband/verbs.h>
{include}
static uint64_t got[{slots}]; /* the values the other end sent, by slot */

{helpers}
static int whole(int fd, void *p, size_t n, int writing)
{{
	for (size_t done = 0; done < n;) {{
		ssize_t k = writing ? write(fd, (char *)p + done, n - done) : read(fd, (char *)p + done, n - done);
		if (k <= 0)
			return -1;
		done += (size_t)k;
	}}
	return 0;
}}

/* The turn to the other end, with n values (network byte order). */
static int give_turn(int fd, const uint64_t *values, uint32_t n)
{{
	uint32_t count = htonl(n);
	if (whole(fd, &count, sizeof(count), 1))
		return -1;
	for (uint32_t i = 0; i < n; i++) {{
		uint64_t v = htobe64(values[i]);
		if (whole(fd, &v, sizeof(v), 1))
			return -1;
	}}
	return 0;
}}

/* The turn from the other end: its n values into got[] at the slots given. */
static int take_turn(int fd, const int *slots, uint32_t n)
{{
	uint32_t count;
	if (whole(fd, &count, sizeof(count), 0) || ntohl(count) != n)
		return -1;
	for (uint32_t i = 0; i < n; i++) {{
		uint64_t v;
		if (whole(fd, &v, sizeof(v), 0))
			return -1;
		got[slots[i]] = be64toh(v);
	}}
	return 0;
}}

/* The other end closed the connection: its setup failed (it says which call), or it died. */
static int lost(void)
{{
	puts("SETUP FAILED on the other end (or it ended): see its output");
	return 2;
}}

/* The receiving side listens (port 0: any, printed), the sending side connects (retried for 60 s). */
static int pair_connect(int argc, char **argv, int listening)
{{
	if (listening) {{
		int port = argc > 1 ? atoi(argv[1]) : {port_default}, one = 1;
		int server = socket(AF_INET, SOCK_STREAM, 0);
		struct sockaddr_in at = {{ .sin_family = AF_INET, .sin_port = htons((uint16_t)port) }};
		socklen_t size = sizeof(at);
		setsockopt(server, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (server < 0 || bind(server, (struct sockaddr *)&at, sizeof(at)) || listen(server, 1)
			|| getsockname(server, (struct sockaddr *)&at, &size)) {{
			perror("listen");
			return -1;
		}}
		printf("LISTENING %d\\n", ntohs(at.sin_port));
		fflush(stdout);
		int fd = accept(server, NULL, NULL);
		close(server);
		return fd;
	}}
	if (argc < 2) {{
		fprintf(stderr, "usage: %s RECEIVER_HOST [PORT]\\n", argv[0]);
		return -1;
	}}
	struct addrinfo hints = {{ .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }}, *found;
	if (getaddrinfo(argv[1], argc > 2 ? argv[2] : "{port_default}", &hints, &found)) {{
		fprintf(stderr, "cannot resolve %s\\n", argv[1]);
		return -1;
	}}
	for (int tries = 0; tries < 600; tries++, usleep(100000))
		for (struct addrinfo *a = found; a; a = a->ai_next) {{
			int fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
			if (fd >= 0 && !connect(fd, a->ai_addr, a->ai_addrlen))
				return fd;
			if (fd >= 0)
				close(fd);
		}}
	perror("connect");
	return -1;
}}

int main(int argc, char **argv)
{{
	alarm(120); /* a provider or an end that never answers ends the program instead of hanging it */
	struct ibv_device **list = ibv_get_device_list(NULL);
{opened}
""".replace("{port_default}", str(PORT))

# The receiving side opens the connection with its GID and LID, which the sending side addresses.
RECEIVER_HELLO = """	int sock = pair_connect(argc, argv, 1);
	if (sock < 0) return 2;
	union ibv_gid my_gid;
	struct ibv_port_attr my_port;
	memset(&my_gid, 0, sizeof(my_gid));
	if (ibv_query_gid(peer_ctx, {port}, {gid_index}, &my_gid) || ibv_query_port(peer_ctx, {port}, &my_port)) {{
		perror("ibv_query_gid/ibv_query_port (peer)");
		return 2;
	}}
	uint64_t hello[3];
	memcpy(hello, my_gid.raw, 16);
	hello[2] = my_port.lid;
	if (give_turn(sock, hello, 3)) return lost();
"""

SENDER_HELLO = """	int sock = pair_connect(argc, argv, 0);
	if (sock < 0) return 2;
	union ibv_gid peer_gid;
	if (take_turn(sock, (int[]){{0, 1, 2}}, 3)) return lost();
	memcpy(peer_gid.raw, got, 16);
	uint16_t peer_lid = (uint16_t)got[2];
	(void)peer_gid;
	(void)peer_lid;
"""
