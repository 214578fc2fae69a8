"""Which exporter wrote a pack, told from what its files say, and what DraftDeck had to
infer because that exporter did not write it.

- mnn-3.1 (MNN's llmexport.py, 2025-04): no model_type, prompt templates,
  key_value_shape, no tie_embeddings; embeddings_bf16.bin, tokenizer.txt.
- mnn-3.3 (2025-10): as 3.1 plus attention_type and tie_embeddings as 5 numbers.
- mnn-3.4 (2026-03): model_type, jinja, tie_embeddings as 5 numbers, no layer_nums;
  tokenizer.txt.
- llmexport-0.0.5 (PyPI): model_type, layer_nums, jinja, 5 numbers; tokenizer.mtok.
- mnn-3.6 (2026-07): model_type, layer_nums, tie_embeddings as an object (MNN also
  reads 6 numbers, the sixth for fp16 scales); tokenizer.mtok.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from app.core.pack.chat_format import TEMPLATE_KEYS
from app.core.pack.embedding_layout import BF16_FILE, LIST5, LIST6, NONE, OBJECT
from app.core.pack.files import EMBEDDINGS, TOKENIZER_MTOK

LABELS = {
    "mnn-3.1": "MNN exporter 3.1.x (2025-04)",
    "mnn-3.3": "MNN exporter 3.3.x (2025-10)",
    "mnn-3.4": "MNN exporter 3.4.x (2026-03)",
    "mnn-3.6": "MNN exporter 3.6.x (2026-07)",
    "llmexport-0.0.5": "llmexport 0.0.5 (PyPI)",
    "unknown": "an exporter DraftDeck does not know",
}


# The keys whose presence or absence tells the exporters apart, said either way.
KEYS_TOLD = ("model_type", "layer_nums")


@dataclass(frozen=True)
class ExportFormat:
    name: str
    evidence: tuple[str, ...]  # the facts the name was told from
    inferred: Mapping[str, str]  # fact -> how DraftDeck found what the pack does not say

    @property
    def label(self) -> str:
        return LABELS[self.name]

    def rows(self) -> list[tuple[str, str]]:
        """What `info` and the Library details show: the format, what told it, and each
        fact DraftDeck inferred."""
        rows = [("Export format", f"{self.label}: {', '.join(self.evidence)}")]
        rows += [(f"Inferred {fact.replace('_', ' ')}", how) for fact, how in self.inferred.items()]
        return rows

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "label": self.label,
            "evidence": list(self.evidence),
            "inferred": dict(self.inferred),
        }


def export_format(
    llm_config: Mapping[str, Any],
    embedding_spelling: str,
    tokenizer_file: str,
    inferred: Mapping[str, str],
) -> ExportFormat:
    has, templates = _keys(llm_config)
    # Each key says whether it is there: a bare "model_type, layer_nums absent" read as
    # both absent.
    evidence = [f"{key} {'present' if key in has else 'absent'}" for key in KEYS_TOLD]
    if "jinja" in has:
        evidence.append("jinja chat template")
    if templates:
        evidence.append("prompt templates")
    if "key_value_shape" in has:
        evidence.append("key_value_shape")
    evidence.append(
        f"tie_embeddings as {embedding_spelling}"
        if embedding_spelling in (LIST5, LIST6, OBJECT)
        else ("embeddings_bf16.bin" if embedding_spelling == BF16_FILE else "no embedding layout")
    )
    evidence.append(tokenizer_file)
    return ExportFormat(
        format_name(llm_config, embedding_spelling, tokenizer_file),
        tuple(evidence),
        MappingProxyType(dict(inferred)),
    )


def copied_embedding(
    llm_config: Mapping[str, Any], spelling: str, tokenizer_file: str
) -> str | None:
    """Why a pack's embeddings_bf16.bin is not counted beside its lm_head, in words; None
    when it is the model's own. MNN's exporter 3.1 writes that file for every model (unless
    run with --tie_embed), a copy of the lm_head when the two are tied, as in most small
    models; from 3.3 on it writes it only for untied ones. Counting it would make a 3.1.x
    pack of a tied model twice the size of any later export of the same model."""
    if spelling != BF16_FILE or format_name(llm_config, spelling, tokenizer_file) != "mnn-3.1":
        return None
    return (
        f"{EMBEDDINGS} counted as a copy of the lm_head (MNN's exporter 3.1 writes it for "
        "tied and untied models alike; an untied model has that many parameters more)"
    )


def _keys(llm_config: Mapping[str, Any]) -> tuple[set[str], bool]:
    """The telling keys present, and whether there are prompt templates."""
    has = {
        key for key in ("model_type", "layer_nums", "jinja", "key_value_shape") if key in llm_config
    }
    return has, any(key in llm_config for key in TEMPLATE_KEYS.values())


def format_name(llm_config: Mapping[str, Any], spelling: str, tokenizer_file: str) -> str:
    has, templates = _keys(llm_config)
    if spelling in (OBJECT, LIST6):
        return "mnn-3.6"
    if "model_type" not in has:
        if spelling == LIST5:
            return "mnn-3.3"
        if spelling in (BF16_FILE, NONE) and (templates or "key_value_shape" in has):
            return "mnn-3.1"
        return "unknown"
    if spelling != LIST5:
        return "unknown"
    if "layer_nums" not in has:
        return "mnn-3.4"
    return "llmexport-0.0.5" if tokenizer_file == TOKENIZER_MTOK else "unknown"
