"""A model folder that carries code of its own: the tiny Llama whose config names classes
in an evil.py beside it, which writes a marker file if anything ever imports it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.helpers.export_env import HF_FIXTURES

LLAMA = HF_FIXTURES / "llama-tiny"
AUTO_MAP = {"AutoConfig": "evil.EvilConfig", "AutoModelForCausalLM": "evil.EvilModel"}


def evil_folder(folder: Path, marker: Path) -> Path:
    """The tiny Llama whose config names classes in an evil.py beside it, which writes
    `marker` when imported."""
    shutil.copytree(LLAMA, folder)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    (folder / "config.json").write_text(json.dumps({**config, "auto_map": AUTO_MAP}))
    (folder / "evil.py").write_text(
        f"open({str(marker)!r}, 'w').write('ran')\n"
        "from transformers import LlamaConfig, LlamaForCausalLM\n"
        "class EvilConfig(LlamaConfig): pass\n"
        "class EvilModel(LlamaForCausalLM): pass\n",
        encoding="utf-8",
    )
    return folder
