"""Screenshots offscreen: `make screenshots`.

Two things, both from throwaway DraftDeck homes and local stand-ins only (fixture
bundles, tests/hub_server.FakeHub, tests/adb_harness.AdbServer with fake phones):

- the gallery: every page of the main window at each size (1024x700 and 1600x1000 by
  default), in a fresh home (`<page>-empty`) and in busy states (a broken pack, a
  blocked pair, a recipe edit, a download, a reply being generated, a sweep, a push),
  into build/screenshots/<W>x<H>/<page>-<state>.png with build/screenshots/index.html;
- the README shots at 1280x780 into docs/, taken during the busy states;

every shot in the light scheme and again in the dark one (<name>-dark.png, named by
gallery.camera.shot_name).

Every PNG is checked to have the pixel size its name says and not to be blank; any
shot that fails is listed at the end and the exit status is 1.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # tests.* (the Hub, adb and phone stand-ins)
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from gallery.camera import Camera, parse_size, size_name  # noqa: E402
from gallery.index import write_index  # noqa: E402
from gallery.offscreen import use_large_screen  # noqa: E402

STATES = ("empty", "busy")


def arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes",
        default="1024x700,1600x1000",
        help="comma-separated window sizes in px (default: %(default)s)",
    )
    parser.add_argument("--states", choices=(*STATES, "all"), default="all")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "screenshots")
    parser.add_argument(
        "--no-readme", action="store_true", help="leave docs/ alone (README shots off)"
    )
    parser.add_argument(
        "--shots",
        metavar="NAMES",
        help="only these busy states, comma-separated (e.g. make_pack,publish; implies "
        "--states busy): the README shots of the others stay as they are",
    )
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = arguments(argv)
    started = time.monotonic()
    sizes = [parse_size(text) for text in args.sizes.split(",")]
    only = set(args.shots.split(",")) if args.shots else None
    states = ("busy",) if only else STATES if args.states == "all" else (args.states,)
    work = Path(tempfile.mkdtemp(prefix="draftdeck-shots-"))
    use_large_screen(work)
    # Imported only now: the Qt platform and the homes are set up first.
    from gallery.busy import builder_names, shoot_busy
    from gallery.empty import shoot_empty
    from gallery.stage import Scene, close_window, fill_library, open_window, use_home
    from PySide6.QtWidgets import QApplication

    from app.ui.base.background import wait_for_background
    from app.ui.base.scheme import scheme
    from tests.adb_harness import AdbServer
    from tests.hub_server import FakeHub

    unknown = sorted((only or set()) - set(builder_names()))
    if unknown:
        print(f"unknown --shots {', '.join(unknown)}; known: {', '.join(builder_names())}")
        shutil.rmtree(work, True)
        return 2
    problems: list[str] = []
    shots: list[Path] = []
    with ExitStack() as stack:
        stack.callback(shutil.rmtree, work, True)
        # Started before any window, so the Phone and Downloads pages find them.
        adb = stack.enter_context(AdbServer(work / "adb"))
        os.environ["ANDROID_ADB_SERVER_PORT"] = str(adb.port)
        hub = stack.enter_context(FakeHub())
        os.environ["HF_ENDPOINT"] = hub.endpoint
        app = QApplication(sys.argv[:1])
        scheme().follow_system()
        for state in states:
            library = use_home(work / state)
            if state == "busy":
                fill_library(library)
            window = open_window(app)
            readme = ROOT / "docs" if state == "busy" and not args.no_readme else None
            camera = Camera(app, window, sizes, args.out, readme)
            scene = Scene(app, window, camera, work / state, library, hub, adb)
            try:
                if state == "busy":
                    shoot_busy(scene, only)
                else:
                    shoot_empty(scene)
            finally:
                close_window(window)
                wait_for_background()
            shots += camera.shots
            problems += camera.problems
    index = write_index(args.out, shots)
    print(f"wrote {index}: {len(shots)} shots at {', '.join(map(size_name, sizes))}")
    print(f"took {time.monotonic() - started:.0f} s")
    for problem in problems:
        print(f"PROBLEM: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
