"""The chat export record and its JSON and Markdown files, and the status bar's figures."""

from __future__ import annotations

import json
import os
import stat
from dataclasses import replace
from pathlib import Path

import pytest

from app.core.infra.system_figures import system_figures
from app.core.measure.chat_record import (
    UNRECORDED_PAIR,
    UNRECORDED_RECIPE,
    ChatRecord,
    MessageRecord,
    PairRecipes,
    chat_record,
    reply_figures_line,
)
from app.core.measure.verify_agreement import VerifyAgreement
from app.core.measure.words import VerifyMethod
from app.core.pack.files import DRAFT_RECIPE
from app.core.recipe.files import TARGET_CONFIG

AGREEMENT = VerifyAgreement(
    agreement=0.75, matched=3, checked=4, draft_length=2, verify=VerifyMethod.BATCHED
)
STATS = {"tokens": 12, "tok_s": 40.25, "acceptance": 0.5, "mean_accepted_length": 1.5}


def _record() -> ChatRecord:
    return ChatRecord(
        exported_at="2025-01-02T03:04:05",
        target=Path("/packs/target"),
        draft=Path("/packs/draft"),
        recipes=PairRecipes(draft={"memory": "normal", "note": "é"}, target=None),
        messages=(
            MessageRecord("user", "Hi?"),
            MessageRecord(
                "assistant",
                "Hello.",
                thinking="hm",
                mode="speculative",
                stopped_by="cancelled",
                draft_tokens=3,
                stats=STATS,
            ),
        ),
        per_position_acceptance=(0.75, 0.5),
        plain_reference_tok_s=30.0,
        verify_agreement=AGREEMENT,
    )


def test_json_has_the_keys_of_the_export_file(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    _record().write_json(path)
    text = path.read_text(encoding="utf-8")
    assert text.endswith("}\n") and '"note": "é"' in text  # indented, not ASCII-escaped
    data = json.loads(text)
    assert list(data) == ["exported_at", "target", "draft", "recipe", "messages", "figures"]
    assert data["target"] == str(Path("/packs/target"))
    assert data["recipe"] == {"draft": {"memory": "normal", "note": "é"}, "target": None}
    user, reply = data["messages"]
    assert user == {
        "role": "user",
        "text": "Hi?",
        "thinking": None,
        "mode": None,
        "stopped_by": None,
        "draft_tokens": None,
        "stats": None,
        "sampler": None,
        "seed": None,
    }
    assert reply == {
        "role": "assistant",
        "text": "Hello.",
        "thinking": "hm",
        "mode": "speculative",
        "stopped_by": "cancelled",
        "draft_tokens": 3,
        "stats": STATS,
        "sampler": None,
        "seed": None,
    }
    assert data["figures"] == {
        "per_position_acceptance": [0.75, 0.5],
        "plain_reference_tok_s": 30.0,
        "verify_agreement": AGREEMENT.to_json(),
    }


def test_markdown_lists_the_pair_recipes_messages_and_figures(tmp_path: Path) -> None:
    path = tmp_path / "chat.md"
    _record().write_markdown(path)
    recipe = json.dumps({"draft": {"memory": "normal", "note": "é"}, "target": None}, indent=2)
    assert path.read_text(encoding="utf-8") == "\n".join(
        [
            "# DraftDeck chat",
            "",
            f"- Target: `{Path('/packs/target')}`",
            f"- Draft: `{Path('/packs/draft')}`",
            "- Exported: 2025-01-02T03:04:05",
            "",
            "## Recipe",
            "",
            "```json",
            recipe,
            "```",
            "",
            "**You:** Hi?",
            "",
            "**Assistant:** Hello.",
            "\n_12 tokens · 40.2 tok/s · acceptance 0.50 · mean accepted length 1.50"
            " · speculative · stopped_",
            "",
            "## Figures",
            "",
            "- Acceptance by draft position: 0.75, 0.50",
            "",
        ]
    )


def test_markdown_of_an_empty_chat_without_a_pair() -> None:
    record = chat_record(None, None, (), (), None, None)
    text = record.to_markdown()
    assert "- Target: `None`" in text and "- Draft: `None`" in text
    assert text.endswith("- Acceptance by draft position: n/a\n")
    assert record.to_json()["recipe"] == {"draft": None, "target": None}


def test_record_reads_the_pairs_recipes_and_skips_broken_ones(tmp_path: Path) -> None:
    target, draft = tmp_path / "target", tmp_path / "draft"
    target.mkdir()
    draft.mkdir()
    (draft / DRAFT_RECIPE).write_text('{"memory": "low"}', encoding="utf-8")
    (target / TARGET_CONFIG).write_text("{not json", encoding="utf-8")
    record = chat_record(target, draft, [MessageRecord("user", "x")], [1.0], None, None)
    assert record.recipes == PairRecipes(draft={"memory": "low"}, target=None)
    assert record.messages == (MessageRecord("user", "x"),)
    assert record.per_position_acceptance == (1.0,)


def test_figures_line_names_a_verify_that_limits_acceptance() -> None:
    limited = {**STATS, "acceptance": 0.7, "verify_agreement": AGREEMENT.to_json()}
    line = reply_figures_line(limited, "speculative", "stop_token")
    # The same estimate and range as bench and tune say (VerifyAgreement.sentence).
    low, high = AGREEMENT.ceiling_range
    assert (
        f"acceptance 0.70 · verify agreement 0.75 (an identical draft: an estimated "
        f"{AGREEMENT.ceiling:.2f}, 95 % range {low:.2f}\N{EN DASH}{high:.2f}), "
        "acceptance near it: limited by the recipe" in line
    )
    assert line.endswith("· speculative")
    assert reply_figures_line({}, "plain", "") == "0 tokens · plain"


def test_figures_line_leaves_out_an_agreement_it_cannot_read() -> None:
    # A hand-edited file or a newer version's: an unknown verify method, a missing field.
    for verify in ({**AGREEMENT.to_json(), "verify": "tree"}, {"agreement": 0.9}):
        stats = {**STATS, "acceptance": 0.7, "verify_agreement": verify}
        line = reply_figures_line(stats, "speculative", "stop_token")
        assert "acceptance 0.70" in line and "verify agreement" not in line
        assert line.endswith("· speculative")


def test_figures_line_says_the_sampler_the_seed_and_the_expected_acceptance() -> None:
    sampled = {
        **STATS,
        "sampler": "temperature 0.6, topK 20, topP 0.95",
        "seed": 1234,
        "expected_acceptance": 0.791,
        "checked_acceptance": 0.62,
    }
    line = reply_figures_line(sampled, "speculative", "max_tokens")
    # Expected is compared with the rate over checked positions (the same denominator).
    assert "acceptance 0.50 · accepted when checked 0.62 (expected 0.79)" in line
    assert line.endswith("· speculative · sampler: temperature 0.6, topK 20, topP 0.95 · seed 1234")
    greedy = {**STATS, "sampler": "greedy", "seed": None, "expected_acceptance": None}
    line = reply_figures_line(greedy, "plain", "cancelled")
    assert line.endswith("· plain · greedy · stopped")
    assert "expected" not in line and "None" not in line


def test_figures_line_says_the_time_to_first_token_and_the_prefill_rate() -> None:
    timed = {**STATS, "prefill_seconds": 0.1204, "prefill_fed": 100, "prefill_tok_s": 830.6}
    line = reply_figures_line(timed, "speculative", "stop_token")
    assert line.startswith("12 tokens · 40.2 tok/s · TTFT 120 ms · prefill 831 tok/s · ")
    # A whole prompt from the cache has a time to first token but no prefill rate.
    cached = {**STATS, "prefill_seconds": 0.004, "prefill_fed": 0, "prefill_tok_s": None}
    line = reply_figures_line(cached, "plain", "")
    assert "TTFT 4 ms" in line and "prefill" not in line and "None" not in line


def test_json_of_a_reply_names_its_sampler_and_seed() -> None:
    stats = {**STATS, "sampler": "temperature 0.8, topK 40", "seed": 99}
    reply = MessageRecord("assistant", "Hi.", mode="plain", stats=stats).to_json()
    assert reply["sampler"] == "temperature 0.8, topK 40" and reply["seed"] == 99
    assert reply["stats"] == stats  # the old keys stay


def test_system_figures_of_a_running_process_and_of_none() -> None:
    assert system_figures(os.getpid()).startswith("Engine RAM ")
    assert " MB · CPU " in system_figures(os.getpid())
    none = system_figures(None)
    assert none.startswith("CPU ") and none.endswith("%")


def test_a_plain_reply_has_no_acceptance_figures() -> None:
    """Plain decoding drafts nothing: no acceptance, and no mean accepted length of 1."""
    stats = {"tokens": 12, "tok_s": 40.0, "acceptance": None, "mean_accepted_length": 1.0}
    line = reply_figures_line(stats, "plain", "eos")
    assert line == "12 tokens · 40.0 tok/s · plain"


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
def test_an_export_gets_the_permissions_of_the_users_umask(tmp_path: Path) -> None:
    """Not 0600 as DraftDeck's own files: the user asked for a file to share or keep."""
    old = os.umask(0o027)
    try:
        _record().write_markdown(tmp_path / "chat.md")
        _record().write_json(tmp_path / "chat.json")
    finally:
        os.umask(old)
    for name in ("chat.md", "chat.json"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o640
    (tmp_path / "chat.md").chmod(0o600)  # the user's choice for a file written before
    _record().write_markdown(tmp_path / "chat.md")
    assert stat.S_IMODE((tmp_path / "chat.md").stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chat.json", "chat.md"]


def test_figures_line_says_the_drafts_prefill_and_the_turns_left_out() -> None:
    timed = {**STATS, "prefill_seconds": 0.5, "draft_prefill_seconds": 0.1204}
    line = reply_figures_line(timed, "speculative", "stop_token")
    assert "TTFT 500 ms · draft prefill 120 ms · " in line
    # Plain decoding, or a draft that had nothing to read: no draft figure.
    assert "draft prefill" not in reply_figures_line(
        {**timed, "draft_prefill_seconds": 0.0}, "plain", ""
    )
    dropped = {**STATS, "dropped_messages": 4, "window_tokens": 160}
    assert reply_figures_line(dropped, "speculative", "stop_token").endswith(
        "· 4 oldest messages left out to fit"
    )
    # A reply that ended by itself was not cut, however many tokens were asked for.
    asked = {**STATS, "window_tokens": 160, "max_tokens_asked": 512}
    assert "max tokens" not in reply_figures_line(asked, "plain", "stop_token")
    cut = reply_figures_line(asked, "plain", "context_full")
    assert cut.endswith("window is full (max tokens 512 asked for)")
    full = reply_figures_line({**dropped, "dropped_messages": 1}, "plain", "context_full")
    assert full.endswith(
        "· 1 oldest message left out to fit · stopped: the 160-token context window is full"
    )


def test_figures_line_of_a_reply_stopped_before_its_first_token() -> None:
    empty = {"tokens": 0, "prefill_seconds": 0.0, "acceptance": None}
    line = reply_figures_line(empty, "plain", "cancelled")
    assert line == "0 tokens · plain · stopped while reading the prompt"


def test_figures_line_never_puts_the_estimate_under_an_acceptance_above_its_range() -> None:
    # 60/64 rows agree: the estimate for d=3 is about 0.88 with a range topping near 0.95.
    found = VerifyAgreement(
        agreement=60 / 64, matched=60, checked=64, draft_length=3, verify=VerifyMethod.BATCHED
    )
    above = {**STATS, "acceptance": 0.99, "verify_agreement": found.to_json()}
    line = reply_figures_line(above, "speculative", "stop_token")
    assert "acceptance above that range: mostly the recipe's verify" in line
    assert "limited by the recipe" not in line and "would reach" not in line


@pytest.mark.parametrize(
    "recorded",
    [None, "a text", ["draft"], {"draft": "oops", "target": None}, {"target": [1, 2]}],
)
def test_recipes_recorded_in_another_shape_read_as_not_recorded(recorded: object) -> None:
    # A hand-edited conversation file: its export says so rather than fail.
    assert PairRecipes.from_json(recorded) is None


def test_recorded_recipes_read_back_as_written() -> None:
    recipes = PairRecipes(draft={"memory": "low"}, target=None)
    assert PairRecipes.from_json(json.loads(json.dumps(recipes.to_json()))) == recipes


def test_an_unrecorded_pair_and_recipe_are_said_not_guessed() -> None:
    record = replace(_record(), target=None, draft=None, recipes=None, pair_recorded=False)
    data = record.to_json()
    assert data["pair_note"] == UNRECORDED_PAIR and data["recipe_note"] == UNRECORDED_RECIPE
    assert data["recipe"] is None
    text = record.to_markdown()
    assert f"- Pair: {UNRECORDED_PAIR}\n" in text and "- Target:" not in text
    assert "## Recipe\n\nMade with an unrecorded recipe" in text and "```json" not in text
    # A recorded one carries no notes.
    assert "pair_note" not in _record().to_json() and "recipe_note" not in _record().to_json()
