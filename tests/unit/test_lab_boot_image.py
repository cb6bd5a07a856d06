"""The lab boots the vmlinux unpacked from the distro's bzImage (lab/boot_image.py): what it unpacks,
what it refuses, and that a refusal boots the bzImage. Synthetic images; no VM booted."""

from __future__ import annotations

import gzip
import lzma
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from pytest_rdma import lab
from pytest_rdma.lab import boot_image
from pytest_rdma.lab.prereqs import Kernel


def elf(note_type: int = boot_image.XEN_ELFNOTE_PHYS32_ENTRY, note_name: bytes = b"Xen\0") -> bytes:
    """An ELF64 header with one PT_NOTE segment holding one note."""
    note = struct.pack("<III", len(note_name), 4, note_type) + note_name.ljust(4, b"\0") + b"\0\x00\x00\x01"
    header = bytearray(64)
    header[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<Q", header, 0x20, 64)  # e_phoff
    struct.pack_into("<HH", header, 0x36, 56, 1)  # e_phentsize, e_phnum
    phdr = struct.pack("<IIQQQQQQ", boot_image.PT_NOTE, 4, 64 + 56, 0, 0, len(note), len(note), 4)
    return bytes(header) + phdr + note + b"kernel text" * 10


def bzimage(compressed: bytes, protocol: int = 0x020F) -> bytes:
    """A setup sector with its header, one more setup sector, then the protected-mode code: a stub
    decompressor and the payload that the header points to."""
    image = bytearray(1024)
    image[boot_image.SETUP_SECTS] = 1
    image[boot_image.HEADER_MAGIC : boot_image.HEADER_MAGIC + 4] = b"HdrS"
    struct.pack_into("<H", image, boot_image.VERSION, protocol)
    stub = b"decompressor" * 8
    struct.pack_into("<II", image, boot_image.PAYLOAD_OFFSET, len(stub), len(compressed))
    return bytes(image) + stub + compressed + b"trailing"


def with_size(compressed: bytes, data: bytes) -> bytes:
    """A payload as the kernel's build makes it: the compressed kernel, then its unpacked size (le32)."""
    return compressed + struct.pack("<I", len(data))


def zstd(data: bytes) -> bytes:
    if shutil.which("zstd") is None:
        pytest.skip("Debian's zstd is not installed here (the lab installs it: apt-get install zstd)")
    return subprocess.run(["zstd", "--stdout", "--quiet"], input=data, capture_output=True, check=True).stdout


def write(tmp_path: Path, data: bytes) -> Path:
    image = tmp_path / "vmlinuz-6.1.0-56-amd64"
    image.write_bytes(data)
    return image


@pytest.mark.parametrize("compress", [lzma.compress, gzip.compress, zstd], ids=["xz", "gzip", "zstd"])
def test_the_payload_is_unpacked_once_into_the_cache(tmp_path: Path, compress) -> None:
    kernel = elf()
    image = write(tmp_path, bzimage(with_size(compress(kernel), kernel)))
    cache = tmp_path / "cache"
    unpacked = boot_image.unpacked(image, "6.1.0-56-amd64", cache)
    assert unpacked.read_bytes() == kernel
    assert unpacked.parent == cache and unpacked.name.startswith("vmlinux-6.1.0-56-amd64-")
    unpacked.write_bytes(b"cached")  # a second run takes the cached file as it is
    assert boot_image.unpacked(image, "6.1.0-56-amd64", cache).read_bytes() == b"cached"
    assert [p.name for p in cache.iterdir()] == [unpacked.name]  # nothing written aside is left


def test_a_reinstalled_kernel_of_the_same_release_replaces_the_old_unpacking(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    image = write(tmp_path, bzimage(lzma.compress(elf())))
    old = boot_image.unpacked(image, "6.1.0-56-amd64", cache)
    image.write_bytes(bzimage(lzma.compress(elf() + b"rebuilt")))
    new = boot_image.unpacked(image, "6.1.0-56-amd64", cache)
    assert new != old and not old.exists() and new.read_bytes().endswith(b"rebuilt")


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (bzimage(lzma.compress(elf(note_type=17))), "no PVH entry point"),
        (bzimage(lzma.compress(elf(note_name=b"Linux\0"))), "no PVH entry point"),
        (bzimage(b"\x04\x22\x4d\x18" + b"lz4 frame"), "compressed with something else"),
        (bzimage(b"\x28\xb5\x2f\xfd" + b"zstd frame"), "its zstd payload does not decompress: zstd exited 1"),
        (bzimage(lzma.compress(elf()), protocol=0x0206), "names no payload"),
        (b"MZ" + bytes(2000), "not a bzImage"),
        (bzimage(b"\xfd7zXZ\x00" + b"truncated"), "does not decompress"),
        (bzimage(lzma.compress(elf()[:80])), "no PVH entry point"),
    ],
    ids=["other-note", "other-owner", "lz4", "corrupt-zstd", "old-protocol", "not-bzimage", "corrupt", "truncated-elf"],
)
def test_an_image_it_cannot_unpack_says_why(tmp_path: Path, data: bytes, why: str) -> None:
    with pytest.raises(boot_image.NotUnpackable, match=why):
        boot_image.unpacked(write(tmp_path, data), "6.1.0-56-amd64", tmp_path / "cache")
    assert not list((tmp_path / "cache").glob("*")) if (tmp_path / "cache").exists() else True


def test_a_zstd_payload_whose_size_disagrees_with_the_image_is_not_booted(tmp_path: Path) -> None:
    kernel = elf()
    image = write(tmp_path, bzimage(zstd(kernel) + struct.pack("<I", len(kernel) + 1)))
    with pytest.raises(
        boot_image.NotUnpackable, match=f"zstd gave {len(kernel)} bytes, the image says {len(kernel) + 1}"
    ):
        boot_image.unpacked(image, "6.12.117+deb12-amd64", tmp_path / "cache")


DEBIAN_612 = Path("/boot/vmlinuz-6.12.117+deb12-amd64")


@pytest.mark.skipif(not DEBIAN_612.exists(), reason=f"{DEBIAN_612} is not installed here")
def test_debian_612_zstd_image_unpacks_to_a_bootable_vmlinux(tmp_path: Path) -> None:
    """The image this was written for: Debian 12's 6.12 kernel, compressed with zstd."""
    name, _ = boot_image.payload(DEBIAN_612.read_bytes())
    unpacked = boot_image.unpacked(DEBIAN_612, "6.12.117+deb12-amd64", tmp_path)
    assert name == "zstd" and boot_image.has_pvh_entry(unpacked.read_bytes())


def test_the_lab_boots_the_bzimage_when_it_cannot_unpack_it(tmp_path: Path) -> None:
    said: list[str] = []
    kernel = Kernel("6.1.0-56-amd64", write(tmp_path, b"MZ" + bytes(2000)))
    assert lab._unpacked(kernel, tmp_path, said.append) is kernel
    assert said and "compressed" in said[0] and "not a bzImage" in said[0]
    unpackable = Kernel("6.1.0-56-amd64", write(tmp_path, bzimage(lzma.compress(elf()))))
    booted = lab._unpacked(unpackable, tmp_path, said.append)
    assert booted.release == unpackable.release and booted.image.read_bytes() == elf()
