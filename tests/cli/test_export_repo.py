"""`draftdeck export OWNER/NAME` against the local Hub stand-in: a repo's config.json is
fetched alone and checked before anything else is downloaded; a repo whose chat template
is in chat_template.jinja (as transformers 4.5x saves it) gives a pack with that template,
verified against the source's chat prompt."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from app.core.packmaking.export_env import EXPORT_ENV_VAR
from tests.helpers.cli import run_cli
from tests.helpers.export_env import HF_FIXTURES, export_env
from tests.hub_server import FakeHub

LLAMA = HF_FIXTURES / "llama-tiny"
REPO = "someone/llama-tiny"


def hub_env(hub: FakeHub, tmp_path: Path) -> dict[str, str]:
    """The child talks to the stand-in, with a Hugging Face cache of its own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
    return {**env, "HF_ENDPOINT": hub.endpoint, "HF_HOME": str(tmp_path / "hf-home")}


def test_a_block_the_repos_config_refuses_is_said_before_its_weights_are_fetched(
    tmp_path: Path,
) -> None:
    out = tmp_path / "pack"
    with FakeHub() as hub:
        hub.add_folder(REPO, LLAMA)
        # A block the user chose (the default is fitted to the model instead).
        args = ("export", REPO, "--out", str(out), "--block", "128")
        done = run_cli(*args, env=hub_env(hub, tmp_path), timeout=120)
        asked = [path for _, path, _ in hub.requests if not path.startswith("/api/")]
    assert done.returncode == 2, done.stderr
    assert "quant_block 128 does not divide the hidden size 64" in done.stderr
    assert "(--block 64, or --adjust)" in done.stderr
    assert asked and all(path.endswith("/config.json") for path in asked), asked
    assert not out.exists()


def test_a_repos_chat_template_jinja_becomes_the_packs_template(tmp_path: Path) -> None:
    source = tmp_path / "llama-jinja"
    shutil.copytree(LLAMA, source)
    tokenizer_config = source / "tokenizer_config.json"
    settings = json.loads(tokenizer_config.read_text(encoding="utf-8"))
    # The fixture's template with a system prompt of its own, kept apart from
    # tokenizer_config.json, as transformers 4.5x saves it.
    template = "{#- the repo's own template -#}" + settings.pop("chat_template").replace(
        "{%- for message in messages %}",
        "{%- if messages[0]['role'] != 'system' %}{{- '<|start_header_id|>system"
        "<|end_header_id|>\\n\\nYou answer in rhyme.<|eot_id|>' }}{%- endif %}"
        "{%- for message in messages %}",
    )
    tokenizer_config.write_text(json.dumps(settings), encoding="utf-8")
    (source / "chat_template.jinja").write_text(template, encoding="utf-8")
    out = tmp_path / "pack"
    with FakeHub() as hub:
        hub.add_folder(REPO, source)
        env = {**hub_env(hub, tmp_path), EXPORT_ENV_VAR: str(export_env().folder)}
        done = run_cli("export", REPO, "--out", str(out), "--block", "64", env=env, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    jinja = json.loads((out / "llm_config.json").read_text(encoding="utf-8"))["jinja"]
    assert jinja["chat_template"] == template
    check = json.loads((out / "export_check.json").read_text(encoding="utf-8"))
    assert check["verdict"] == "export verified", check["reasons"]
    prompt = check["chat_prompt"]
    assert prompt["compared"] and prompt["pack_format"] == "jinja"
