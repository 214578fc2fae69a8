"""A pack's model family when its llm_config.json does not say (MNN's exporter 3.1-3.3
writes no `model_type`): inferred from what the pack proves.

- Qwen: the tokenizer has ChatML's `<|im_start|>` and Qwen's `<|endoftext|>`.
- Qwen3 rather than Qwen2: the graph normalises queries and keys (`q_norm`, `k_norm`).
- Qwen3.5 rather than Qwen3: LinearAttention ops (every exporter that knows Qwen3.5
  writes `model_type`, so this only guards against a hand-edited config).

Anything else is UNKNOWN, which compatibility treats as "cannot tell", not as a family.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.pack.graph_facts import GraphFacts
from app.core.pack.tokenizer_info import TokenizerInfo

UNKNOWN = "unknown"
QWEN_MARKERS = ("<|im_start|>", "<|endoftext|>")


@dataclass(frozen=True)
class Family:
    name: str
    evidence: str  # how it was found, in words


def infer_family(tokenizer: TokenizerInfo, graph: GraphFacts) -> Family:
    if not all(tokenizer.token_id(marker) is not None for marker in QWEN_MARKERS):
        return Family(UNKNOWN, "no model_type, and the tokenizer is not one DraftDeck knows")
    words = f"the Qwen tokenizer ({', '.join(QWEN_MARKERS)} in {tokenizer.file})"
    if graph.linear_attention:
        return Family("qwen3_5", f"{words} and LinearAttention ops in the graph")
    if graph.qk_norm:
        return Family("qwen3", f"{words} and per-head q/k norms in the graph")
    return Family("qwen2", f"{words}, no q/k norms in the graph")
