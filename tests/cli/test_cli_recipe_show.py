"""`recipe show` titles a pack's config.json by the pack's role, as the Library reads
it: a draft pack's config.json holds the draft's own settings, not a target's."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from app.cli.main import main
from app.core.pack.bundle import read_bundle

Copy = Callable[..., Path]


def _titles(pack: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """The lines that title a file: the draft recipe's and config.json's."""
    assert main(["recipe", "show", str(pack)]) == 0
    return [line for line in capsys.readouterr().out.splitlines() if line.endswith(".json)")]


@pytest.mark.parametrize(
    ("name", "role", "title"),
    [("qwen3-draft-noisy", "draft", "Draft settings"), ("fast-target", "either", "Model settings")],
)
def test_config_json_is_titled_by_the_pack_s_role(
    bundle_copy: Copy, capsys: pytest.CaptureFixture[str], name: str, role: str, title: str
) -> None:
    pack = bundle_copy(name)
    assert read_bundle(pack).role == role  # as the Library lists it
    titles = _titles(pack, capsys)
    assert f"{title} ({pack / 'config.json'})" in titles
    assert not any(t.startswith("Target settings") for t in titles)
    assert main(["recipe", "show", str(pack), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["role"] == role and shown["target_config"]["file"] == str(pack / "config.json")


def test_a_pack_that_cannot_be_read_is_titled_plainly(
    bundle_copy: Copy, capsys: pytest.CaptureFixture[str]
) -> None:
    """No role to go by (its graph is gone): its recipes still show, config.json as
    the pack's settings."""
    pack = bundle_copy("qwen3-draft-noisy")
    (pack / "llm.mnn").unlink()
    assert f"Settings ({pack / 'config.json'})" in _titles(pack, capsys)
    assert main(["recipe", "show", str(pack), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["role"] is None
