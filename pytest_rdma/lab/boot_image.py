"""The kernel the lab VM boots: the distro's bzImage, unpacked once into the ELF vmlinux inside it.

A bzImage is a small decompressor with the real kernel compressed behind it (XZ on Debian). Under
TCG that decompressor is emulated too: about 2.5 s of every boot before the kernel prints its
first line. QEMU can instead load an uncompressed vmlinux and jump to its PVH entry point, which
kernels built with CONFIG_PVH carry as an ELF note; the kernel that runs is the same one.

So the lab unpacks the payload once per kernel, at native speed, into its cache, and boots that.
Debian's 6.12 kernels compress it with zstd, which Python's standard library reads only from 3.14:
Debian's own zstd tool unpacks those (the lab installs it). Where it cannot (lz4, no PVH note, an
image it does not recognise) it boots the bzImage as before: nothing but the boot time depends on this.
"""

from __future__ import annotations

import bz2
import lzma
import os
import struct
import subprocess
import zlib
from pathlib import Path

# The x86 boot protocol's setup header (Documentation/arch/x86/boot.rst): where the protected-mode
# code starts (after setup_sects + 1 sectors) and, from protocol 2.08, where its payload sits.
SETUP_SECTS = 0x1F1
HEADER_MAGIC = 0x202  # "HdrS"
VERSION = 0x206
PAYLOAD_OFFSET = 0x248
PAYLOAD_LENGTH = 0x24C
MIN_PROTOCOL = 0x0208

ELF_MAGIC = b"\x7fELF"
PT_NOTE = 4
XEN_ELFNOTE_PHYS32_ENTRY = 18  # the PVH entry point, in a note named "Xen"


class NotUnpackable(ValueError):
    """Why an image is booted as it is."""


def _xz(data: bytes) -> bytes:
    return lzma.LZMADecompressor().decompress(data)  # stops at the stream's end, ignoring trailing bytes


def _gzip(data: bytes) -> bytes:
    return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data)


def _bzip2(data: bytes) -> bytes:
    return bz2.BZ2Decompressor().decompress(data)


def _lzma_alone(data: bytes) -> bytes:
    return lzma.LZMADecompressor(format=lzma.FORMAT_ALONE).decompress(data)


def _zstd(data: bytes) -> bytes:
    """Debian's zstd tool. The kernel's build appends the unpacked size (le32) to every payload; the other
    decompressors stop at their stream's end, but zstd takes those 4 bytes for a frame it cannot read and
    fails, so they are cut off here and checked against what came out."""
    frame, (size,) = data[:-4], struct.unpack("<I", data[-4:].rjust(4, b"\0"))
    done = subprocess.run(
        ["zstd", "--decompress", "--stdout", "--quiet"], input=frame, capture_output=True, check=False
    )
    if done.returncode != 0:
        raise OSError(f"zstd exited {done.returncode}: {done.stderr.decode(errors='replace').strip()}")
    if len(done.stdout) & 0xFFFFFFFF != size:
        raise OSError(f"zstd gave {len(done.stdout)} bytes, the image says {size}")
    return done.stdout


# Payload magic -> decompressor. lz4 is not read (no Debian kernel uses it; Python has no lz4).
CODECS = (
    (b"\xfd7zXZ\x00", "xz", _xz),
    (b"\x1f\x8b", "gzip", _gzip),
    (b"BZh", "bzip2", _bzip2),
    (b"\x5d\x00\x00", "lzma", _lzma_alone),
    (b"\x28\xb5\x2f\xfd", "zstd", _zstd),
)


def payload(image: bytes) -> tuple[str, bytes]:
    """The compressed kernel inside a bzImage, and its compression's name (pure)."""
    if len(image) < PAYLOAD_LENGTH + 4 or image[HEADER_MAGIC : HEADER_MAGIC + 4] != b"HdrS":
        raise NotUnpackable("not a bzImage (no setup header)")
    (protocol,) = struct.unpack_from("<H", image, VERSION)
    if protocol < MIN_PROTOCOL:
        raise NotUnpackable(f"boot protocol {protocol >> 8}.{protocol & 0xFF} names no payload")
    start = (image[SETUP_SECTS] or 4) * 512 + 512  # 0 setup sectors means 4, for old loaders
    offset, length = struct.unpack_from("<II", image, PAYLOAD_OFFSET)
    data = image[start + offset : start + offset + length]
    for magic, name, _ in CODECS:
        if data.startswith(magic):
            return name, data
    raise NotUnpackable(f"payload compressed with something else than {', '.join(c[1] for c in CODECS)}")


def decompress(name: str, data: bytes) -> bytes:
    return next(codec for _, known, codec in CODECS if known == name)(data)


def has_pvh_entry(elf: bytes) -> bool:
    """Whether an ELF64 little-endian file carries the PVH entry note QEMU needs to boot it (pure)."""
    if not elf.startswith(ELF_MAGIC) or len(elf) < 64 or elf[4] != 2 or elf[5] != 1:
        return False
    (phoff,) = struct.unpack_from("<Q", elf, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
    try:
        for index in range(phnum):
            kind, _flags, offset, _vaddr, _paddr, size = struct.unpack_from("<IIQQQQ", elf, phoff + index * phentsize)
            if kind == PT_NOTE and _note_in(elf[offset : offset + size]):
                return True
    except struct.error:
        return False  # program headers past the file's end: a truncated kernel, booted as the bzImage
    return False


def _note_in(notes: bytes) -> bool:
    at = 0
    while at + 12 <= len(notes):
        namesz, descsz, kind = struct.unpack_from("<III", notes, at)
        name = notes[at + 12 : at + 12 + namesz].rstrip(b"\0")
        if name == b"Xen" and kind == XEN_ELFNOTE_PHYS32_ENTRY:
            return True
        at += 12 + (namesz + 3) // 4 * 4 + (descsz + 3) // 4 * 4
    return False


def unpacked(image: Path, release: str, cache: Path) -> Path:
    """The vmlinux of `image` in `cache` (made on first use), or NotUnpackable saying why not.

    Named by the kernel release, the image's size and its modification time, so a reinstalled
    kernel of the same release is unpacked again. Written aside and renamed into place, so a
    run that is killed meanwhile leaves no half file to boot."""
    stat = image.stat()
    target = cache / f"vmlinux-{release}-{stat.st_size}-{int(stat.st_mtime)}"
    if target.exists():
        return target
    name, data = payload(image.read_bytes())
    try:
        elf = decompress(name, data)
    except (lzma.LZMAError, zlib.error, OSError, EOFError) as exc:
        raise NotUnpackable(f"its {name} payload does not decompress: {exc}") from exc
    if not has_pvh_entry(elf):
        raise NotUnpackable("the kernel has no PVH entry point (CONFIG_PVH)")
    cache.mkdir(parents=True, exist_ok=True)
    for stale in cache.glob(f"vmlinux-{release}-*"):
        stale.unlink(missing_ok=True)  # an earlier build of this release: 60 MB each
    part = target.with_name(f".{target.name}.{os.getpid()}")
    part.write_bytes(elf)
    part.replace(target)
    return target
