"""A check as a dotted test path, for results databases that name tests that way (KCIDB, LAVA).

(Not named test_*: pytest would collect it.)

`test_ibv_modify_qp[forbidden-attrs-RC-INIT>RTR-with-PORT]` on rxe is
`rdma.rxe.ibv_modify_qp.forbidden_attrs.RC_INIT_RTR_with_PORT`: the driver, then the verb, the
claim and the variant, each a segment of letters, digits and `_` only. KCIDB's paths allow `-`
too, but LAVA's test case names and most dashboards read `_` better, and a segment made only of
these characters is a valid name everywhere. Sanitising a segment:

- `+` becomes `plus`, `<` becomes `lt` and `*` becomes `any` (words, so that `mtu+1` and `mtu-1`
  stay two checks);
- every other run of characters that is not a letter or a digit (`-`, `>`, `=`, `.`, `:`, spaces)
  becomes one `_`, and a segment neither starts nor ends with `_`;
- an empty segment is left out (a claim without axes has no variant).

Every check of the catalogue keeps a path of its own (tests/unit/test_kcidb.py checks it). A test
of a user's own (no verb from the catalogue) is `rdma.<driver>.<test function>.<its parameters>`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

ROOT = "rdma"
NO_DEVICE = "no_device"  # the driver segment of a check that used no device (a blocked API family)
_WORDS = {"+": "_plus_", "<": "_lt_", "*": "_any_"}
_OTHER = re.compile(r"[^A-Za-z0-9]+")


def segment(text: str) -> str:
    for character, word in _WORDS.items():
        text = text.replace(character, word)
    return _OTHER.sub("_", text).strip("_")


def check_segments(record: Mapping[str, object]) -> list[str]:
    """The check's own segments, without the root and the driver: verb, claim, variant."""
    verb = str(record.get("verb") or "")
    if verb:
        parts = [verb, str(record.get("claim") or ""), str(record.get("variant") or "")]
    else:
        # A user's own test: its stable id is the function and, in brackets, its parameters
        # without the device.
        name = str(record.get("stable_id") or record.get("test") or "test")
        function, _, parameters = name.partition("[")
        parts = [function, parameters.rstrip("]")]
    return [s for s in (segment(part) for part in parts) if s]


def driver_segment(record: Mapping[str, object]) -> str:
    return segment(str(record.get("driver") or "")) or NO_DEVICE


def dotted_path(record: Mapping[str, object]) -> str:
    """`rdma.<driver>.<verb>.<claim>.<variant>`."""
    return ".".join([ROOT, driver_segment(record), *check_segments(record)])
