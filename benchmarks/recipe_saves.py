"""Do saves of one recipe from the window and the command line at once ever fail?

For `--seconds` (60 by default; it stops by itself), on a copy of the fixture draft:
- the window's code path, offscreen: the Recipes page's editor (RecipeEditor) edits the
  draft recipe as JSON and saves, again and again; told the file changed on disk (the
  command line saved since), it answers the page's question with Overwrite, as a user
  keeping their edit would;
- the command line, from a thread: `python -m app recipe set PACK note=cli-N`, one run
  after another, each a separate process as a user's script runs it.

It reports the saves of each, the failed ones (floor: 0, exit 1 otherwise) with their
first messages, how often the window was told the file changed on disk (a true report,
not a failure), and whether the file at the end is whole JSON holding the last save.

    .venv/bin/python benchmarks/recipe_saves.py [--seconds 60]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
FIXTURE = ROOT / "tests" / "fixtures" / "bundles" / "qwen3-draft-noisy"
RECIPE = "config_cpu.json"


@dataclass
class Saves:
    saved: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    changed_on_disk: int = 0


def command_line_saves(pack: Path, deadline: float, saves: Saves) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for i in range(1_000_000):
        if time.monotonic() >= deadline:
            return
        note = f"cli-{i}"
        done = subprocess.run(
            [sys.executable, "-m", "app", "recipe", "set", str(pack), f"note={note}"],
            capture_output=True, text=True, env=env, timeout=120,
        )  # fmt: skip
        if done.returncode == 0:
            saves.saved.append(note)
        else:
            saves.failed.append(done.stderr.strip())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="draftdeck-save-bench-"))
    os.environ["DRAFTDECK_HOME"] = str(home)
    pack = home / "data" / "packs" / FIXTURE.name
    shutil.copytree(FIXTURE, pack)
    recipe = pack / RECIPE
    shipped = json.loads(recipe.read_text(encoding="utf-8"))

    from PySide6.QtWidgets import QApplication

    from app.core.infra.errors import FileError
    from app.core.recipe.files import ChangedOnDiskError
    from app.core.recipe.schema import DRAFT
    from app.ui.recipes.recipe_editor import RecipeEditor

    app = QApplication(sys.argv)
    editor = RecipeEditor(DRAFT)
    editor.load(recipe)
    window, command_line = Saves(), Saves()
    deadline = time.monotonic() + args.seconds
    cli = threading.Thread(target=command_line_saves, args=(pack, deadline, command_line))
    cli.start()
    i = 0
    while time.monotonic() < deadline:
        note = f"window-{i}"
        editor.json_edit.setPlainText(json.dumps({**editor.data, "note": note}, indent=4))
        editor.sync_from_json()
        try:
            try:
                editor.save()
            except ChangedOnDiskError:
                window.changed_on_disk += 1
                editor.save(overwrite_changes=True)  # the page's "Overwrite"
            window.saved.append(note)
        except FileError as exc:
            window.failed.append(str(exc))
        app.processEvents()
        i += 1
    cli.join()

    try:
        final = json.loads(recipe.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        final = {"unreadable": str(exc)}
    last = {*window.saved[-1:], *command_line.saved[-1:]}
    whole = final == {**shipped, "note": final.get("note")} and final.get("note") in last
    tries = len(window.saved) + len(window.failed)
    print(f"{args.seconds:g} s, window and command line saving {recipe.name} at once")
    print(
        f"window: {len(window.failed)} failed saves of {tries} "
        f"(told 'changed on disk' {window.changed_on_disk} times, then Overwrite)"
    )
    runs = len(command_line.saved) + len(command_line.failed)
    print(f"command line: {len(command_line.failed)} failed saves of {runs} runs")
    for message in window.failed[:2] + command_line.failed[:2]:
        print(f"  e.g. {message}")
    print(f"file at the end: {'whole, the last save' if whole else f'WRONG: {final}'}")
    leftovers = sorted(p.name for p in pack.glob(f".{RECIPE}.*"))
    print(f"temporary files left: {len(leftovers)}")
    shutil.rmtree(home, ignore_errors=True)
    failed = len(window.failed) + len(command_line.failed)
    return 0 if failed == 0 and whole and not leftovers else 1


if __name__ == "__main__":
    sys.exit(main())
