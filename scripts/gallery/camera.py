"""Grab the main window at each gallery size, check every PNG's pixel size, and keep
the list the index page shows."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from time import monotonic

from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

from app.ui.base.scheme import scheme
from app.ui.shell.main_window import MainWindow

Size = tuple[int, int]
README_SIZE: Size = (1280, 780)
WAIT_LIMIT_S = 300.0  # a condition still false after this means the stage is broken


class GalleryError(RuntimeError):
    """A shot could not be made as named: wrong size, blank, or a state never reached."""


SCHEMES = (Qt.ColorScheme.Light, Qt.ColorScheme.Dark)  # every shot in each


def shot_name(name: str, colours: Qt.ColorScheme) -> str:
    """A shot's file name: `name`.png in the light scheme, `name`-dark.png in the dark."""
    return f"{name}-dark.png" if colours == Qt.ColorScheme.Dark else f"{name}.png"


def size_name(size: Size) -> str:
    return f"{size[0]}x{size[1]}"


def parse_size(text: str) -> Size:
    width, _, height = text.partition("x")
    return int(width), int(height)


def wait_until(app: QApplication, done: Callable[[], bool], what: str) -> None:
    """Process events until `done()` holds; fail loudly if it never does."""
    limit = monotonic() + WAIT_LIMIT_S
    while not done():
        if monotonic() > limit:
            raise GalleryError(f"gave up waiting for {what}")
        app.processEvents()


def check_png(path: Path, size: Size) -> None:
    """The PNG on disk has the pixel size its name says and is not one flat colour."""
    image = QImage(str(path))
    if image.isNull():
        raise GalleryError(f"{path} is not a readable PNG")
    if (image.width(), image.height()) != size:
        raise GalleryError(
            f"{path} is {image.width()}x{image.height()} px, not {size_name(size)} px"
        )
    small = image.scaled(32, 32)
    if len({small.pixel(x, y) for x in range(32) for y in range(32)}) < 2:
        raise GalleryError(f"{path} is blank")


@dataclass
class Camera:
    app: QApplication
    window: MainWindow
    sizes: list[Size]
    out: Path
    readme: Path | None  # where the README shots go; None: not made
    shots: list[Path] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # said at the end; the run fails
    before_grab: Callable[[], None] | None = None  # e.g. redraw live charts at the new size

    def shoot(self, page: str, state: str, readme_name: str | None = None) -> None:
        """Show `page` and save it in each scheme at every size as
        <W>x<H>/<page>-<state>[-dark].png (and, at the README size, as
        docs/<readme_name>[-dark].png when README shots are made)."""
        self.window.show_page(page)
        for colours in SCHEMES:
            scheme().request(colours)
            if readme_name is not None and self.readme is not None:
                self.readme.mkdir(parents=True, exist_ok=True)
                self._save(README_SIZE, self.readme / shot_name(readme_name, colours))
            for size in self.sizes:
                path = self.out / size_name(size) / shot_name(f"{page}-{state}", colours)
                path.parent.mkdir(parents=True, exist_ok=True)
                if self._save(size, path):
                    self.shots.append(path)
        scheme().request(Qt.ColorScheme.Light)  # the next state is set up as a user sees it

    def _save(self, size: Size, path: Path) -> bool:
        """Grab the window at `size` into `path`; False (and no file) if it cannot be
        that size."""
        self.window.resize(*size)
        # The resize reaches the window as a window-system event, then the layouts follow.
        self.app.processEvents()
        self.app.processEvents()
        got = (self.window.width(), self.window.height())
        if got != size:
            hint = self.window.minimumSizeHint().expandedTo(self.window.minimumSize())
            self.problems.append(
                f"{path.name}: asked for {size_name(size)}, the window stays "
                f"{size_name(got)} (its minimum is {hint.width()}x{hint.height()})"
            )
            path.unlink(missing_ok=True)  # no older shot left under this name
            return False
        if self.before_grab is not None:
            self.before_grab()
            self.app.processEvents()
        if not self.window.grab().save(str(path)):
            raise GalleryError(f"could not write {path}")
        check_png(path, size)
        print(f"wrote {path}")
        return True
