"""The main window as GUI tests use it: real, offscreen, at a screen's size, closed
afterwards without the unsaved-changes question, its background work drained."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from app.core.recipe.drafting_settings import FIXED_DRAFTING, write_drafting
from app.ui.base.background import wait_for_background
from app.ui.base.engine_bridge import CRASHED, ERROR, READY
from app.ui.chat.chat_sampling import GREEDY_INDEX
from app.ui.shell.application import create_main_window
from app.ui.shell.main_window import MainWindow

SCREEN = (1024, 700)  # the smallest screen the window must fit


@contextmanager
def open_window(qtbot: QtBot, size: tuple[int, int] = SCREEN) -> Iterator[MainWindow]:
    window = create_main_window()
    # pytest-qt closes the window before this context's cleanup runs: a test that ends
    # with unsaved recipe edits must not leave the quit question open for the next test.
    qtbot.addWidget(window, before_close_func=_close_anyway)
    window.resize(*size)
    window.show()
    try:
        yield window
    finally:
        window._closing_anyway = True
        window.close()
        wait_for_background()


def _close_anyway(window: QWidget) -> None:
    assert isinstance(window, MainWindow)
    window._closing_anyway = True


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
    qtbot: QtBot,
    bundle_copy: Callable[..., Path],
    pair: tuple[str, str],
    page: str,
    extra: Iterable[str] = (),
    *,
    desktop: bool = True,
    prepare: Callable[[Path], None] | None = None,
    size: tuple[int, int] = SCREEN,
) -> Iterator[MainWindow]:
    """The window with this pair chosen (copied with the `extra` packs, desktop recipes
    unless told otherwise, then `prepare(library)` run), showing `page`; its tune sweep,
    if one runs, ends before the next test."""
    with open_window(qtbot, size) as window:
        root = add_packs(window, bundle_copy, (*pair, *extra), desktop=desktop)
        if prepare is not None:
            prepare(root)
        window.show_page("pair")
        window.pair_page.choose(root / pair[0], root / pair[1])
        window.show_page(page)
        try:
            yield window
        finally:
            window.tune_page.queue.shutdown()


@contextmanager
def chat_window(
    qtbot: QtBot,
    bundle_copy: Callable[..., Path],
    pair: tuple[str, str],
    extra: Iterable[str] = (),
    *,
    desktop: bool = True,
    greedy: bool = True,
    prepare: Callable[[Path], None] | None = None,
    size: tuple[int, int] = SCREEN,
    timeout: int = 30_000,
) -> Iterator[MainWindow]:
    """The window on the Chat page with this pair loaded (see open_on_page), greedy
    unless told otherwise: replies that are the same on every run."""
    with open_on_page(
        qtbot, bundle_copy, pair, "chat", extra, desktop=desktop, prepare=prepare, size=size
    ) as window:
        page = window.chat_page
        qtbot.waitUntil(lambda: page.bridge.state in (READY, ERROR, CRASHED), timeout=timeout)
        assert page.bridge.state == READY, page.last_error
        if greedy:
            page.sampling.choice.setCurrentIndex(GREEDY_INDEX)
        yield window


def recipe_update(pack: str, keys: Mapping[str, object]) -> Callable[[Path], None]:
    """A `prepare` for chat_window: this pack's config.json with these keys set."""

    def update(root: Path) -> None:
        config = root / pack / "config.json"
        config.write_text(json.dumps({**json.loads(config.read_text()), **keys}))

    return update


def fixed_drafting(draft: str) -> Callable[[Path], None]:
    """A `prepare` for chat_window: this draft pack drafts the full length every round.
    A test of counts must not hang on adaptive drafting's judgement of this computer's
    timings: on a busy machine it may stand aside, and nothing is drafted."""

    def fix(root: Path) -> None:
        write_drafting(root / draft, FIXED_DRAFTING)

    return fix


def send(
    qtbot: QtBot, window: MainWindow, text: str, wait: bool = True, timeout: int = 30_000
) -> None:
    """Type `text` on the Chat page and press Return; with `wait`, until the reply has
    its figures (or the engine failed: then the test fails with the engine's words)."""
    page = window.chat_page
    page.input.setPlainText(text)
    qtbot.keyClick(page.input, Qt.Key.Key_Return)  # type: ignore[no-untyped-call]
    if wait:
        qtbot.waitUntil(
            lambda: (
                page.bridge.state in (ERROR, CRASHED)
                or (page.bridge.state == READY and page.transcript.messages[-1].stats is not None)
            ),
            timeout=timeout,
        )
        assert page.bridge.state == READY, page.last_error
