"""`draftdeck export OWNER/NAME` against the local Hub stand-in: a repo's config.json is
fetched alone and checked before anything else is downloaded."""

from __future__ import annotations

import os
from pathlib import Path

from tests.helpers.cli import run_cli
from tests.helpers.export_env import HF_FIXTURES
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
        done = run_cli("export", REPO, "--out", str(out), env=hub_env(hub, tmp_path), timeout=120)
        asked = [path for _, path, _ in hub.requests if not path.startswith("/api/")]
    assert done.returncode == 2, done.stderr
    assert "quant_block 128 does not divide the hidden size 64" in done.stderr
    assert "(--block 64, or --adjust)" in done.stderr
    assert asked and all(path.endswith("/config.json") for path in asked), asked
    assert not out.exists()
