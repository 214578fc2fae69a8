"""A pack's model family when its llm_config.json does not say (MNN's exporter 3.1-3.3
writes no `model_type`): inferred from what the pack proves.

- Qwen: the tokenizer has Qwen's `<|endoftext|>`, `<|im_start|>`, `<|im_end|>` as three
  consecutive ids right after its ordinary vocabulary (`qwen_vocabulary`). ChatML markers
  alone prove nothing: SmolLM2 (a Llama) has the same three at ids 0-2.
- Qwen3 rather than Qwen2: the graph normalises queries and keys (`q_norm`, `k_norm`).
- Qwen3.5 rather than Qwen3: LinearAttention ops (every exporter that knows Qwen3.5
  writes `model_type`, so this only guards against a hand-edited config).

Anything else is UNKNOWN, which compatibility treats as "cannot tell", not as a family.
An inferred family is a guess: it is shown as one and never blocks a pair on its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.pack.graph_facts import GraphFacts
from app.core.pack.tokenizer_info import TokenizerInfo

UNKNOWN = "unknown"
QWEN_END_OF_TEXT = "<|endoftext|>"
QWEN_MARKERS = (QWEN_END_OF_TEXT, "<|im_start|>", "<|im_end|>")


@dataclass(frozen=True)
class Family:
    name: str
    evidence: str  # how it was found, in words

    @property
    def words(self) -> str:
        """As `info`, the details and `check` show it: "qwen2, inferred from ..."."""
        if self.name == UNKNOWN:
            return f"{UNKNOWN}: {self.evidence}"
        return f"{self.name}, inferred from {self.evidence}"


def qwen_vocabulary(tokenizer: TokenizerInfo) -> bool:
    """Qwen's tokenizer: its three markers are consecutive ids, and no special token
    comes before them (Qwen adds its specials after the 151,643 ordinary tokens)."""
    ids = [tokenizer.token_id(marker) for marker in QWEN_MARKERS]
    first = ids[0]
    if first is None or ids != [first, first + 1, first + 2] or first == 0:
        return False
    return min(tokenizer.special_ids, default=first) >= first


def infer_family(tokenizer: TokenizerInfo, graph: GraphFacts) -> Family:
    if not qwen_vocabulary(tokenizer):
        ids = [tokenizer.token_id(marker) for marker in QWEN_MARKERS[:2]]
        if None not in ids:
            return Family(
                UNKNOWN,
                f"no model_type, and {tokenizer.file} has ChatML's markers but not where "
                f"Qwen's tokenizer has them ({QWEN_MARKERS[0]} at id {ids[0]}): another "
                "family's tokenizer with ChatML specials (like SmolLM2's)",
            )
        return Family(UNKNOWN, "no model_type, and the tokenizer is not one DraftDeck knows")
    words = (
        f"the Qwen tokenizer ({', '.join(QWEN_MARKERS)} after the vocabulary in {tokenizer.file})"
    )
    if graph.linear_attention:
        return Family("qwen3_5", f"{words} and LinearAttention ops in the graph")
    if graph.qk_norm:
        return Family("qwen3", f"{words} and per-head q/k norms in the graph")
    return Family("qwen2", f"{words}, no q/k norms in the graph")
