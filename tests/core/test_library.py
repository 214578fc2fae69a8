"""The library: scanning, adding by reference, importing zips safely, removing."""

from __future__ import annotations

import json
import os
import sys
import threading
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.infra import errors
from app.core.infra.settings import Settings, load_settings, save_settings
from app.core.pack.files import SOURCE_FILE, PackSource, installed_source
from app.core.pack.library import ImportCancelled, Library

Copy = Callable[..., Path]


@pytest.fixture
def library() -> Library:
    return Library(load_settings(), save_settings)


def _zip_folder(folder: Path, archive: Path, prefix: str) -> Path:
    with zipfile.ZipFile(archive, "w") as zf:
        for file in sorted(folder.rglob("*")):
            if file.is_file():
                zf.write(file, prefix + file.relative_to(folder).as_posix())
    return archive


def test_empty_library_scans_to_nothing(library: Library) -> None:
    assert library.scan() == []


def test_scan_reads_packs_in_the_library_folder(library: Library, bundle_copy: Copy) -> None:
    bundle_copy("qwen3-target", library.root / "qwen3-target")
    broken = bundle_copy("qwen3-draft-noisy", library.root / "broken")
    (broken / "llm.mnn").unlink()
    (library.root / ".staging-leftover").mkdir()
    entries = library.scan()
    assert [e.name for e in entries] == ["broken", "qwen3-target"]
    assert entries[1].ok and entries[1].status == "ok"
    assert not entries[0].ok
    assert entries[0].error is not None and entries[0].error.code == "missing_file"
    assert "model graph is missing" in entries[0].status


def test_status_names_the_file_at_fault(library: Library, bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-target", library.root / "no-llm-config")
    (pack / "llm_config.json").unlink()
    (entry,) = library.scan()
    assert entry.status == "llm_config.json: file not found"


def test_pack_size_counts_only_the_packs_own_files(library: Library, bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-draft-noisy", library.root / "draft")
    (before,) = library.scan()
    assert before.info is not None
    # What DraftDeck keeps in the folder: backups, kept edits, originals, the source.
    (pack / "config.json.bak").write_bytes(b"x" * 1000)
    (pack / "config_cpu.json.before-update").write_bytes(b"x" * 1000)
    (pack / ".draftdeck-original").mkdir()
    (pack / ".draftdeck-original" / "config.json").write_bytes(b"x" * 1000)
    (pack / SOURCE_FILE).write_text(json.dumps({"repo": "someone/draft"}))
    (after,) = library.scan()
    assert after.info is not None and after.info.size_bytes == before.info.size_bytes
    on_disk = sum(f.stat().st_size for f in pack.rglob("*") if f.is_file())
    assert on_disk > after.info.size_bytes  # the files are there; they are not counted


def test_add_folder_by_reference_is_persisted(library: Library, bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-draft-noisy")
    added = library.add_folder(pack)
    assert [e.path for e in added] == [pack.resolve()]
    assert added[0].by_reference
    # A fresh load of the settings sees the reference.
    again = Library(load_settings(), save_settings)
    assert [e.path for e in again.scan()] == [pack.resolve()]
    with pytest.raises(errors.AlreadyExistsError):
        library.add_folder(pack)


def test_add_folder_of_packs_adds_each(library: Library, bundle_copy: Copy, tmp_path: Path) -> None:
    parent = tmp_path / "many"
    bundle_copy("qwen3-target", parent / "a")
    bundle_copy("qwen35-draft", parent / "b")
    (parent / "notes").mkdir()
    added = library.add_folder(parent)
    assert sorted(e.name for e in added) == ["a", "b"]


def test_add_folder_without_pack_is_refused(library: Library, tmp_path: Path) -> None:
    with pytest.raises(errors.NotABundleError, match="no MNN bundle"):
        library.add_folder(tmp_path)


def test_remove_reference_keeps_the_folder(library: Library, bundle_copy: Copy) -> None:
    pack = bundle_copy()
    (entry,) = library.add_folder(pack)
    library.remove(entry)
    assert library.scan() == []
    assert (pack / "llm.mnn").is_file()
    assert load_settings().references == []


def test_remove_installed_pack_deletes_it(library: Library, bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-target", library.root / "qwen3-target")
    (entry,) = library.scan()
    library.remove(entry)
    assert not pack.exists()
    assert os.listdir(library.root) == []


def test_import_zip_with_top_folder(
    library: Library, fixture_bundle: Callable[[str], Path], tmp_path: Path
) -> None:
    archive = _zip_folder(fixture_bundle("qwen3-draft-noisy"), tmp_path / "pack.zip", "noisy/")
    entry = library.import_zip(archive)
    assert entry.ok and entry.path == library.root / "noisy"
    assert not entry.by_reference
    assert [e.name for e in library.scan()] == ["noisy"]


def test_import_flat_zip_uses_archive_name(
    library: Library, fixture_bundle: Callable[[str], Path], tmp_path: Path
) -> None:
    archive = _zip_folder(fixture_bundle("qwen3-target"), tmp_path / "my-pack.zip", "")
    assert library.import_zip(archive).path == library.root / "my-pack"
    with pytest.raises(errors.AlreadyExistsError):
        library.import_zip(archive)


@pytest.mark.parametrize(
    "hostile",
    ["../evil.txt", "/abs/evil.txt", "pack/../../evil.txt", "C:/evil.txt", "a\\..\\..\\e"],
)
def test_import_zip_refuses_escaping_entries(
    library: Library, tmp_path: Path, hostile: str
) -> None:
    archive = tmp_path / "hostile.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("pack/config.json", "{}")
        zf.writestr(hostile, "gotcha")
    with pytest.raises(errors.UnsafeArchiveError, match="outside the pack"):
        library.import_zip(archive)
    assert not (tmp_path / "evil.txt").exists()
    assert not library.root.exists() or os.listdir(library.root) == []


def test_import_zip_refuses_symlinks(library: Library, tmp_path: Path) -> None:
    archive = tmp_path / "link.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("pack/config.json", "{}")
        link = zipfile.ZipInfo("pack/llm.mnn")
        link.external_attr = 0o120777 << 16
        zf.writestr(link, "/etc/passwd")
    with pytest.raises(errors.UnsafeArchiveError, match="symbolic link"):
        library.import_zip(archive)


def test_import_zip_without_bundle_leaves_nothing(library: Library, tmp_path: Path) -> None:
    archive = tmp_path / "photos.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("holiday/a.jpg", b"\xff\xd8")
    with pytest.raises(errors.NotABundleError, match="no MNN bundle"):
        library.import_zip(archive)
    assert os.listdir(library.root) == []


def test_import_damaged_zip(library: Library, tmp_path: Path) -> None:
    archive = tmp_path / "bad.zip"
    archive.write_bytes(b"PK\x03\x04 this is not really a zip")
    with pytest.raises(errors.UnreadableFileError, match="not a readable zip"):
        library.import_zip(archive)


def test_cleanup_staging_removes_interrupted_work(library: Library) -> None:
    (library.root / ".staging-abc").mkdir(parents=True)
    (library.root / ".deleting-old").mkdir()
    (library.root / "keep").mkdir()
    library.cleanup_staging()
    assert os.listdir(library.root) == ["keep"]


def test_settings_survive_a_broken_file(draftdeck_home: Path) -> None:
    settings = Settings(references=["/somewhere"])
    save_settings(settings)
    path = draftdeck_home / "config" / "settings.json"
    assert load_settings().references == ["/somewhere"]
    path.write_text("{ not json")
    assert load_settings() == Settings()
    # The unreadable file is set aside, not lost.
    assert (path.parent / "settings.json.broken").read_text() == "{ not json"


def test_settings_ignore_values_of_the_wrong_type(draftdeck_home: Path) -> None:
    path = draftdeck_home / "config" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"version": 1, "references": "oops", "last_page": 3, "library_dir": "/x"}')
    settings = load_settings()
    assert settings.references == []
    assert settings.last_page == "library"
    assert settings.library_dir == "/x"


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        (
            {"repo": "a/b", "revision": "abc", "endpoint": "https://hf.co", "files": []},
            PackSource(repo="a/b", revision="abc", endpoint="https://hf.co"),
        ),
        ({"repo": "a/b", "revision": 7}, PackSource(repo="a/b")),
        ({"revision": "abc"}, None),
        (["a/b"], None),
    ],
)
def test_installed_source_reads_the_record_by_shape(
    tmp_path: Path, record: object, expected: PackSource | None
) -> None:
    assert installed_source(tmp_path) is None  # not downloaded by DraftDeck
    (tmp_path / SOURCE_FILE).write_text(json.dumps(record), encoding="utf-8")
    assert installed_source(tmp_path) == expected


# -- hostile zips and names (issue 18) -------------------------------------------------------


@pytest.mark.parametrize("top", [".hidden", ".staging-abc"])
def test_zip_with_a_dot_folder_stays_visible(
    library: Library, bundle_copy: Copy, tmp_path: Path, top: str
) -> None:
    archive = _zip_folder(bundle_copy("qwen3-target"), tmp_path / "dot.zip", f"{top}/")
    entry = library.import_zip(archive)
    assert not entry.name.startswith(".")
    library.cleanup_staging()  # what the next start does
    assert [e.name for e in library.scan()] == [entry.name]


def _patch_zip(archive: Path, local_at: int, central_at: int, value: int) -> None:
    """Set a 16-bit field of every local and central header (real zips, edited bytes)."""
    data = bytearray(archive.read_bytes())
    for signature, at in ((b"PK\x03\x04", local_at), (b"PK\x01\x02", central_at)):
        start = data.find(signature)
        while start != -1:
            data[start + at : start + at + 2] = value.to_bytes(2, "little")
            start = data.find(signature, start + 4)
    archive.write_bytes(bytes(data))


def test_encrypted_zip_gets_its_own_message(
    library: Library, bundle_copy: Copy, tmp_path: Path
) -> None:
    archive = _zip_folder(bundle_copy("qwen3-target"), tmp_path / "locked.zip", "p/")
    _patch_zip(archive, 6, 8, 1)  # general purpose flag: encrypted
    with pytest.raises(errors.UnreadableFileError, match="password-protected") as caught:
        library.import_zip(archive)
    assert caught.value.path == archive
    assert not library.root.exists() or not any(library.root.iterdir())


def test_unsupported_compression_gets_its_own_message(
    library: Library, bundle_copy: Copy, tmp_path: Path
) -> None:
    archive = _zip_folder(bundle_copy("qwen3-target"), tmp_path / "zstd.zip", "p/")
    _patch_zip(archive, 8, 10, 93)
    with pytest.raises(errors.UnreadableFileError, match="Zstandard") as caught:
        library.import_zip(archive)
    assert caught.value.path == archive


def test_zip_bomb_is_refused_before_unpacking(library: Library, tmp_path: Path) -> None:
    archive = tmp_path / "bomb.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("p/config.json", "{}")
        with zf.open("p/llm.mnn.weight", "w") as out:
            for _ in range(100):
                out.write(bytes(1 << 20))
    with pytest.raises(errors.UnsafeArchiveError, match="100:1"):
        library.import_zip(archive)
    assert not library.root.exists() or not any(library.root.iterdir())


def test_zip_that_would_not_fit_is_refused(
    library: Library, bundle_copy: Copy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = _zip_folder(bundle_copy("qwen3-target"), tmp_path / "big.zip", "p/")
    # No disk can be filled here: ask for more spare room than any disk has instead.
    monkeypatch.setattr("app.core.pack.zip_unpack.FREE_SPACE_MARGIN", 1 << 62)
    with pytest.raises(errors.WriteFailedError, match="not enough free space"):
        library.import_zip(archive)


def test_import_reports_progress_and_can_be_cancelled(
    library: Library, bundle_copy: Copy, tmp_path: Path
) -> None:
    archive = _zip_folder(bundle_copy("qwen3-target"), tmp_path / "p.zip", "p/")
    seen: list[tuple[int, int]] = []
    library.import_zip(archive, progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1][0] == seen[-1][1] > 0
    library.remove(library.scan()[0])

    stop = threading.Event()

    def cancel_at_first_chunk(done: int, total: int) -> None:
        stop.set()

    with pytest.raises(ImportCancelled):
        library.import_zip(archive, progress=cancel_at_first_chunk, cancel=stop)
    assert not any(library.root.iterdir())  # no pack, no staging left


@pytest.mark.skipif(sys.platform != "linux", reason="needs a file system that takes any bytes")
def test_non_utf8_folder_is_refused_and_settings_stay_saveable(
    library: Library, bundle_copy: Copy, tmp_path: Path
) -> None:
    folder = bundle_copy("qwen3-target", tmp_path / os.fsdecode(b"pack-\xff"))
    with pytest.raises(errors.UnreadableFileError, match="not valid UTF-8"):
        library.add_folder(folder)
    with pytest.raises(errors.UnreadableFileError, match="not valid UTF-8"):
        library.add_folder(folder.parent)  # found inside a folder that was added
    with pytest.raises(errors.UnreadableFileError, match="not valid UTF-8"):
        library.set_root(folder)
    assert library.settings.references == []
    save_settings(library.settings)  # still saveable
