"""The macOS build's checks, runnable on any OS: the Mach-O reader that derives the app's
minimum macOS version (packaging/macho.py, on Mach-O bytes made here) and the self-test's
explanation for Intel Macs. Real Mach-O files are checked by hand (packaging/README.md):
no test downloads anything."""

from __future__ import annotations

import plistlib
import struct
import sys
from pathlib import Path

import pytest

from app import self_test
from app.core.infra.errors import EngineError
from tests.helpers.paths import ROOT

sys.path.insert(0, str(ROOT / "packaging"))
import macho

ARM64, X86_64, I386 = 0x0100000C, 0x01000007, 7
MACOS, IOS = 1, 2


def command(cmd: int, body: bytes, order: str = "<") -> bytes:
    body += b"\0" * (-len(body) % 8)
    return struct.pack(order + "II", cmd, 8 + len(body)) + body


def build_version(version: tuple[int, int], platform: int = MACOS) -> bytes:
    major, minor = version
    encoded = major << 16 | minor << 8
    return command(macho.LC_BUILD_VERSION, struct.pack("<IIII", platform, encoded, 15 << 16, 0))


def version_min(version: tuple[int, int], order: str = "<") -> bytes:
    major, minor = version
    body = struct.pack(order + "II", major << 16 | minor << 8, 14 << 16)
    return command(macho.LC_VERSION_MIN_MACOSX, body, order)


def load_dylib(name: str) -> bytes:
    return command(
        macho.LC_LOAD_DYLIB, struct.pack("<IIII", 24, 2, 1 << 16, 1 << 16) + name.encode()
    )


def thin(
    cputype: int, commands: list[bytes], wide: bool = True, order: str = "<", tail: bytes = b""
) -> bytes:
    cmds = b"".join(commands)
    magic = macho.MH_MAGIC_64 if wide else macho.MH_MAGIC
    header = struct.pack(order + "IiiIIII", magic, cputype, 0, 6, len(commands), len(cmds), 0x85)
    return header + (b"\0" * 4 if wide else b"") + cmds + tail


def with_undefined_symbols(cputype: int, symbols: list[tuple[str, int]]) -> bytes:
    """A 64-bit dylib whose symbol table holds `symbols` (name, library ordinal), all
    undefined; ordinal 0xFE means looked up at run time."""
    commands = [load_dylib("/usr/lib/libSystem.B.dylib"), build_version((11, 0))]
    header_size = 32 + sum(map(len, commands)) + 24 + 80
    strings = b"\0" + b"".join(name.encode() + b"\0" for name, _ in symbols)
    table, strx = b"", 1
    for name, ordinal in symbols:
        table += struct.pack("<IBBHQ", strx, 0x01, 0, ordinal << 8, 0)  # N_UNDF | N_EXT
        strx += len(name) + 1
    symoff, stroff = header_size, header_size + len(table)
    symtab = command(
        macho.LC_SYMTAB, struct.pack("<IIII", symoff, len(symbols), stroff, len(strings))
    )
    dysymtab = command(
        macho.LC_DYSYMTAB, struct.pack("<18I", 0, 0, 0, 0, 0, len(symbols), *[0] * 12)
    )
    return thin(cputype, [*commands, symtab, dysymtab], tail=table + strings)


def fat(slices: list[tuple[int, bytes]], wide: bool = False) -> bytes:
    entry = 32 if wide else 20
    offset = 4096
    table, body = b"", b""
    for cputype, data in slices:
        if wide:
            table += struct.pack(">iiQQII", cputype, 0, offset + len(body), len(data), 12, 0)
        else:
            table += struct.pack(">iiIII", cputype, 0, offset + len(body), len(data), 12)
        body += data + b"\0" * (-len(data) % 4096)
    magic = macho.FAT_MAGIC_64 if wide else macho.FAT_MAGIC
    header = struct.pack(">II", magic, len(slices)) + table
    assert len(header) <= offset and entry
    return header + b"\0" * (offset - len(header)) + body


# -- one file --------------------------------------------------------------------------


def test_thin_64_bit_with_build_version() -> None:
    data = thin(ARM64, [load_dylib("@rpath/libMNN.dylib"), build_version((14, 0))])
    [arm] = macho.read_macho(data)
    assert arm == macho.Slice("arm64", (14, 0, 0), ("@rpath/libMNN.dylib",))
    assert macho.format_version((14, 0, 0)) == "14.0"


def test_version_min_macosx_of_older_binaries() -> None:
    [intel] = macho.read_macho(thin(X86_64, [version_min((10, 13))]))
    assert (intel.arch, intel.minimum_macos) == ("x86_64", (10, 13, 0))
    assert macho.format_version((10, 13, 2)) == "10.13.2"


def test_32_bit_and_big_endian_headers() -> None:
    [old] = macho.read_macho(thin(I386, [version_min((10, 6))], wide=False))
    assert (old.arch, old.minimum_macos) == ("i386", (10, 6, 0))
    [ppc] = macho.read_macho(thin(18, [version_min((10, 4), ">")], wide=False, order=">"))
    assert (ppc.arch, ppc.minimum_macos) == ("ppc", (10, 4, 0))


def test_other_platforms_and_no_version_give_no_minimum() -> None:
    [ios] = macho.read_macho(thin(ARM64, [build_version((17, 0), platform=IOS)]))
    assert ios.minimum_macos is None
    assert macho.read_macho(thin(ARM64, []))[0].minimum_macos is None


def test_fat_binary_with_two_slices(tmp_path: Path) -> None:
    intel = thin(X86_64, [version_min((10, 9))])
    arm = thin(ARM64, [build_version((11, 0)), load_dylib("/usr/lib/libc++.1.dylib")])
    for wide in (False, True):
        path = tmp_path / f"universal-{wide}"  # no extension: found by content
        path.write_bytes(fat([(X86_64, intel), (ARM64, arm)], wide=wide))
        assert macho.is_macho(path)
        slices = macho.read_macho(path)
        assert [(s.arch, s.minimum_macos) for s in slices] == [
            ("x86_64", (10, 9, 0)),
            ("arm64", (11, 0, 0)),
        ]
        assert slices[1].dylibs == ("/usr/lib/libc++.1.dylib",)
        assert macho.minimum_macos(slices) == (11, 0, 0)
        assert macho.minimum_macos(slices, "x86_64") == (10, 9, 0)
        assert macho.minimum_macos(slices, "ppc") is None


def test_symbols_left_to_run_time_lookup(tmp_path: Path) -> None:
    # What the Intel MNN wheels do: MNN's functions bound to no library (0xFE).
    data = with_undefined_symbols(
        X86_64,
        [("_PyLong_FromLong", 0xFE), ("__ZN3MNN10getVersionEv", 0xFE), ("_malloc", 1)],
    )
    [slice_] = macho.read_macho(data, symbols=True)
    assert slice_.run_time_lookups == ("_PyLong_FromLong", "__ZN3MNN10getVersionEv")
    assert macho.read_macho(data)[0].run_time_lookups is None  # only read when asked
    (tmp_path / "_mnncengine.so").write_bytes(data)
    lines = macho.describe(str(tmp_path / "_mnncengine.so"))
    assert lines[1:] == [
        "  x86_64: macOS 11.0+",
        "    links: /usr/lib/libSystem.B.dylib",
        "    looked up at run time: 2 symbols (1 Python's, 1 others: __ZN3MNN10getVersionEv)",
    ]


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\x7fELF\x02\x01\x01\0" + b"\0" * 64,
        b"hello, world",
        b"\xca\xfe\xba\xbe\x00\x00\x00\x34" + b"\0" * 64,  # a Java class file
        b"\xcf\xfa\xed",  # shorter than any header
    ],
)
def test_other_files_are_not_mach_o(data: bytes, tmp_path: Path) -> None:
    with pytest.raises(macho.NotMachO, match="not a Mach-O file"):
        macho.read_macho(data)
    path = tmp_path / "file.so"
    path.write_bytes(data)
    assert not macho.is_macho(path)


def test_truncated_or_broken_files_say_so() -> None:
    good = thin(ARM64, [build_version((11, 0))])
    with pytest.raises(macho.BadMachO, match="truncated"):
        macho.read_macho(good[:20])
    with pytest.raises(macho.BadMachO, match="load commands run past"):
        macho.read_macho(good[:-4])
    bad_size = bytearray(good)
    struct.pack_into("<I", bad_size, 32 + 4, 4)  # a load command 4 bytes long
    with pytest.raises(macho.BadMachO, match="bad size"):
        macho.read_macho(bytes(bad_size))
    too_many = bytearray(good)
    struct.pack_into("<I", too_many, 16, 2)  # two commands announced, one there
    with pytest.raises(macho.BadMachO, match="runs past the header"):
        macho.read_macho(bytes(too_many))
    universal = fat([(X86_64, thin(X86_64, [])), (ARM64, good)])
    with pytest.raises(macho.BadMachO, match=r"slice 1 \(arm64\) runs past the end"):
        macho.read_macho(universal[: 2 * 4096 + 20])  # into the second slice
    mislabelled = fat([(X86_64, good)])
    with pytest.raises(macho.BadMachO, match="the table says x86_64, it is arm64"):
        macho.read_macho(mislabelled)


def test_universal_static_libraries_are_not_loadable_files(tmp_path: Path) -> None:
    # PySide6's wheels carry one: a fat file whose slices are ar archives.
    archive = b"!<arch>\n" + b"\0" * 60
    data = fat([(X86_64, archive), (ARM64, archive)])
    with pytest.raises(macho.NotMachO, match="static library"):
        macho.read_macho(data)
    (tmp_path / "libplugin.a").write_bytes(data)
    (tmp_path / "lib.dylib").write_bytes(thin(ARM64, [build_version((12, 0))]))
    found = macho.app_minimum(tmp_path, "arm64")
    assert (found.version, found.files, found.without_arch) == ((12, 0, 0), 1, ())


def test_version_text() -> None:
    assert macho.parse_version("14.0") == (14, 0, 0)
    assert macho.parse_version("10.13.6") == (10, 13, 6)
    assert macho.parse_version("13") == (13, 0, 0)
    for text in ("", "eleven", "1.2.3.4", "11.-1"):
        with pytest.raises(ValueError):
            macho.parse_version(text)


# -- a whole app -------------------------------------------------------------------------


def fake_app(root: Path, plist_minimum: str) -> Path:
    """A DraftDeck.app shaped like PyInstaller's, with Mach-O files of known minimums."""
    app = root / "DraftDeck.app"
    contents = app / "Contents"
    files = {
        "MacOS/draftdeck": thin(ARM64, [build_version((11, 0))]),
        "Frameworks/libpython3.11.dylib": thin(ARM64, [build_version((11, 0))]),
        # numpy built on macOS 14 (Accelerate): the newest need.
        "Frameworks/numpy/_core/_multiarray_umath.cpython-311-darwin.so": thin(
            ARM64, [build_version((14, 0))]
        ),
        "Frameworks/PySide6/Qt/lib/QtCore.framework/Versions/A/QtCore": fat(
            [
                (X86_64, thin(X86_64, [build_version((13, 0))])),
                (ARM64, thin(ARM64, [build_version((13, 0))])),
            ]
        ),
        # An Intel-only library: needs "more", but cannot load on arm64 at all.
        "Frameworks/libintel.dylib": thin(X86_64, [build_version((15, 0))]),
        # Found by content, not by name; and files that only look like libraries.
        "Frameworks/helper": thin(ARM64, [version_min((12, 0))]),
        "Frameworks/notes.so": b"not a library",
        "Resources/base_library.zip": b"PK\x03\x04" + b"\0" * 40,
    }
    for name, data in files.items():
        path = contents / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    framework = contents / "Frameworks/PySide6/Qt/lib/QtCore.framework"
    (framework / "QtCore").symlink_to("Versions/A/QtCore")  # skipped: read once
    info = {"CFBundleName": "DraftDeck", "LSMinimumSystemVersion": plist_minimum}
    (contents / "Info.plist").write_bytes(plistlib.dumps(info))
    return app


def test_the_newest_need_of_any_binary_wins(tmp_path: Path) -> None:
    app = fake_app(tmp_path, "11.0")
    found = macho.app_minimum(app, "arm64")
    numpy = app / "Contents/Frameworks/numpy/_core/_multiarray_umath.cpython-311-darwin.so"
    assert (found.version, found.forced_by, found.files) == ((14, 0, 0), numpy, 6)
    assert found.without_arch == (app / "Contents/Frameworks/libintel.dylib",)
    assert macho.app_minimum(app).version == (15, 0, 0)  # every architecture counted

    version, report = macho.required_macos(app, "arm64")
    assert version == (14, 0, 0)
    lines = report.splitlines()
    assert lines[0] == (
        "LSMinimumSystemVersion 14.0: Contents/Frameworks/numpy/_core/"
        "_multiarray_umath.cpython-311-darwin.so needs it (6 Mach-O files read for arm64)"
    )
    assert "1 Mach-O files have no arm64 code" in lines[1]
    assert "Contents/Frameworks/libintel.dylib" in lines[1]


def test_never_below_the_first_apple_silicon_macos(tmp_path: Path) -> None:
    (tmp_path / "old").write_bytes(thin(ARM64, [version_min((10, 13))]))
    version, report = macho.required_macos(tmp_path, "arm64")
    assert version == (11, 0, 0)
    assert report.startswith("LSMinimumSystemVersion 11.0: no file needs more (1 Mach-O")


def test_the_built_apps_info_plist_is_checked(tmp_path: Path) -> None:
    (tmp_path / "low").mkdir()
    low = fake_app(tmp_path / "low", "11.0")
    with pytest.raises(ValueError, match=r"Info.plist says macOS 11.0, its binaries need 14.0"):
        macho.check_info_plist(low, "arm64")
    (tmp_path / "right").mkdir()
    right = fake_app(tmp_path / "right", "14.0")
    assert "LSMinimumSystemVersion 14.0" in macho.check_info_plist(right, "arm64")


def test_a_broken_binary_in_the_app_names_its_path(tmp_path: Path) -> None:
    (tmp_path / "lib.dylib").write_bytes(thin(ARM64, [build_version((11, 0))])[:-4])
    with pytest.raises(macho.BadMachO, match=r"lib\.dylib: .*run past the end"):
        macho.app_minimum(tmp_path, "arm64")


# -- the self-test on an Intel Mac -------------------------------------------------------


def test_intel_macs_are_recognised() -> None:
    assert self_test.macos_x86_64("darwin", "x86_64")
    assert not self_test.macos_x86_64("darwin", "arm64")
    assert not self_test.macos_x86_64("linux", "x86_64")
    assert not self_test.macos_x86_64("win32", "x86_64")


def test_the_self_test_says_why_the_engine_fails_on_an_intel_mac(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def engine_fails(folder: Path) -> str:
        # What the worker reports when `import MNN` fails to bind MNN's functions.
        raise EngineError(
            "ImportError: dlopen(_mnncengine.cpython-311-darwin.so, 0x0002): "
            "symbol not found in flat namespace '__ZN3MNN10getVersionEv'",
            "internal",
        )

    monkeypatch.setattr(self_test, "_speculate", engine_fails)
    monkeypatch.setattr(self_test, "macos_x86_64", lambda: True)
    with pytest.raises(self_test.UnsupportedPlatform) as caught:
        self_test._generate(tmp_path)
    message = str(caught.value)
    assert message.startswith("MNN 3.6.1 cannot run as x86_64 on macOS")
    assert "Apple Silicon" in message and "__ZN3MNN10getVersionEv" in message

    monkeypatch.setattr(self_test, "macos_x86_64", lambda: False)  # elsewhere: as it was
    with pytest.raises(EngineError, match="symbol not found"):
        self_test._generate(tmp_path)
