"""The fixed texts an export is checked on: prose, code, Chinese and a chat turn, and the
conversation whose chat prompt is compared.

Short on purpose: each position's logits are a whole vocabulary row (151,936 floats for
Qwen3) written to disk twice for the source and once per pack run. Together about 300
tokens with the Qwen3 tokenizer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.core.pack.chat_format import SAMPLE_CONVERSATION

# The conversation whose chat prompt the pack must render as its source does: with a
# system message, so a template that drops it (or a pack with no template) shows.
PROMPT_CONVERSATION = SAMPLE_CONVERSATION


@dataclass(frozen=True)
class VerifyText:
    name: str
    text: str = ""  # tokenized as it is (the tokenizer's own special tokens added)
    # A conversation instead: the source tokenizer's chat template makes its text.
    messages: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "text": self.text, "messages": [list(m) for m in self.messages]}


TEXTS: tuple[VerifyText, ...] = (
    VerifyText(
        "prose",
        "The river rose slowly through the night, and by morning the lower streets of the "
        "town were under water. People carried chairs and books up the stairs while the "
        "ferryman, who had seen three such floods, said it would be gone by Sunday.",
    ),
    VerifyText(
        "code",
        "def merge_sorted(a: list[int], b: list[int]) -> list[int]:\n"
        "    out, i, j = [], 0, 0\n"
        "    while i < len(a) and j < len(b):\n"
        "        if a[i] <= b[j]:\n"
        "            out.append(a[i]); i += 1\n"
        "        else:\n"
        "            out.append(b[j]); j += 1\n"
        "    return out + a[i:] + b[j:]\n",
    ),
    VerifyText(
        "chinese",
        "春天来了，山上的雪慢慢融化，河水变得清澈。村里的孩子们在田边放风筝，"  # noqa: RUF001
        "老人们坐在门口喝茶，谈论今年的收成。",  # noqa: RUF001 (Chinese commas)
    ),
    VerifyText(
        "chat",
        messages=(
            ("user", "What is the capital of France, and what river runs through it?"),
            ("assistant", "The capital of France is Paris. The Seine runs through it."),
        ),
    ),
)
