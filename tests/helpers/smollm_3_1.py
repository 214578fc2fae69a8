"""A 3.1.x pack of a Llama-family model with ChatML specials, the way MNN's exporter 3.1.4
writes SmolLM2 (llmexport.py at tag 3.1.4): built from the era-3.1.4 fixture's files.

- no model_type (3.1 writes none) and bare `%s` prompt templates: its
  build_prompt_template gives ChatML only to Qwen or a source path naming SmolLM2/Yi;
- tokenizer.txt in the huggingface format (the source has merges.txt): header, then
  `n_vocab n_merges`, the byte-level vocabulary one token a line, the merges; SmolLM2's
  17 added tokens come first (`<|endoftext|>` 0, `<|im_start|>` 1, `<|im_end|>` 2), the
  header lists them as specials and the instruct model's eos (2) as the stop id;
- a Llama graph: no q/k norms (the fixture's `/q_norm/` ops renamed, same length).
"""

from __future__ import annotations

import json
from pathlib import Path

from app.core.pack.added_tokens import byte_level_chars

SMOLLM_ADDED = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<repo_name>",
    "<reponame>",
    "<file_sep>",
    "<filename>",
    "<gh_stars>",
    "<issue_start>",
    "<issue_comment>",
    "<issue_closed>",
    "<jupyter_start>",
    "<jupyter_text>",
    "<jupyter_code>",
    "<jupyter_output>",
    "<jupyter_script>",
    "<empty_output>",
)
IM_END = 2
VOCAB = 1280  # the fixture's embedding rows
MERGES = ("#version: 0.2", "Ġ t", "Ġ a", "i n")


def smollm_tokenizer_txt() -> str:
    chars = list(byte_level_chars().values())
    vocab = [*SMOLLM_ADDED, *chars]
    vocab += [f"tok{i}" for i in range(VOCAB - len(vocab))]
    specials = " ".join(str(i) for i in range(len(SMOLLM_ADDED)))
    header = f"430 3\n{len(SMOLLM_ADDED)} 1 0\n{specials} {IM_END} \n"
    return header + f"{len(vocab)} {len(MERGES)}\n" + "".join(f"{t}\n" for t in [*vocab, *MERGES])


def make_smollm_3_1(pack: Path) -> Path:
    """Turn a copy of era-3.1.4 in `pack` into the SmolLM2-like 3.1.x pack."""
    config_path = pack / "llm_config.json"
    config = json.loads(config_path.read_text())
    for role in ("system", "user", "assistant"):
        config[f"{role}_prompt_template"] = "%s"
    config_path.write_text(json.dumps(config, indent=4))
    (pack / "tokenizer.txt").write_text(smollm_tokenizer_txt(), encoding="utf-8")
    graph = pack / "llm.mnn"
    graph.write_bytes(graph.read_bytes().replace(b"/q_norm", b"/q_nrmx"))
    return pack


def name_family(pack: Path, model_type: str) -> Path:
    """The pack's llm_config.json names its family (as Make Pack's exporter writes it)."""
    path = pack / "llm_config.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "model_type": model_type}))
    return pack
