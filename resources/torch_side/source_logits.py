"""Teacher-forced logits of an HF source model, as it is and as the export quantizes it.

Runs INSIDE the export environment (torch CPU, transformers, llmexport), never in the
app: `python source_logits.py JOB.json`. It imports nothing from DraftDeck, so it lives
among the resources (plain files to the app; mypy and import-linter do not see it).

The job (written by app/core/packmaking/verify_source.py) names the HF folder, the
texts, the output folder, the pack's quantization and whether the folder's own code is
trusted (else transformers may not run it: no_remote_code.py). For each text this writes
`<n>.ids.npy` (int64 token ids), `<n>.source.npy` and `<n>.quantized.npy` (float32
logits, one row per position: row i predicts token i+1), and at the end `source.json`
with what was done and the prompt the source's chat template makes of the job's
`chat_prompt` conversation (the pack's is compared with it). Progress goes to stdout as
`progress DONE TOTAL WHAT` lines.

"Quantized" is the source with the export's own weight quantization applied in torch:
llmexport's `utils.torch_utils.quant` (the routine its MNN converter calls) run on every
linear weight, its packed output unpacked and dequantized the way MNN reads it back;
the embedding as the pack stores it (bf16, quantized apart, or tied to the lm_head).
Like the exporter, the routine halves a block that does not divide a layer's input
width; the blocks it used are reported, because the MNN graph keeps the asked block.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch


def exporter_quant() -> Any:
    """llmexport's quant routine (its package imports `utils` as a top-level name)."""
    spec = importlib.util.find_spec("llmexport")
    if spec is None or spec.origin is None:
        raise SystemExit("llmexport is not installed in this environment")
    sys.path.insert(0, os.path.dirname(spec.origin))
    from utils.torch_utils import quant  # type: ignore[import-not-found]

    return quant


def used_block(in_width: int, block: int) -> int:
    """The block llmexport's quant really uses (it halves until the width divides)."""
    size = in_width if block == 0 else block
    while in_width % size:
        size //= 2
    return size


def dequantized(quant: Any, weight: torch.Tensor, bits: int, block: int, sym: bool) -> torch.Tensor:
    """`weight` after the exporter's quantization, as MNN computes with it."""
    out_width, in_width = weight.shape
    q, alpha = quant(weight.detach().float().cpu(), bits, block, sym, False, False)
    if bits == 8:
        values = q.to(torch.int32)
    else:  # 8 // bits values a byte, the first in the high bits
        per_byte = 8 // bits
        shifts = torch.tensor([bits * (per_byte - 1 - i) for i in range(per_byte)])
        values = ((q.to(torch.int32)[:, None] >> shifts) & ((1 << bits) - 1)).flatten()
    size = used_block(in_width, block)
    blocks = in_width // size
    signed = (values[: out_width * in_width].float() - (1 << (bits - 1))).reshape(
        out_width, blocks, size
    )
    if sym:
        restored = signed * alpha.reshape(out_width, blocks, 1)
    else:
        pairs = alpha.reshape(out_width, blocks, 2)  # (zero, scale) per block
        restored = signed * pairs[..., 1:] + pairs[..., :1]
    return restored.reshape(out_width, in_width).to(weight.dtype)


def quantize_like_export(model: Any, spec: dict[str, Any], quant: Any) -> dict[str, Any]:
    """Apply the export's quantization to `model` in place; what was done."""
    sym = bool(spec.get("symmetric", False))
    embed = model.get_input_embeddings()
    lm_head = model.get_output_embeddings()
    blocks: dict[str, int] = {}
    count = 0
    if spec["embedding"] != "tied" and lm_head.weight is embed.weight:
        # The pack keeps the embedding apart from the lm_head (llmexport --seperate_embed).
        lm_head.weight = torch.nn.Parameter(lm_head.weight.data.clone())
    with torch.no_grad():
        for name, module in model.named_modules():
            if not isinstance(module, torch.nn.Linear):
                continue
            is_lm = module is lm_head
            bits = spec["lm_bits"] if is_lm else spec["bits"]
            block = spec["lm_block"] if is_lm else spec["block"]
            module.weight.data = dequantized(quant, module.weight.data, bits, block, sym)
            used = used_block(module.in_features, block)
            if used != block and block:
                blocks[name] = used
            count += 1
        kind = spec["embedding"]
        if kind == "tied":
            # MNN reads the embedding rows from the lm_head's quantized weights.
            embed.weight.data = lm_head.weight.data.clone()
        elif kind == "bf16":
            embed.weight.data = embed.weight.data.to(torch.bfloat16).float()
        else:
            bits, block = spec["embedding_bits"], spec["embedding_block"]
            embed.weight.data = dequantized(quant, embed.weight.data, bits, block, sym)
    return {"quantized_linears": count, "halved_blocks": blocks}


def token_ids(tokenizer: Any, text: dict[str, Any]) -> tuple[list[int], str]:
    """The ids a text has in the source tokenizer, and the text tokenized."""
    if text["messages"]:
        messages = [{"role": r, "content": c} for r, c in text["messages"]]
        if tokenizer.chat_template:
            joined = tokenizer.apply_chat_template(messages, tokenize=False)
            return list(tokenizer.encode(joined, add_special_tokens=False)), joined
        joined = "\n".join(f"{m['role']}: {m['content']}" for m in messages)
        return list(tokenizer.encode(joined)), joined
    return list(tokenizer.encode(text["text"])), text["text"]


def chat_prompt(tokenizer: Any, messages: list[list[str]]) -> dict[str, Any]:
    """The prompt the source's chat template makes of a conversation, ready for the
    reply (as a chat asks for one), and its ids; or why there is none."""
    if not tokenizer.chat_template:
        return {"why": "the source has no chat template"}
    conversation = [{"role": r, "content": c} for r, c in messages]
    try:
        text = tokenizer.apply_chat_template(
            conversation, tokenize=False, add_generation_prompt=True
        )
    except Exception as exc:  # a template may refuse a system message (raise_exception)
        return {"why": f"the source's chat template refuses it: {exc}"}
    ids = list(tokenizer.encode(text, add_special_tokens=False))
    return {"text": text, "ids": ids, "bos": tokenizer.bos_token or ""}


def logits(model: Any, ids: list[int]) -> np.ndarray:
    with torch.no_grad():
        out = model(torch.tensor([ids], dtype=torch.long)).logits[0]
    return out.float().numpy()


def main(job_path: str) -> int:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    job = json.loads(Path(job_path).read_text(encoding="utf-8"))
    trust = job.get("trust_remote_code") is True  # the folder's own code: only if trusted
    if not trust:
        from no_remote_code import forbid_remote_code

        forbid_remote_code()
    out = Path(job["out_dir"])
    texts = job["texts"]
    total = 2 + 2 * len(texts)
    started = time.perf_counter()
    print(f"progress 0 {total} loading the source model", flush=True)
    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(job["hf_folder"], trust_remote_code=trust)
    source = AutoModelForCausalLM.from_pretrained(
        job["hf_folder"], dtype=torch.float32, trust_remote_code=trust
    )
    source.eval()
    done = 1
    records = []
    all_ids = []
    for n, text in enumerate(texts):
        ids, tokenized = token_ids(tokenizer, text)
        all_ids.append(ids)
        np.save(out / f"{n}.ids.npy", np.asarray(ids, dtype=np.int64))
        np.save(out / f"{n}.source.npy", logits(source, ids))
        records.append({"name": text["name"], "tokens": len(ids), "text": tokenized})
        done += 1
        print(f"progress {done} {total} source model on {text['name']}", flush=True)
    facts = quantize_like_export(source, job["quant"], exporter_quant())
    done += 1
    print(f"progress {done} {total} quantized like the export", flush=True)
    for n, text in enumerate(texts):
        np.save(out / f"{n}.quantized.npy", logits(source, all_ids[n]))
        done += 1
        print(f"progress {done} {total} quantized source on {text['name']}", flush=True)
    summary = {
        "texts": records,
        "vocab": int(source.config.vocab_size),
        "chat_prompt": chat_prompt(tokenizer, job["chat_prompt"]),
        "torch": torch.__version__,
        "seconds": time.perf_counter() - started,
        **facts,
    }
    (out / "source.json").write_text(json.dumps(summary, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
