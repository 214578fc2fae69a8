"""Read what a Mach-O file (a macOS program or library) needs, in pure Python, on any OS.

    python packaging/macho.py FILE...

prints, per architecture in each file, the minimum macOS version, the libraries it
links and how many symbols it leaves to be looked up at run time. The macOS build
derives the bundle's `LSMinimumSystemVersion` from the binaries it carries with
`required_macos` (packaging/draftdeck.spec, before BUNDLE signs) and checks the
finished .app with `check_info_plist` (packaging/finish.py).

A thin file holds one architecture; a fat (universal) file starts with a table of
slices, each a thin file. The minimum macOS version is the `minos` of the
LC_BUILD_VERSION command for the macOS platform or, in older binaries, the version
of LC_VERSION_MIN_MACOSX.
"""

from __future__ import annotations

import io
import os
import plistlib
import struct
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

Version = tuple[int, int, int]

FAT_MAGIC, FAT_MAGIC_64 = 0xCAFEBABE, 0xCAFEBABF  # always stored big-endian
MH_MAGIC, MH_MAGIC_64 = 0xFEEDFACE, 0xFEEDFACF  # stored in the slice's own byte order
# Java class files also start with 0xCAFEBABE; their version (45 and up) sits where
# a fat header keeps its slice count. Universal files have a handful of slices.
MAX_FAT_SLICES = 44

LC_SYMTAB = 0x2
LC_DYSYMTAB = 0xB
LC_LOAD_DYLIB = 0xC
LC_LOAD_WEAK_DYLIB = 0x80000018
LC_REEXPORT_DYLIB = 0x8000001F
LC_LAZY_LOAD_DYLIB = 0x20
LC_LOAD_UPWARD_DYLIB = 0x80000023
LC_VERSION_MIN_MACOSX = 0x24
LC_BUILD_VERSION = 0x32
DYLIB_COMMANDS = frozenset(
    {LC_LOAD_DYLIB, LC_LOAD_WEAK_DYLIB, LC_REEXPORT_DYLIB, LC_LAZY_LOAD_DYLIB, LC_LOAD_UPWARD_DYLIB}
)
PLATFORM_MACOS = 1
MH_TWOLEVEL = 0x80
DYNAMIC_LOOKUP_ORDINAL = 0xFE  # an undefined symbol linked with -undefined dynamic_lookup

CPU_ARCH_ABI64 = 0x01000000
CPU_TYPES = {7: "i386", 7 | CPU_ARCH_ABI64: "x86_64", 12: "arm", 12 | CPU_ARCH_ABI64: "arm64"}
CPU_TYPES[18], CPU_TYPES[18 | CPU_ARCH_ABI64] = "ppc", "ppc64"

# Apple Silicon Macs shipped with macOS 11: an arm64 app never needs to ask for less.
APPLE_SILICON_FIRST_MACOS: Version = (11, 0, 0)


class NotMachO(ValueError):
    """The file does not start like a Mach-O file."""


class BadMachO(ValueError):
    """The file starts like a Mach-O file but is truncated or inconsistent."""


@dataclass(frozen=True)
class Slice:
    """One architecture of a Mach-O file."""

    arch: str  # "arm64", "x86_64", ... ("cpu 0x..." for others)
    minimum_macos: Version | None  # None: the file names no minimum
    dylibs: tuple[str, ...]  # the libraries it links, as written (@rpath/..., /usr/lib/...)
    # Undefined symbols that the loader looks up in everything already loaded, with no
    # library named (linked with -undefined dynamic_lookup, as Python extensions are).
    # None unless read_macho(..., symbols=True).
    run_time_lookups: tuple[str, ...] | None = None


def format_version(version: Version) -> str:
    """`(14, 0, 0)` -> "14.0", `(10, 13, 2)` -> "10.13.2"."""
    major, minor, patch = version
    return f"{major}.{minor}" + (f".{patch}" if patch else "")


def _version(encoded: int) -> Version:  # xxxx.yy.zz in nibbles
    return (encoded >> 16, (encoded >> 8) & 0xFF, encoded & 0xFF)


def _kind(head: bytes) -> str | None:
    """ "fat", "thin" or None (not Mach-O), from a file's first 8 bytes."""
    if len(head) < 8:
        return None
    magic, count = struct.unpack(">II", head[:8])
    if magic in (FAT_MAGIC, FAT_MAGIC_64):
        return "fat" if 0 < count <= MAX_FAT_SLICES else None
    if magic in (MH_MAGIC, MH_MAGIC_64) or struct.unpack("<I", head[:4])[0] in (
        MH_MAGIC,
        MH_MAGIC_64,
    ):
        return "thin"
    return None


def is_macho(path: str | os.PathLike[str]) -> bool:
    """Whether the file starts like a Mach-O file (thin or fat)."""
    with open(path, "rb") as file:
        return _kind(file.read(8)) is not None


def _read(file: BinaryIO, offset: int, size: int) -> bytes:
    file.seek(offset)
    data = file.read(size)
    if len(data) != size:
        raise BadMachO(f"truncated: {size} bytes needed at offset {offset}, the file ends first")
    return data


def _arch(cputype: int) -> str:
    return CPU_TYPES.get(cputype, f"cpu 0x{cputype & 0xFFFFFFFF:x}")


def _undefined(
    file: BinaryIO, start: int, end: int, order: str, wide: bool, symtab: bytes, dysymtab: bytes
) -> list[tuple[str, int]]:
    """The undefined symbols of a slice: (name, library ordinal)."""
    symoff, nsyms, stroff, strsize = struct.unpack_from(order + "IIII", symtab, 8)
    iundef, nundef = struct.unpack_from(order + "II", dysymtab, 24)
    entry = 16 if wide else 12
    if iundef + nundef > nsyms or start + symoff + nsyms * entry > end:
        raise BadMachO("the symbol table runs past the end of the file")
    if start + stroff + strsize > end:
        raise BadMachO("the string table runs past the end of the file")
    table = _read(file, start + symoff + iundef * entry, nundef * entry)
    strings = _read(file, start + stroff, strsize)
    found = []
    for i in range(nundef):
        strx, _type, _sect, desc = struct.unpack_from(order + "IBBH", table, i * entry)
        name = strings[strx:].split(b"\0", 1)[0].decode("utf-8", "replace")
        found.append((name, (desc >> 8) & 0xFF))
    return found


def _slice(file: BinaryIO, start: int, length: int, symbols: bool) -> Slice:
    head = _read(file, start, 28)
    order = "<" if struct.unpack("<I", head[:4])[0] in (MH_MAGIC, MH_MAGIC_64) else ">"
    magic, cputype, _sub, _filetype, ncmds, sizeofcmds, flags = struct.unpack(
        order + "IiiIIII", head
    )
    if magic not in (MH_MAGIC, MH_MAGIC_64):
        raise BadMachO(f"no Mach-O header at offset {start}")
    wide = magic == MH_MAGIC_64
    header_size = 32 if wide else 28
    if header_size + sizeofcmds > length:
        raise BadMachO(f"{_arch(cputype)}: the load commands run past the end of the file")
    commands = _read(file, start + header_size, sizeofcmds)
    minimum: Version | None = None
    dylibs: list[str] = []
    symtab = dysymtab = b""
    pos = 0
    for index in range(ncmds):
        if pos + 8 > sizeofcmds:
            raise BadMachO(f"{_arch(cputype)}: load command {index} runs past the header")
        cmd, size = struct.unpack_from(order + "II", commands, pos)
        if size < 8 or pos + size > sizeofcmds:
            raise BadMachO(f"{_arch(cputype)}: load command {index} has a bad size ({size})")
        body = commands[pos : pos + size]
        found: Version | None = None
        if cmd == LC_BUILD_VERSION and size >= 24:
            platform, minos = struct.unpack_from(order + "II", body, 8)
            found = _version(minos) if platform == PLATFORM_MACOS else None
        elif cmd == LC_VERSION_MIN_MACOSX and size >= 16:
            found = _version(struct.unpack_from(order + "I", body, 8)[0])
        elif cmd in DYLIB_COMMANDS and size >= 24:
            name_at = struct.unpack_from(order + "I", body, 8)[0]
            if not 24 <= name_at < size:
                raise BadMachO(f"{_arch(cputype)}: load command {index} has a bad name offset")
            dylibs.append(body[name_at:].split(b"\0", 1)[0].decode("utf-8", "replace"))
        elif cmd == LC_SYMTAB and size >= 24:
            symtab = body
        elif cmd == LC_DYSYMTAB and size >= 80:
            dysymtab = body
        if found is not None and (minimum is None or found > minimum):
            minimum = found
        pos += size
    lookups: tuple[str, ...] | None = None
    if symbols:
        undefined = []
        if symtab and dysymtab:
            undefined = _undefined(file, start, start + length, order, wide, symtab, dysymtab)
        # A flat-namespace file looks every undefined symbol up at run time.
        flat = not flags & MH_TWOLEVEL
        lookups = tuple(n for n, lib in undefined if flat or lib == DYNAMIC_LOOKUP_ORDINAL)
    return Slice(_arch(cputype), minimum, tuple(dylibs), lookups)


def _parse(file: BinaryIO, size: int, symbols: bool) -> list[Slice]:
    file.seek(0)
    head = file.read(8)
    kind = _kind(head)
    if kind is None:
        raise NotMachO(f"not a Mach-O file (it starts with {head[:4].hex() or 'nothing'})")
    if kind == "thin":
        return [_slice(file, 0, size, symbols)]
    magic, count = struct.unpack(">II", head)
    entry = 20 if magic == FAT_MAGIC else 32
    table = _read(file, 8, count * entry)
    slices = []
    for index in range(count):
        if magic == FAT_MAGIC:
            cputype, _sub, offset, length, _align = struct.unpack_from(
                ">iiIII", table, index * entry
            )
        else:
            cputype, _sub, offset, length, _align, _reserved = struct.unpack_from(
                ">iiQQII", table, index * entry
            )
        if offset + length > size:
            raise BadMachO(f"slice {index} ({_arch(cputype)}) runs past the end of the file")
        if _read(file, offset, 8) == b"!<arch>\n":  # Qt's wheels carry some
            raise NotMachO("a universal static library (ar archives), not a loadable file")
        piece = _slice(file, offset, length, symbols)
        if piece.arch != _arch(cputype):
            raise BadMachO(f"slice {index}: the table says {_arch(cputype)}, it is {piece.arch}")
        slices.append(piece)
    return slices


def read_macho(source: str | os.PathLike[str] | bytes, *, symbols: bool = False) -> list[Slice]:
    """The slices of a Mach-O file (one for a thin file), from its path or bytes.

    Raises NotMachO for anything else and BadMachO for a truncated or broken one.
    With symbols=True, each slice also lists its run-time looked-up symbols.
    """
    if isinstance(source, bytes):
        return _parse(io.BytesIO(source), len(source), symbols)
    with open(source, "rb") as file:
        return _parse(file, os.fstat(file.fileno()).st_size, symbols)


def minimum_macos(slices: list[Slice], arch: str | None = None) -> Version | None:
    """The highest minimum among the slices (those of `arch` only, when given)."""
    found = [s.minimum_macos for s in slices if s.minimum_macos and arch in (None, s.arch)]
    return max(found) if found else None


@dataclass(frozen=True)
class AppMinimum:
    """What the Mach-O files of an app need, for one architecture."""

    version: Version | None  # the highest minimum macOS of any file; None: none names one
    forced_by: Path | None  # the first file (in path order) that needs `version`
    files: int  # Mach-O files read
    without_arch: tuple[Path, ...]  # Mach-O files with no slice for the architecture


def app_minimum(app: Path, arch: str | None = None) -> AppMinimum:
    """Read every Mach-O file under `app` (found by content, not name; symlinks skipped).

    With `arch`, only that architecture's slices count, and files lacking it are listed.
    """
    best: Version | None = None
    forced_by: Path | None = None
    files = 0
    without: list[Path] = []
    for path in sorted(app.rglob("*")):
        if path.is_symlink() or not path.is_file() or not is_macho(path):
            continue
        try:
            slices = read_macho(path)
        except NotMachO:  # a universal static library
            continue
        except BadMachO as exc:
            raise BadMachO(f"{path}: {exc}") from None
        files += 1
        if arch is not None and all(s.arch != arch for s in slices):
            without.append(path)
            continue
        found = minimum_macos(slices, arch)
        if found is not None and (best is None or found > best):
            best, forced_by = found, path
    return AppMinimum(best, forced_by, files, tuple(without))


def parse_version(text: str) -> Version:
    """ "14.0" -> (14, 0, 0); ValueError for anything but one to three numbers."""
    parts = [int(part) for part in text.strip().split(".")]
    if not 1 <= len(parts) <= 3 or any(part < 0 for part in parts):
        raise ValueError(f"not a version: {text!r}")
    major, minor, patch = (*parts, 0, 0)[:3]
    return (major, minor, patch)


def required_macos(folder: Path, arch: str) -> tuple[Version, str]:
    """The LSMinimumSystemVersion an app folder needs for `arch`: the highest minimum of
    its Mach-O files, never below 11.0 (the first macOS of Apple Silicon Macs). Also a
    report naming the file that forces it and the files lacking `arch`."""
    found = app_minimum(folder, arch)
    version = max(found.version or APPLE_SILICON_FIRST_MACOS, APPLE_SILICON_FIRST_MACOS)
    if found.forced_by is not None and version == found.version:
        why = f"{found.forced_by.relative_to(folder)} needs it"
    else:
        why = "no file needs more"
    lines = [
        f"LSMinimumSystemVersion {format_version(version)}: {why} "
        f"({found.files} Mach-O files read for {arch})"
    ]
    if found.without_arch:
        names = ", ".join(str(p.relative_to(folder)) for p in found.without_arch[:5])
        more = len(found.without_arch) - 5
        lines.append(
            f"warning: {len(found.without_arch)} Mach-O files have no {arch} code, "
            f"so they cannot load: {names}" + (f" and {more} more" if more > 0 else "")
        )
    return version, "\n".join(lines)


def check_info_plist(bundle: Path, arch: str) -> str:
    """Compare a built .app's LSMinimumSystemVersion with what its binaries need.

    Returns the report of `required_macos`; raises ValueError when the Info.plist asks
    for less (the app would start on a macOS where its libraries cannot load) or names
    no valid version.
    """
    needed, report = required_macos(bundle, arch)
    with open(bundle / "Contents" / "Info.plist", "rb") as file:
        stated = plistlib.load(file).get("LSMinimumSystemVersion")
    if not isinstance(stated, str):
        raise ValueError(f"{bundle}: Info.plist has no LSMinimumSystemVersion\n{report}")
    if parse_version(stated) < needed:
        raise ValueError(
            f"{bundle}: Info.plist says macOS {stated}, its binaries need "
            f"{format_version(needed)}\n{report}"
        )
    return report


def describe(path: str) -> list[str]:
    """What `python packaging/macho.py FILE` prints for one file."""
    try:
        slices = read_macho(path, symbols=True)
    except (NotMachO, BadMachO, OSError) as exc:
        return [f"{path}: {exc}"]
    lines = [f"{path}: {'fat, ' if len(slices) > 1 else ''}{len(slices)} architecture(s)"]
    for s in slices:
        needs = format_version(s.minimum_macos) + "+" if s.minimum_macos else "no minimum given"
        lookups = s.run_time_lookups or ()
        other = [n for n in lookups if not n.startswith(("_Py", "__Py"))]
        named = ", ".join(other[:3]) + (", ..." if len(other) > 3 else "")
        lines.append(f"  {s.arch}: macOS {needs}")
        lines.append(f"    links: {', '.join(s.dylibs) or 'nothing'}")
        lines.append(
            f"    looked up at run time: {len(lookups)} symbols "
            f"({len(lookups) - len(other)} Python's, {len(other)} others"
            + (f": {named})" if other else ")")
        )
    return lines


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    for path in argv:
        print("\n".join(describe(path)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
