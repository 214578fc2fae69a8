"""The main window as GUI tests use it: real, offscreen, at a screen's size, closed
afterwards without the unsaved-changes question, its background work drained."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from pytestqt.qtbot import QtBot

from app.ui.base.background import wait_for_background
from app.ui.shell.application import create_main_window
from app.ui.shell.main_window import MainWindow

SCREEN = (1024, 700)  # the smallest screen the window must fit


@contextmanager
def open_window(qtbot: QtBot, size: tuple[int, int] = SCREEN) -> Iterator[MainWindow]:
    window = create_main_window()
    qtbot.addWidget(window)
    window.resize(*size)
    window.show()
    try:
        yield window
    finally:
        window._closing_anyway = True
        window.close()
        wait_for_background()


def add_packs(
    window: MainWindow,
    bundle_copy: Callable[..., Path],
    names: Iterable[str],
    desktop: bool = False,
) -> Path:
    """Copies of these fixture bundles in the window's library, listed; the library."""
    root = window.library.root
    for name in names:
        bundle_copy(name, root / name, desktop=desktop)
    window.library_page.refresh()
    return root


def half_copied(bundle_copy: Callable[..., Path], dest: Path) -> Path:
    """A pack whose weights were cut off halfway, as an interrupted copy leaves it."""
    broken = bundle_copy("qwen3-draft-independent", dest)
    weight = broken / "llm.mnn.weight"
    weight.write_bytes(weight.read_bytes()[: weight.stat().st_size // 2])
    return broken


@contextmanager
def open_on_page(
    qtbot: QtBot, bundle_copy: Callable[..., Path], pair: tuple[str, str], page: str
) -> Iterator[MainWindow]:
    """The window with this pair (desktop recipes) chosen, showing `page`; its tune
    sweep, if one runs, ends before the next test."""
    with open_window(qtbot) as window:
        root = add_packs(window, bundle_copy, pair, desktop=True)
        window.show_page("pair")
        window.pair_page.choose(root / pair[0], root / pair[1])
        window.show_page(page)
        try:
            yield window
        finally:
            window.tune_page.queue.shutdown()
