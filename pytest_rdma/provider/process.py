"""What the process running the checks may do: the facts a claim's `when` reads ("process.*").

The kernel holds a process without CAP_IPC_LOCK to its RLIMIT_MEMLOCK when it pins memory for a
registration; root is not held to it. These are facts of the process, not of the device, so a
claim that needs an unprivileged process is "not exercised" as root, never "unsupported".
"""

from __future__ import annotations

import mmap
import resource
from pathlib import Path

CAP_IPC_LOCK = 14  # linux/capability.h


def effective_capabilities(status: str | None = None) -> int:
    """The CapEff mask of this process, from /proc/self/status."""
    text = status if status is not None else Path("/proc/self/status").read_text()
    for line in text.splitlines():
        if line.startswith("CapEff:"):
            return int(line.split()[1], 16)
    return 0


def process_facts(capabilities: int | None = None, memlock: int | None = None) -> dict[str, int]:
    """`unprivileged` (1 without CAP_IPC_LOCK), `memlock` (the soft limit in bytes, 0 when unlimited) and
    `over_memlock` (one page more than the limit, 0 when unlimited: a registration that must not fit)."""
    caps = effective_capabilities() if capabilities is None else capabilities
    soft = resource.getrlimit(resource.RLIMIT_MEMLOCK)[0] if memlock is None else memlock
    limited = soft not in (resource.RLIM_INFINITY, -1)
    return {
        "unprivileged": int(not (caps >> CAP_IPC_LOCK) & 1),
        "memlock": soft if limited else 0,
        "over_memlock": soft + mmap.PAGESIZE if limited else 0,
    }
