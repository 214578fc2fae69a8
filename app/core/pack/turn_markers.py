"""A pack whose prompt templates mark no turns, and the chat format its tokenizer implies.

MNN's exporter 3.1 writes ChatML prompt templates only for models it knows by name (a
Qwen, or a source folder whose path says SmolLM2, Yi, Llama-3...); any other model gets
bare `%s` templates (its `build_prompt_template`). The prompt is then the messages' texts
joined: the model never sees where a turn ends or where its reply starts, and its replies
do not stop by themselves. The tokenizer still shows the format the model was trained on:
ChatML's `<|im_start|>`/`<|im_end|>`, Llama 3's header and `<|eot_id|>` specials.

The fix is the `jinja` key of the pack's config.json (merged over llm_config.json, read by
MNN 3.6.1 and by DraftDeck alike), set to a template rendering the implied format.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.pack.chat_format import (
    PROMPT_TEMPLATES,
    ROLES,
    SLOT,
    TEMPLATE_KEYS,
    ChatFormat,
    chat_format,
    jinja_setting,
)
from app.core.pack.files import CONFIG
from app.core.pack.tokenizer_info import TokenizerInfo

KEY = "jinja"  # the recipe key that sets a pack's chat format


@dataclass(frozen=True)
class KnownFormat:
    name: str
    markers: tuple[str, ...]  # specials the tokenizer must have
    templates: Mapping[str, str]  # by role, as MNN's exporter 3.1 spells them


# The exporter's own templates for these formats (llmexport.py build_prompt_template).
KNOWN_FORMATS = (
    KnownFormat(
        "ChatML",
        ("<|im_start|>", "<|im_end|>"),
        {role: f"<|im_start|>{role}\n{SLOT}<|im_end|>\n" for role in ROLES},
    ),
    KnownFormat(
        "Llama 3",
        ("<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"),
        {role: f"<|start_header_id|>{role}<|end_header_id|>\n\n{SLOT}<|eot_id|>" for role in ROLES},
    ),
)


@dataclass(frozen=True)
class MissingTurnMarkers:
    """What `info`, the Library details and the Chat page say about such a pack."""

    implied: str | None  # the format the tokenizer implies, None when it implies none
    setting: Mapping[str, str] | None  # the `jinja` value that applies it

    @property
    def message(self) -> str:
        words = (
            "The chat format has no turn markers (bare %s prompt templates): the model "
            "never sees where a turn ends, so its replies will not stop by themselves."
        )
        if self.implied is None:
            return words + f" Set `{KEY}` in {CONFIG} to the template the model was trained on."
        return words + (
            f" The tokenizer's specials imply {self.implied}: set `{KEY}` in {CONFIG} to "
            f"{self.implied} to use it."
        )

    def command(self, pack: Path) -> str | None:
        """The command line that applies the implied format, None without one."""
        if self.setting is None:
            return None
        value = shlex.quote(f"{KEY}={json.dumps(dict(self.setting), ensure_ascii=False)}")
        return f"draftdeck recipe set {shlex.quote(str(pack))} --target-config {value}"

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MissingTurnMarkers:
        """Back from `to_json` (the engine sends a loaded pack's facts as JSON)."""
        implied, value = data.get("implied_format"), data.get("value")
        return cls(
            implied if isinstance(implied, str) else None,
            {str(k): str(v) for k, v in value.items()} if isinstance(value, Mapping) else None,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "message": self.message,
            "implied_format": self.implied,
            "file": CONFIG,
            "key": KEY,
            "value": None if self.setting is None else dict(self.setting),
        }


def bare_templates(chat: ChatFormat) -> bool:
    """Prompt templates that are each just the message: nothing marks a turn."""
    return (
        chat.source == PROMPT_TEMPLATES
        and not chat.bos
        and all(chat.templates[role] == SLOT for role in ROLES)
    )


def missing_turn_markers(chat: ChatFormat, tokenizer: TokenizerInfo) -> MissingTurnMarkers | None:
    """None for a format with turn markers; else what to say, with the implied format."""
    if not bare_templates(chat):
        return None
    for known in KNOWN_FORMATS:
        if all(tokenizer.token_id(marker) is not None for marker in known.markers):
            rendered = chat_format(
                {TEMPLATE_KEYS[role]: known.templates[role] for role in ROLES}, None
            )
            return MissingTurnMarkers(known.name, jinja_setting(rendered))
    return MissingTurnMarkers(None, None)
