"""The target's sampler on the Recipes page's form: a row for every setting MNN's sampler
reads, under MNN's spellings and defaults, saved where Chat's sampler reader finds it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QDoubleSpinBox
from pytestqt.qtbot import QtBot

from app.core.recipe.files import target_sampler
from app.core.recipe.sampler_fields import SAMPLER_FORM_KEYS
from app.core.recipe.sampler_settings import sampler_settings
from app.ui.recipes.recipe_editor import RecipeEditor
from app.ui.recipes.recipe_fields import ChoiceEditor, NamesEditor, NumberEditor
from app.ui.shell.main_window import MainWindow
from tests.helpers.windows import add_packs, open_window

Copy = Callable[..., Path]
TARGET, DRAFT = "qwen3-target", "qwen3-draft-noisy"


def _open(qtbot: QtBot, bundle_copy: Copy, **config: object) -> Iterator[MainWindow]:
    with open_window(qtbot) as window:
        root = add_packs(window, bundle_copy, [TARGET, DRAFT])
        path = root / TARGET / "config.json"
        data = {
            k: v
            for k, v in json.loads(path.read_text()).items()
            if k not in SAMPLER_FORM_KEYS  # the fixture writes MNN's values out; start bare
        }
        path.write_text(json.dumps(data | config, indent=4))
        window.show_page("pair")
        window.pair_page.choose(root / TARGET, root / DRAFT)
        window.show_page("recipes")
        window.recipes_page.tabs.setCurrentIndex(1)
        yield window


@pytest.fixture
def window(qtbot: QtBot, bundle_copy: Copy) -> Iterator[MainWindow]:
    yield from _open(qtbot, bundle_copy)


def _number(editor: RecipeEditor, key: str) -> NumberEditor:
    field = editor.editors[key]
    assert isinstance(field, NumberEditor)
    return field


def test_every_sampler_setting_has_a_row_with_mnns_default(window: MainWindow) -> None:
    target = window.recipes_page.target_editor
    assert set(SAMPLER_FORM_KEYS) <= set(target.editors)
    assert target.form.labels["top_k"].text() == "top_k"
    assert _number(target, "top_k").spin.text() == "(not set: 40)"
    assert _number(target, "temperature").spin.text() == "(not set: 1.0)"
    assert _number(target, "min_p").spin.text() == "(not set: 0.1)"
    assert _number(target, "repetition_penalty").spin.text() == "(not set: 1.0)"
    mixed = target.editors["mixed_samplers"]
    assert isinstance(mixed, NamesEditor)
    assert mixed.edit.placeholderText().startswith("(not set: topK, tfs, typical")
    assert "Chat samples with temperature 1, topK 40" in target.form.sampler_line.text()
    # The draft's form keeps only its sampler_type: Chat samples with the target's.
    assert "temperature" not in window.recipes_page.draft_editor.editors


def test_a_form_edit_is_what_chat_samples_with(window: MainWindow) -> None:
    page = window.recipes_page
    target = page.target_editor
    sampler = target.editors["sampler_type"]
    assert isinstance(sampler, ChoiceEditor)
    sampler.combo.setCurrentText("mixed")
    temperature = _number(target, "temperature").spin
    assert isinstance(temperature, QDoubleSpinBox)
    temperature.setValue(0.6)
    _number(target, "top_k").spin.setValue(20)
    mixed = target.editors["mixed_samplers"]
    assert isinstance(mixed, NamesEditor)
    QTest.keyClicks(mixed.edit, "topK, topP, temperature")
    assert target.data["mixed_samplers"] == ["topK", "topP", "temperature"]
    assert '"temperature": 0.6' in target.json_edit.toPlainText()
    # Rows the sampler does not read are greyed; the line says what it does.
    assert not target.form.labels["typical"].isEnabled()
    assert target.form.labels["top_p"].isEnabled()
    assert "temperature 0.6, topK 20, topP 0.9" in target.form.sampler_line.text()
    page.act_save.trigger()
    chat_reads, problem = target_sampler(window.library.root / TARGET)
    assert problem == "" and chat_reads is not None
    assert chat_reads == sampler_settings(target.data)
    assert (chat_reads.temperature, chat_reads.top_k) == (0.6, 20)
    assert chat_reads.steps == ("topK", "topP")
    sampler.combo.setCurrentText("greedy")
    assert not target.form.labels["temperature"].isEnabled()


def test_older_spellings_are_shown_and_kept(qtbot: QtBot, bundle_copy: Copy) -> None:
    for window in _open(qtbot, bundle_copy, topK=20, penalty=1.1, mixed_samplers=["penalty"]):
        target = window.recipes_page.target_editor
        assert target.form.labels["top_k"].text() == "topK"
        assert _number(target, "top_k").spin.value() == 20
        assert target.form.labels["repetition_penalty"].text() == "penalty"
        _number(target, "top_k").spin.setValue(30)
        assert target.data["topK"] == 30 and "top_k" not in target.data
        # Not listed under "Other keys": the rows show them.
        assert "topK" not in target.others.text() and "penalty" not in target.others.text()
