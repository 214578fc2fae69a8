"""The record of a chat, for export: the pair, its recipes, every message with its
figures and the charts' figures; written as JSON or as Markdown.

The pair and recipes are the ones the replies were made with, as the conversation
recorded them; a conversation saved before DraftDeck recorded its recipes says so
(UNRECORDED_RECIPE) rather than name the files as they are now."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.infra.errors import FileError
from app.core.infra.jsonfile import atomic_write_json, atomic_write_text, read_json_object
from app.core.measure.metrics import ADAPTIVE, SEEDED
from app.core.measure.verify_agreement import VerifyAgreement
from app.core.measure.words import Mode, StopReason
from app.core.recipe.files import TARGET_CONFIG, draft_recipe_path
from app.core.recipe.sampler_settings import GREEDY

GREEDY_WORD = GREEDY.describe()  # what a greedy reply's stats say as their sampler
UNRECORDED_PAIR = "made with an unrecorded pair"
UNRECORDED_RECIPE = "made with an unrecorded recipe (the conversation did not record it)"


def reply_figures_line(stats: dict[str, Any], mode: str, stopped_by: str) -> str:
    """A finished reply's figures in one line, as the transcript and the Markdown show them.

    `stats` is the engine's Stats.to_json(), with the pair's verify agreement added for a
    speculative reply."""
    parts = [f"{stats.get('tokens', 0)} tokens"]
    if stats.get("tok_s"):
        parts.append(f"{stats['tok_s']:.1f} tok/s")
    # The prefill ends with the first token: its time is the time to first token.
    if stats.get("prefill_seconds"):
        parts.append(f"TTFT {stats['prefill_seconds'] * 1000:.0f} ms")
    if stats.get("prefill_tok_s"):
        parts.append(f"prefill {stats['prefill_tok_s']:.0f} tok/s")
    # The draft reads the prompt after the first token is out: a time of its own.
    if stats.get("draft_prefill_seconds"):
        parts.append(f"draft prefill {stats['draft_prefill_seconds'] * 1000:.0f} ms")
    if stats.get("acceptance") is not None:
        parts += [text for text, _tip in acceptance_parts(stats)]
        verify = stats.get("verify_agreement")
        if verify:
            # A saved file's figure (hand-edited, or from a newer version) may not read:
            # the reply is shown without it rather than not at all.
            try:
                agreement = VerifyAgreement.from_json(verify)
            except (TypeError, ValueError):
                agreement = None
            if agreement is not None:
                parts.append(agreement.brief(stats["acceptance"]))
    # Plain decoding emits one token a step by definition: its "1.00" is no figure.
    if stats.get("mean_accepted_length") and mode != Mode.PLAIN:
        parts.append(f"mean accepted length {stats['mean_accepted_length']:.2f}")
    parts.append(mode)
    if mode != Mode.PLAIN and stats.get("drafting") in (ADAPTIVE, SEEDED):
        parts.append(drafting_words(stats))
    parts += _sampler_parts(stats.get("sampler"), stats.get("seed"))
    if stopped_by == StopReason.CANCELLED:
        # Stopped before its first token: the prompt was still being read.
        parts.append("stopped" if stats.get("tokens") else "stopped while reading the prompt")
    note = context_note(stats, stopped_by)
    if note:
        parts.append(note)
    return " · ".join(parts)


def acceptance_parts(stats: dict[str, Any]) -> list[tuple[str, str]]:
    """A speculative reply's acceptance figures as the figures line shows them, each
    with what it counts (the transcript's tooltip): the two divide the same accepted
    tokens by different counts, so 0.41 beside 0.63 is no contradiction."""
    acceptance = stats.get("acceptance")
    if acceptance is None:
        return []
    accepted, drafted = int(stats.get("accepted") or 0), int(stats.get("drafted") or 0)
    parts = [
        (
            f"acceptance {acceptance:.2f}",
            f"Acceptance: drafted tokens the target accepted over every drafted token "
            f"({accepted:,} of {drafted:,}), those after a round's first rejection "
            "included, which the target never checks",
        )
    ]
    expected, checked = stats.get("expected_acceptance"), stats.get("checked_acceptance")
    if expected is not None and checked is not None:
        reached = sum(int(n) for n in stats.get("position_reached") or [])
        # Same denominator (checked positions), so the two can be compared.
        parts.append(
            (
                f"accepted when checked {checked:.2f} (expected {expected:.2f})",
                "Accepted when checked: drafted tokens the target accepted over the draft "
                f"positions it checked ({accepted:,} of {reached:,}: a round is checked up "
                "to its first rejection). Expected: the chance of acceptance the draft's "
                "and the target's probabilities give at those same positions",
            )
        )
    return parts


def drafting_words(stats: dict[str, Any]) -> str:
    """How a speculative reply drafted, with adaptive drafting's stepping aside and why."""
    if stats.get("drafting") == SEEDED:
        return "fixed drafting for the seed (adaptive lengths follow the machine's speed)"
    words = "adaptive drafting" if stats.get("drafting") == ADAPTIVE else "fixed drafting"
    asides = int(stats.get("asides") or 0)
    if asides:
        times = "once" if asides == 1 else f"{asides} times"
        plain = int(stats.get("aside_rounds") or 0)
        words += f": stepped aside {times} ({plain:,} plain steps), {stats.get('aside_note')}"
    return words


def context_note(stats: dict[str, Any], stopped_by: str) -> str:
    """What the context window did to a reply, in words ("" when nothing)."""
    window = stats.get("window_tokens") or 0
    dropped = int(stats.get("dropped_messages") or 0)
    messages = "message" if dropped == 1 else "messages"
    words = [f"{dropped} oldest {messages} left out to fit"] if dropped else []
    asked = stats.get("max_tokens_asked") or 0
    if stopped_by == StopReason.CONTEXT_FULL:
        # A reply that ended by itself was not cut: only a full window is worth a word,
        # with the max tokens it could not give when more were asked for.
        more = f" (max tokens {asked:,} asked for)" if asked else ""
        words.append(f"stopped: the {window:,}-token context window is full{more}")
    return " · ".join(words)


def _sampler_parts(sampler: object, seed: object) -> list[str]:
    """How the reply's tokens were picked, with the seed that repeats a sampled reply
    (nothing for figures from before sampling existed)."""
    if not isinstance(sampler, str) or not sampler:
        return []
    if sampler == GREEDY_WORD:
        return ["greedy"]
    return [f"sampler: {sampler}"] + ([f"seed {seed}"] if isinstance(seed, int) else [])


@dataclass(frozen=True)
class MessageRecord:
    role: str  # "user" or "assistant"
    text: str
    thinking: str = ""
    mode: str = ""  # a reply's Mode
    stopped_by: str = ""
    draft_tokens: int = 0  # tokens of the reply the target took from the draft
    stats: dict[str, Any] | None = None  # the reply's figures, once it finished

    def figures_line(self) -> str:
        return reply_figures_line(self.stats or {}, self.mode, self.stopped_by)

    def to_json(self) -> dict[str, object]:
        return {
            "role": self.role,
            "text": self.text,
            "thinking": self.thinking or None,
            "mode": self.mode or None,
            "stopped_by": self.stopped_by or None,
            "draft_tokens": self.draft_tokens if self.role == "assistant" else None,
            "stats": self.stats,
            # Said again at the top so a reader finds how to repeat a reply.
            "sampler": (self.stats or {}).get("sampler"),
            "seed": (self.stats or {}).get("seed"),
        }


@dataclass(frozen=True)
class PairRecipes:
    draft: Mapping[str, object] | None  # the draft's recipe file; None if absent or unreadable
    target: Mapping[str, object] | None  # the target's config file, likewise

    @classmethod
    def read(cls, target: Path | None, draft: Path | None) -> PairRecipes:
        return cls(
            draft=_object_or_none(draft and draft_recipe_path(draft)),
            target=_object_or_none(target and target / TARGET_CONFIG),
        )

    def to_json(self) -> dict[str, object]:
        return {"draft": self.draft, "target": self.target}

    @classmethod
    def from_json(cls, data: object) -> PairRecipes | None:
        """As `to_json` wrote it; None for anything else (not recorded, or hand-edited)."""
        if not isinstance(data, Mapping):
            return None
        draft, target = data.get("draft"), data.get("target")
        if not all(v is None or isinstance(v, Mapping) for v in (draft, target)):
            return None
        return cls(draft=draft, target=target)


def _object_or_none(path: Path | None) -> Mapping[str, object] | None:
    if not path:
        return None
    try:
        return read_json_object(path)
    except FileError:
        return None


@dataclass(frozen=True)
class ChatRecord:
    exported_at: str  # local time, ISO 8601 to the second
    target: Path | None  # None (with draft None): no pair, or one not recorded
    draft: Path | None
    recipes: PairRecipes | None  # None: not recorded
    messages: tuple[MessageRecord, ...]
    per_position_acceptance: tuple[float, ...]
    plain_reference_tok_s: float | None
    verify_agreement: VerifyAgreement | None  # of the loaded pair
    pair_recorded: bool = True  # False: the pair the replies were made with is unknown

    def to_json(self) -> dict[str, object]:
        notes = {
            "pair_note": None if self.pair_recorded else UNRECORDED_PAIR,
            "recipe_note": UNRECORDED_RECIPE if self.recipes is None else None,
        }
        return {
            "exported_at": self.exported_at,
            "target": str(self.target) if self.target else None,
            "draft": str(self.draft) if self.draft else None,
            "recipe": self.recipes.to_json() if self.recipes is not None else None,
            **{key: note for key, note in notes.items() if note},
            "messages": [m.to_json() for m in self.messages],
            "figures": {
                "per_position_acceptance": list(self.per_position_acceptance),
                "plain_reference_tok_s": self.plain_reference_tok_s,
                "verify_agreement": (
                    self.verify_agreement.to_json() if self.verify_agreement else None
                ),
            },
        }

    def to_markdown(self) -> str:
        pair = (
            [f"- Target: `{self.target}`", f"- Draft: `{self.draft}`"]
            if self.pair_recorded
            else [f"- Pair: {UNRECORDED_PAIR}"]
        )
        recipe = (
            ["```json", json.dumps(self.recipes.to_json(), indent=2), "```"]
            if self.recipes is not None
            else [UNRECORDED_RECIPE[0].upper() + UNRECORDED_RECIPE[1:] + "."]
        )
        lines = [
            "# DraftDeck chat",
            "",
            *pair,
            f"- Exported: {self.exported_at}",
            "",
            "## Recipe",
            "",
            *recipe,
            "",
        ]
        for message in self.messages:
            lines.append(f"**{'You' if message.role == 'user' else 'Assistant'}:** {message.text}")
            if message.stats is not None:
                lines.append(f"\n_{message.figures_line()}_")
            lines.append("")
        positions = ", ".join(f"{p:.2f}" for p in self.per_position_acceptance)
        lines += ["## Figures", "", f"- Acceptance by draft position: {positions or 'n/a'}"]
        return "\n".join(lines) + "\n"

    # Exports are the user's files: permissions as their umask gives, not 0600.
    def write_json(self, path: Path) -> None:
        atomic_write_json(path, self.to_json(), indent=2, shared=True)

    def write_markdown(self, path: Path) -> None:
        atomic_write_text(path, self.to_markdown(), shared=True)


def chat_record(
    target: Path | None,
    draft: Path | None,
    messages: Iterable[MessageRecord],
    per_position_acceptance: Iterable[float],
    plain_reference_tok_s: float | None,
    verify_agreement: VerifyAgreement | None,
) -> ChatRecord:
    """The record of a chat now, with the pair's recipes as they are on disk (a caller
    that has them as recorded puts those in with dataclasses.replace)."""
    return ChatRecord(
        exported_at=time.strftime("%Y-%m-%dT%H:%M:%S"),
        target=target,
        draft=draft,
        recipes=PairRecipes.read(target, draft),
        messages=tuple(messages),
        per_position_acceptance=tuple(per_position_acceptance),
        plain_reference_tok_s=plain_reference_tok_s,
        verify_agreement=verify_agreement,
    )
