"""Seeded payloads: the same bytes from the same seed, in Python and in a reproducer's C.

A data-path check fills its source buffer with `payload(seed, size)` and compares what arrived
byte for byte; the seed is in the check's record, and `C_FILL` regenerates the bytes in a C
reproducer. A linear congruential generator, not Python's random: both languages must agree.
"""

from __future__ import annotations

MULTIPLIER, INCREMENT, MODULUS = 1103515245, 12345, 1 << 31


def payload(seed: int, size: int) -> bytes:
    out = bytearray(size)
    state = seed % MODULUS
    for index in range(size):
        state = (state * MULTIPLIER + INCREMENT) % MODULUS
        out[index] = (state >> 16) & 0xFF
    return bytes(out)


# Fills `buf` (unsigned char *) with `size` bytes from `seed`, as payload() does.
C_FILL = (
    "for (unsigned long s = {seed}UL % 2147483648UL, i = 0; i < {size}; i++) "
    "{{ s = (s * 1103515245UL + 12345UL) % 2147483648UL; ((unsigned char *){buf})[i] = (s >> 16) & 0xff; }}"
)
