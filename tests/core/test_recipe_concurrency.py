"""Saves of one recipe at the same time, from two processes or from the window and the
command line: each waits for the other (or, for a file opened before the other's save,
is told it changed on disk), none fails, and the file always holds one whole save. A
killed save's temporary file is still removed by the next save."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from app.core.infra.errors import FileError
from app.core.recipe.draft_recipes import save_in_step
from app.core.recipe.files import ChangedOnDiskError, RecipeDocument
from tests.helpers.cli import run_cli
from tests.helpers.paths import HELPERS, ROOT

Copy = Callable[..., Path]
RECIPE = "config_cpu.json"
ENV = dict(os.environ, PYTHONPATH=str(ROOT))


def _saver(pack: Path, tag: str, count: int) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, str(HELPERS / "save_many.py"), str(pack), tag, str(count)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        env={**ENV, "DRAFTDECK_HOME": os.environ["DRAFTDECK_HOME"]},
    )  # fmt: skip
    assert child.stdout is not None
    assert child.stdout.readline() == "ready\n"
    return child


def _errors_of(child: subprocess.Popen[str]) -> list[str]:
    assert child.stdout is not None
    errors: list[str] = json.loads(child.stdout.readline())
    assert child.wait(timeout=300) == 0
    child.stdout.close()
    return errors


def test_two_processes_saving_one_recipe_lose_no_save(bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-draft-noisy")
    shipped = json.loads((pack / RECIPE).read_text())
    count = 100
    savers = [_saver(pack, tag, count) for tag in ("a", "b")]
    for child in savers:  # both start now, each saving `count` times
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.close()
    errors = [_errors_of(child) for child in savers]
    assert errors == [[], []]
    saved = json.loads((pack / RECIPE).read_text())  # whole, and the last save's
    assert saved == {**shipped, "note": saved["note"]}
    assert saved["note"] in {f"a-{count - 1}", f"b-{count - 1}"}
    assert not list(pack.glob(f".{RECIPE}.*"))  # no temporary file left behind


@dataclass
class WindowSaves:
    """What the window's saves met: a change by the command line is told, not failed."""

    saved: list[str] = field(default_factory=list)
    changed_on_disk: int = 0
    failed: list[str] = field(default_factory=list)


def _save_as_the_window(recipe: Path, stop: threading.Event, seen: WindowSaves) -> None:
    """Save as the Recipes page does (save_in_step on the file it opened); told the file
    changed on disk, open it again (the user's Revert) and go on."""
    doc = RecipeDocument.load(recipe)
    for i in range(100_000):  # until the command line is done; the bound is a backstop
        if stop.is_set():
            return
        note = f"window-{i}"
        try:
            save_in_step(doc, [], {**doc.data, "note": note})
        except ChangedOnDiskError:
            seen.changed_on_disk += 1
            doc = RecipeDocument.load(recipe)
            continue
        except FileError as exc:
            seen.failed.append(str(exc))
            continue
        seen.saved.append(note)


def test_window_and_command_line_saving_one_recipe_never_fail(bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-draft-noisy")
    recipe = pack / RECIPE
    shipped = json.loads(recipe.read_text())
    stop, seen = threading.Event(), WindowSaves()
    window = threading.Thread(target=_save_as_the_window, args=(recipe, stop, seen))
    window.start()
    try:
        runs = [run_cli("recipe", "set", str(pack), f"note=cli-{i}") for i in range(5)]
    finally:
        stop.set()
        window.join()
    assert [(r.returncode, r.stderr) for r in runs if r.returncode != 0] == []
    assert seen.failed == []
    saved = json.loads(recipe.read_text())
    assert saved == {**shipped, "note": saved["note"]}
    assert saved["note"] in {"cli-4", *seen.saved[-1:]}


def test_a_killed_saves_temporary_file_is_removed_by_the_next_save(bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-draft-noisy")
    recipe = pack / RECIPE
    writer = subprocess.Popen(
        [sys.executable, str(HELPERS / "killed_save.py"), str(recipe)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=ENV,
    )  # fmt: skip
    assert writer.stdin is not None and writer.stdout is not None
    abandoned = pack / writer.stdout.readline().strip()
    assert abandoned.is_file()  # the writer stopped inside its write
    writer.kill()  # SIGKILL on POSIX, TerminateProcess on Windows
    writer.wait()
    writer.stdin.close()
    writer.stdout.close()
    doc = RecipeDocument.load(recipe)
    doc.save({**doc.data, "note": "saved"})
    assert not abandoned.exists()
    assert not list(pack.glob(f".{RECIPE}.*"))
    assert json.loads(recipe.read_text())["note"] == "saved"


def test_without_a_save_lock_a_save_goes_ahead_and_leaves_temporary_files(
    bundle_copy: Copy, draftdeck_home: Path
) -> None:
    pack = bundle_copy("qwen3-draft-noisy")
    recipe = pack / RECIPE
    draftdeck_home.mkdir(exist_ok=True)
    (draftdeck_home / "cache").write_text("not a folder")  # no lock file can be made
    unknown = pack / f".{RECIPE}.another-save.tmp"  # could be a save under way
    unknown.write_text("{")
    doc = RecipeDocument.load(recipe)
    doc.save({**doc.data, "note": "saved"})
    assert json.loads(recipe.read_text())["note"] == "saved"
    assert unknown.read_text() == "{"
