"""An HF model folder with SmolLM2-135M's shape and no weights: hidden 576, which block
128 does not divide (the issue's case). The export checks need only its two configs."""

from __future__ import annotations

import json
from pathlib import Path

SMOL_CONFIG = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 576,
    "intermediate_size": 1536,
    "num_attention_heads": 9,
    "num_key_value_heads": 3,
    "num_hidden_layers": 30,
    "vocab_size": 49152,
}
CHATML_TOKENIZER = {
    "eos_token": "<|im_end|>",
    "bos_token": "<|im_start|>",
    "added_tokens_decoder": {
        "1": {"content": "<|im_start|>", "special": True},
        "2": {"content": "<|im_end|>", "special": True},
    },
}


def smol_shaped_folder(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(SMOL_CONFIG))
    (folder / "tokenizer_config.json").write_text(json.dumps(CHATML_TOKENIZER))
    return folder
