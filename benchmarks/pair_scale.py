"""Does a library of 300 packs keep the window smooth?

Builds a library of 300 packs in a temporary folder, each a folder of hard links to
the files of a committed fixture bundle (112 that can serve either way, targets among
them; 188 drafts: a 112 x 300 pair matrix, 33,600 pairs, as issue 31 measured), then
drives the real window offscreen and measures, in one run:
- window start to its first paint, against the same on an empty library, interleaved
  (floor: < 1.5 s);
- the Pair page, first visit after start and a second visit: the click to its first
  paint (floor < 0.5 s) and to its table filled in (no floor: read on a worker);
- the GUI thread's longest block from the window's first paint until the matrix is
  filled, and over the second visit: a 5 ms timer's lateness (floor < 50 ms).

    .venv/bin/python benchmarks/pair_scale.py [--runs 3] [--packs 300]
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
FIXTURES = ROOT / "tests" / "fixtures" / "bundles"
# Read as "either" (no draft recipe, under a billion parameters): targets and drafts.
EITHER = (
    "qwen3-target",
    "fast-target",
    "era-3.1.4",
    "era-3.3.0",
    "era-3.4.1",
    "era-3.6.1",
    "qwen3-realtok",  # the real 151,936-token vocabulary: tokenizers compared by content
    "era-3.1.4-realtok",
)
DRAFTS = (
    "fast-draft",
    "qwen3-draft-identical",
    "qwen3-draft-independent",
    "qwen3-draft-noisy",
    "qwen35-draft",
    "era-3.4.1-tokforge",
)


def link_pack(source: Path, dest: Path) -> None:
    """A pack folder of hard links to `source`'s files (copies across file systems)."""
    for folder, _dirs, names in os.walk(source):
        inside = dest / Path(folder).relative_to(source)
        inside.mkdir(parents=True, exist_ok=True)
        for name in names:
            try:
                os.link(Path(folder) / name, inside / name)
            except OSError:
                shutil.copy2(Path(folder) / name, inside / name)


def make_library(library: Path, packs: int) -> None:
    either = packs * 112 // 300
    for i in range(either):
        name = EITHER[i % len(EITHER)]
        link_pack(FIXTURES / name, library / f"{name}-{i:03d}")
    for i in range(packs - either):
        name = DRAFTS[i % len(DRAFTS)]
        link_pack(FIXTURES / name, library / f"{name}-{i:03d}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--packs", type=int, default=300)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="draftdeck-pair-bench-"))
    full_home, empty_home = work / "full", work / "empty"
    make_library(full_home / "data" / "packs", args.packs)
    (empty_home / "data" / "packs").mkdir(parents=True)
    from app.core.infra.settings import load_settings, save_settings

    # A returning user's window: a pair was chosen before (choosing one for the first
    # time also redraws the Tune page's chart, ~170 ms, which is not this page's).
    os.environ["DRAFTDECK_HOME"] = str(full_home)
    settings = load_settings()
    settings.pair_target = str(full_home / "data" / "packs" / f"{EITHER[0]}-000")
    settings.pair_draft = str(full_home / "data" / "packs" / f"{DRAFTS[3]}-003")
    save_settings(settings)

    from PySide6.QtCore import QEvent
    from PySide6.QtWidgets import QApplication

    from app.ui.base.background import wait_for_background
    from app.ui.shell.application import create_main_window
    from app.ui.shell.main_window import MainWindow
    from benchmarks.gui_probes import Lateness, PaintWatch, spin_until

    app = QApplication(sys.argv)

    def open_window(home: Path, lateness: Lateness) -> tuple[MainWindow, float]:
        """A window on this home: it and the seconds from start to its first paint."""
        os.environ["DRAFTDECK_HOME"] = str(home)
        start = time.perf_counter()
        window = create_main_window()
        window.resize(1280, 800)
        painted = PaintWatch(window)
        window.show()
        spin_until(lambda: painted.at is not None)
        assert painted.at is not None
        lateness.start()  # building the window blocks by design; from here it must not
        return window, painted.at - start

    def close(window: MainWindow) -> None:
        """Closed and gone: a window left alive would make every later garbage
        collection (on the GUI thread, gui_thread_gc.py) walk its objects too."""
        window._closing_anyway = True
        window.close()
        wait_for_background(60_000)
        window.deleteLater()
        app.processEvents()
        app.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        gc.collect()

    def visit_pair(window: MainWindow) -> tuple[float, float]:
        """Seconds from the click to the page's first paint, and to its table filled."""
        page = window.pair_page
        painted = PaintWatch(page.card.title)  # the page itself paints no background
        start = time.perf_counter()
        window.show_page("pair")
        spin_until(lambda: painted.at is not None and not page.loading())
        assert painted.at is not None
        filled = time.perf_counter() - start
        return painted.at - start, filled

    results: dict[str, list[float]] = {}

    def record(name: str, value: float) -> None:
        results.setdefault(name, []).append(value)

    lateness = Lateness()
    sizes = ""
    for run in range(args.runs + 1):  # the first run warms file caches and is not kept
        order = ("empty", "full") if run % 2 else ("full", "empty")
        for which in order:
            if which == "empty":
                window, paint = open_window(empty_home, lateness)
                lateness.stop()
                close(window)
                if run:
                    record("start, empty library", paint)
                continue
            window, paint = open_window(full_home, lateness)
            spin_until(lambda w=window: not w.library_page.loading())  # type: ignore[misc]
            shown, filled = visit_pair(window)
            block = lateness.stop()[0]
            model = window.pair_page.matrix_model
            sizes = f"{model.rowCount()} x {model.columnCount()}"
            window.show_page("library")
            app.processEvents()
            lateness.start()
            again_shown, again_filled = visit_pair(window)
            again_block = lateness.stop()[0]
            window.show_page("library")  # the next window opens there (settings' last_page)
            close(window)
            if run:
                record(f"start, {args.packs} packs", paint)
                record("pair page shown, first visit", shown)
                record("pair page filled, first visit", filled)
                record("longest GUI block, paint to filled", block / 1000)
                record("pair page shown, second visit", again_shown)
                record("pair page filled, second visit", again_filled)
                record("longest GUI block, second visit", again_block / 1000)
    shutil.rmtree(work, ignore_errors=True)

    print(f"{args.packs} packs ({sizes} pair matrix), medians of {args.runs} interleaved runs:")
    for name, values in results.items():
        runs = " ".join(f"{v * 1000:.0f}" for v in values)
        print(f"  {name:38} {statistics.median(values) * 1000:7.0f} ms   (runs: {runs})")
    full = statistics.median(results[f"start, {args.packs} packs"])
    empty = statistics.median(results["start, empty library"])
    print(f"  start {args.packs} packs / empty: {full / empty:.2f}")
    print("floors: start < 1500 ms; pair page shown < 500 ms; longest GUI block < 50 ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
