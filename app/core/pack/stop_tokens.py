"""Every token that ends a reply, from everything a pack says.

llmexport 0.0.5 writes only the tokenizer's eos as a stop id into the tokenizer header
(`<|im_end|>` for Qwen3), but Qwen3's generation config also stops on `<|endoftext|>`.
So the stop ids are the union of:

- the tokenizer file's header stop ids, and its eos token text (tokenizer_info.py);
- `generation_config.json` when the pack ships one (`eos_token_id`: an id or a list);
- the chat template's end marker, `jinja.eos` of the merged config, mapped to its id
  through the tokenizer's added tokens;
- for Qwen models (by model_type, or the family inferred for packs without one),
  `<|endoftext|>` when the vocabulary is Qwen's (model_family.qwen_vocabulary): every
  released Qwen2/3 generation config lists it beside `<|im_end|>`, and llmexport does not
  copy that file into the pack, so without this rule a real exported Qwen3 pack would run
  past it. Another tokenizer's `<|endoftext|>` (SmolLM2's id 0) is that model's business.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from app.core.infra.errors import BadValueError
from app.core.infra.jsonfile import read_json_object
from app.core.pack.files import CONFIG, GENERATION_CONFIG
from app.core.pack.model_family import QWEN_END_OF_TEXT, qwen_vocabulary
from app.core.pack.tokenizer_info import TokenizerInfo


def with_pack_stops(
    tokenizer: TokenizerInfo,
    folder: Path,
    config: Mapping[str, Any],
    llm_config: Mapping[str, Any],
    llm_config_name: str,
    model_type: str,
) -> TokenizerInfo:
    """`tokenizer` with the stop ids that the pack's other files add."""
    found: list[tuple[int, str]] = []
    path = folder / GENERATION_CONFIG
    if path.is_file():
        found += [(token, GENERATION_CONFIG) for token in _eos_ids(path)]
    # config.json is merged over llm_config.json (MNN's rule): its jinja wins.
    owner = CONFIG if "jinja" in config else llm_config_name
    jinja = config["jinja"] if "jinja" in config else llm_config.get("jinja")
    marker = jinja.get("eos") if isinstance(jinja, dict) else None
    if isinstance(marker, str) and marker:
        token = tokenizer.token_id(marker)
        if token is not None:
            found.append((token, f"{owner} jinja.eos"))
    if model_type.startswith("qwen") and qwen_vocabulary(tokenizer):
        token = tokenizer.token_id(QWEN_END_OF_TEXT)
        if token is not None:
            found.append((token, f"{model_type} end of text"))
    return tokenizer.with_stops(found)


def _eos_ids(path: Path) -> list[int]:
    value = read_json_object(path).get("eos_token_id")
    if value is None:
        return []
    values = value if isinstance(value, list) else [value]
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values):
        raise BadValueError(
            path, f"eos_token_id must be a token id or a list of them, found {value!r}"
        )
    return list(values)
