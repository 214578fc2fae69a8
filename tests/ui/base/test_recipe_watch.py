"""RecipeWatch hears the chosen pair's recipes change on disk, however they are written:
renamed over (DraftDeck's atomic saves), written in place (an editor, a script), a file
added; once per save; and follows the pair chosen."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pytestqt.qtbot import QtBot

from app.core.infra.settings import Settings
from app.ui.base.pair_selection import PairSelection
from app.ui.base.recipe_watch import RecipeWatch


def _pack(root: Path, name: str) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"thread_num": 1}))
    return folder


def test_every_way_of_writing_a_recipe_is_heard(qtbot: QtBot, tmp_path: Path) -> None:
    target, draft, other = (_pack(tmp_path, n) for n in ("target", "draft", "other"))
    selection = PairSelection(Settings(), lambda _settings: None)
    selection.select(target, draft)
    watch = RecipeWatch(selection, selection)  # deleted with it, within this test
    assert watch.folders() == [target, draft]
    heard: list[bool] = []
    watch.changed.connect(lambda: heard.append(True))

    def written(write: object) -> None:
        before = len(heard)
        with qtbot.waitSignal(watch.changed):
            write()  # type: ignore[operator]
        assert len(heard) == before + 1  # one save, heard once

    # In place, then renamed over (the new file watched again), then a file added.
    written(lambda: (target / "config.json").write_text(json.dumps({"thread_num": 2})))
    temporary = draft / "config.json.tmp"

    def renamed() -> None:
        temporary.write_text(json.dumps({"thread_num": 3}))
        os.replace(temporary, draft / "config.json")

    written(renamed)
    written(lambda: (draft / "config.json").write_text(json.dumps({"thread_num": 4})))
    written(lambda: (draft / ".draftdeck-this-computer.json").write_text("{}"))
    # Another pair: its folders are watched, the old ones no longer.
    selection.select(other, draft)
    assert watch.folders() == [other, draft]
    written(lambda: (other / "config.json").write_text("{}"))
    selection.deleteLater()  # its watch with it: nothing of it outlives the test
    with qtbot.waitSignal(watch.destroyed):
        pass
