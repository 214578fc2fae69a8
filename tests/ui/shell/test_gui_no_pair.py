"""Before a pair is chosen, Chat and Recipes say what to do and take the user to the
Pair page, instead of showing greyed fields and empty axes that mean nothing. Real
widgets offscreen over a real library."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.ui.shell.main_window import MainWindow
from tests.helpers.windows import open_window

Copy = Callable[..., Path]


@pytest.fixture
def window(qtbot: QtBot) -> Iterator[MainWindow]:
    with open_window(qtbot) as win:
        yield win


@pytest.mark.parametrize("key", ["chat", "recipes", "tune"])
def test_without_a_pair_the_page_says_what_to_do_and_goes_to_pair(
    window: MainWindow, qtbot: QtBot, key: str
) -> None:
    chat, recipes, tune = window.chat_page, window.recipes_page, window.tune_page
    needs = {"chat": chat.needs_pair, "recipes": recipes.needs_pair, "tune": tune.needs_pair}[key]
    window.show_page(key)
    qtbot.waitUntil(lambda: needs.message.isVisible() and needs.button.isVisible())
    assert "Choose a target and a draft on the Pair page" in needs.message.text()
    # No field or chart stands there with a value that means nothing.
    hidden = {
        "chat": (chat.charts, chat.input),
        "recipes": (recipes.draft_editor, recipes.toolbar),
        "tune": (tune.form, tune.chart, tune.start_button),
    }[key]
    assert not any(widget.isVisible() for widget in hidden)
    needs.button.click()
    assert window.current_page_key() == "pair"


def test_choosing_a_pair_brings_the_pages_back(
    window: MainWindow, qtbot: QtBot, bundle_copy: Copy
) -> None:
    root = window.library.root
    for name in ("qwen3-target", "qwen3-draft-noisy"):
        bundle_copy(name, root / name, desktop=True)
    window.library_page.refresh()
    window.show_page("pair")
    window.pair_page.choose(root / "qwen3-target", root / "qwen3-draft-noisy")
    window.show_page("recipes")
    recipes = window.recipes_page
    qtbot.waitUntil(lambda: recipes.draft_editor.isVisible())
    assert not recipes.needs_pair.message.isVisible()
    window.show_page("chat")
    chat = window.chat_page
    qtbot.waitUntil(lambda: chat.charts.isVisible() and chat.input.isVisible())
    assert not chat.needs_pair.message.isVisible()
    window.show_page("tune")
    tune = window.tune_page
    qtbot.waitUntil(lambda: tune.form.isVisible() and tune.start_button.isEnabled())
    assert not tune.needs_pair.message.isVisible()
