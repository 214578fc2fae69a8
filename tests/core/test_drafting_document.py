"""The drafting settings file as the Recipes page opens it: defaults without a file, a
change made elsewhere seen before anything is written, no pack folder conjured up."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.infra.errors import FileError, MissingFileError
from app.core.recipe.drafting_document import DraftingDocument
from app.core.recipe.drafting_settings import (
    DRAFTING_FILE,
    DraftingSettings,
    read_drafting,
    write_drafting,
)
from app.core.recipe.files import ChangedOnDiskError

MINE = DraftingSettings(adaptive=True, stop_below=0.25)


def test_without_a_file_the_defaults_and_a_save_creates_it(tmp_path: Path) -> None:
    doc = DraftingDocument.load(tmp_path)
    assert doc.settings == DraftingSettings() and not doc.on_disk
    assert not doc.changed_on_disk()
    doc.save(MINE)
    assert read_drafting(tmp_path) == MINE and doc.settings == MINE
    assert doc.on_disk and not doc.changed_on_disk()


def test_a_change_elsewhere_is_not_written_over_unless_asked(tmp_path: Path) -> None:
    doc = DraftingDocument.load(tmp_path)
    theirs = DraftingSettings(adaptive=False, stop_below=0.5)
    write_drafting(tmp_path, theirs)
    assert doc.changed_on_disk()
    with pytest.raises(ChangedOnDiskError) as raised:
        doc.save(MINE)
    assert raised.value.path == tmp_path / DRAFTING_FILE
    assert read_drafting(tmp_path) == theirs
    doc.save(MINE, overwrite_changes=True)
    assert read_drafting(tmp_path) == MINE


def test_a_broken_file_names_itself(tmp_path: Path) -> None:
    (tmp_path / DRAFTING_FILE).write_text('{"stop_below": 2}')
    with pytest.raises(FileError) as raised:
        DraftingDocument.load(tmp_path)
    assert raised.value.path == tmp_path / DRAFTING_FILE and "stop_below" in raised.value.problem


def test_a_pack_gone_is_not_made_again(tmp_path: Path) -> None:
    pack = tmp_path / "draft"
    pack.mkdir()
    doc = DraftingDocument.load(pack)
    pack.rmdir()
    with pytest.raises(MissingFileError):
        doc.save(MINE)
    assert not pack.exists()
