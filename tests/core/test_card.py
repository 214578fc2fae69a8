"""The model card speaks of the pack's role: a pack exported as a target is a target for
speculative decoding, without the draft-model tag (card.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from huggingface_hub import ModelCard

from app.core.pack.bundle import read_bundle
from app.core.packmaking.card import CARD, CardFacts, card_text
from app.core.packmaking.export_mark import EXPORT_MARK
from app.core.packmaking.make import finish_pack
from app.core.recipe.desktop_settings import THIS_COMPUTER_FILE
from tests.helpers.tune_results import fast_target_measurement

Copy = Callable[..., Path]


def _exported_as(pack: Path, role: str) -> None:
    """The mark `draftdeck export --role ROLE` leaves."""
    mark = {"source": "/models/tiny", "settings": {"bits": 4, "block": 128, "role": role}}
    (pack / EXPORT_MARK).write_text(json.dumps(mark), encoding="utf-8")


def _card(pack: Path) -> tuple[list[str], str]:
    info = read_bundle(pack)
    text = card_text(info, info.runtime_config, {}, CardFacts(license="apache-2.0"))
    tags = ModelCard(text).data.get("tags")
    assert isinstance(tags, list)
    return tags, text


def test_a_pack_exported_as_a_target_has_a_target_card(bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-target")
    _exported_as(pack, "target")
    tags, text = _card(pack)
    assert tags == ["mnn", "speculative-decoding"]
    assert "A target model for speculative decoding with MNN" in text
    assert "A draft model" not in text and "this draft proposes" not in text
    # A target measures no targets and ships no draft recipe: no empty sections.
    assert "## Measured" not in text and "## Recipe" not in text


def test_a_pack_exported_as_a_draft_has_a_draft_card(bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-target")  # the same files: only the role differs
    _exported_as(pack, "draft")
    tags, text = _card(pack)
    assert tags == ["mnn", "speculative-decoding", "draft-model"]
    assert "A draft model for speculative decoding with MNN" in text
    assert "## Measured" in text and "## Recipe" in text


def test_a_pack_draftdeck_did_not_export_is_a_draft_unless_a_target_by_size(
    bundle_copy: Copy,
) -> None:
    tags, text = _card(bundle_copy("qwen3-draft-noisy"))  # ships a draft recipe
    assert "draft-model" in tags and "A draft model" in text


def test_a_license_and_base_model_chosen_once_outlive_a_later_card(bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-draft-noisy")
    info = read_bundle(pack)
    chosen = CardFacts(license="mit", base_model="someone/Tiny-Qwen3")
    (pack / "README.md").write_text(card_text(info, info.runtime_config, {}, chosen))
    # Measuring again writes the card with no facts given: the earlier choice stays.
    data = ModelCard(card_text(info, info.runtime_config, {}, CardFacts())).data
    assert (data.get("license"), data.get("base_model")) == ("mit", "someone/Tiny-Qwen3")
    # Facts given now win; a card DraftDeck did not write is never read for them.
    data = ModelCard(card_text(info, info.runtime_config, {}, CardFacts(license="gpl-3.0"))).data
    assert (data.get("license"), data.get("base_model")) == ("gpl-3.0", "someone/Tiny-Qwen3")
    (pack / "README.md").write_text("---\nlicense: mit\n---\nTheir own card.\n")
    data = ModelCard(card_text(info, info.runtime_config, {}, CardFacts())).data
    assert data.get("license") != "mit"


def test_the_card_shows_the_phones_recipe_not_the_threads_measured_here(
    bundle_copy: Copy,
) -> None:
    # The phone's recipe: two draft threads, power high; measured here with one thread.
    draft = bundle_copy("fast-draft")
    phone = {"backend_type": "cpu", "thread_num": 2, "memory": "low", "power": "high"}
    (draft / "config_cpu.json").write_text(json.dumps(phone))
    measured = fast_target_measurement(draft)
    best = measured.best
    assert best is not None and best.setting.draft_threads == 1
    done, config = finish_pack(draft, [measured], CardFacts())
    text = (draft / CARD).read_text()
    recipe_section = text.split("## Recipe", 1)[1].split("## Export verification", 1)[0]
    assert '"thread_num": 2' in recipe_section and '"draft_thread_num": 2' in recipe_section
    assert '"thread_num": 1' not in text and '"draft_thread_num": 1' not in text
    assert "as a phone reads it (config_cpu.json)" in recipe_section
    assert config["notes"]["draft_thread_num"] in text  # where the 2 comes from, and the 1
    assert "measured best here (1)" in config["notes"]["draft_thread_num"]
    assert draft / THIS_COMPUTER_FILE in done.files  # the 1 is this computer's
