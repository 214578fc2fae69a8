"""`draftdeck bench` and `generate` ask the load plan before a worker starts: a pair the
engine would refuse is said in the engine's words and no worker is spawned (#28)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from app.cli.main import main
from app.engine.client import engine_client

Fixture = Callable[[str], Path]


@pytest.mark.parametrize("command", ["bench", "generate"])
def test_a_blocked_pair_is_refused_before_a_worker_starts(
    command: str,
    fixture_bundle: Fixture,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def no_worker(self: engine_client.EngineClient) -> None:
        raise AssertionError("a worker was started for a pair the plan refuses")

    monkeypatch.setattr(engine_client.EngineClient, "start", no_worker)
    target, draft = fixture_bundle("qwen3-target"), fixture_bundle("qwen35-draft")
    extra = ["--prompt", "Hi"] if command == "generate" else []
    code = main([command, "--target", str(target), "--draft", str(draft), *extra])
    assert code == 1
    assert "This pair cannot work:" in capsys.readouterr().err
