"""Does the pack turn a conversation into the prompt its source model was trained on?

The pack's side is what DraftDeck's chat gives MNN: its chat format (chat_format.py:
its jinja template, its prompt templates or MNN's defaults) rendered under a budget as
MNN renders it, then encoded by the pack's tokenizer (which adds the bos token its
header names). The source's is transformers' apply_chat_template, encoded by the source
tokenizer (resources/torch_side/source_logits.py). They are compared as token ids, what
the model is given: a pack whose template was lost (MNN's defaults stand in) or that
drops the system message differs, and is not verified. Plain Python: no torch, no MNN.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from app.core.pack.chat_format import MNN_DEFAULTS, ChatFormat
from app.core.pack.template_budget import TemplateFailed
from app.core.packmaking.verify_texts import PROMPT_CONVERSATION

Encode = Callable[[str], Sequence[int]]
Decode = Callable[[Sequence[int]], str]
CONTEXT_TOKENS = 8  # the tokens shown before the first difference
SHOWN_TOKENS = 12  # and after it, on each side


@dataclass(frozen=True)
class SourcePrompt:
    """The prompt the source's chat template makes of PROMPT_CONVERSATION (the torch
    side's), and its ids."""

    text: str
    ids: tuple[int, ...]
    bos: str  # the source tokenizer's bos token ("" when it has none)


@dataclass(frozen=True)
class PromptCheck:
    """The two prompts of PROMPT_CONVERSATION and what differs ("" when the same)."""

    pack_format: str  # where the pack's format comes from (chat_format's JINJA, ...)
    source: str  # the source's prompt, or why it has none (then nothing is compared)
    pack: str  # the pack's prompt as its tokenizer decodes it ("" when not made)
    compared: bool
    difference: str
    note: str = ""  # a difference that is MNN's, not the export's

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        """One line for the check's summary, when nothing differs (a difference is
        said as a reason)."""
        if not self.compared:
            return f"chat prompt: not compared ({self.source})"
        same = f"chat prompt ({self.pack_format}): the source's for a chat with a system message"
        return f"{same}, but {self.note}" if self.note else f"{same}, token for token"


def check_prompt(
    source: SourcePrompt | str, chat: ChatFormat, encode: Encode, decode: Decode
) -> PromptCheck:
    """Compare the pack's chat prompt (`chat`, encoded with `encode`) with the source's;
    `decode` is the pack's tokenizer, for the words."""
    if isinstance(source, str):  # nothing to hold the pack's prompt against
        return PromptCheck(chat.source, source, "", False, "")
    try:
        text = chat.engine_prompt(PROMPT_CONVERSATION)
    except TemplateFailed as exc:  # also one that refuses what the source's renders
        problem = f"Chat prompt: the pack's chat template could not be rendered: {exc.why}."
        return PromptCheck(chat.source, source.text, "", True, problem)
    ids = list(encode(text))
    pack = decode(ids)
    if ids == list(source.ids):
        return PromptCheck(chat.source, source.text, pack, True, "")
    extra = len(source.ids) - len(ids)  # the source's ids are its bos's, then the pack's
    if (
        source.bos
        and extra > 0
        and ids == list(source.ids[extra:])
        and decode(source.ids[:extra]) == source.bos
    ):
        # MNN 3.6.1 renders a jinja template's bos_token empty, whatever the pack says;
        # only a tokenizer that adds bos itself (its header's prefix) puts it back.
        note = (
            f"the source's template starts with {source.bos}, which MNN renders empty and "
            "this pack's tokenizer does not add: its chats start without it"
        )
        return PromptCheck(chat.source, source.text, pack, True, "", note)
    return PromptCheck(chat.source, source.text, pack, True, _difference(source, ids, chat, decode))


def _difference(source: SourcePrompt, ids: Sequence[int], chat: ChatFormat, decode: Decode) -> str:
    at = next(
        (i for i, (a, b) in enumerate(zip(source.ids, ids, strict=False)) if a != b),
        min(len(source.ids), len(ids)),
    )
    before = decode(ids[max(0, at - CONTEXT_TOKENS) : at])
    expected = decode(source.ids[at : at + SHOWN_TOKENS])
    got = decode(ids[at : at + SHOWN_TOKENS])
    where = f"after {before!r}" if before else "from the start"
    lost = (
        " The pack has no chat template of its own: MNN's defaults stand in for it (the "
        "source's chat_template.jinja or tokenizer_config.json template did not reach it)."
        if chat.source == MNN_DEFAULTS
        else ""
    )
    return (
        f"Chat prompt: for a conversation with a system message the pack's prompt "
        f"({chat.source}) differs from the source's chat template {where}: the source has "
        f"{expected!r}, the pack {got!r}.{lost}"
    )
