"""The Downloads page's window, reading the local Hub stand-in."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pytestqt.qtbot import QtBot

from app.ui.shell.main_window import MainWindow
from tests.helpers.windows import open_window
from tests.hub_server import FakeHub


@pytest.fixture
def window(qtbot: QtBot, hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> Iterator[MainWindow]:
    monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
    with open_window(qtbot) as win:
        win.show_page("downloads")
        yield win
