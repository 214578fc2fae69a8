"""The worker's teacher-forced logits (ForcedLogits) on a committed bundle: row i is what
the pack predicts after token i, so on a greedy continuation each row's top-1 is the next
token greedy decoding chose; the logits reach a .npy file, not the pipe."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from app.core.infra.errors import EngineError
from app.engine.client.engine_client import EngineClient
from app.engine.protocol import ForcedLogits, Generate, Load, Mode
from tests.helpers.paths import FIXTURES

TARGET = FIXTURES / "qwen3-target"
NORMAL = {"memory": "normal", "thread_num": 1}


def test_teacher_forced_rows_predict_the_greedy_continuation(tmp_path: Path) -> None:
    with EngineClient() as client:
        loaded = client.run(Load(target=str(TARGET), target_config=NORMAL), timeout=120)
        prompt = (11, 22, 33, 44)
        done = client.run(
            Generate(prompt_ids=prompt, max_tokens=10, ignore_stop=True, mode=Mode.PLAIN),
            timeout=120,
        )
        ids = prompt + done.tokens
        written = client.run(ForcedLogits((ids, prompt), str(tmp_path)), timeout=120)
        # The cache was emptied: a generation afterwards starts from nothing again.
        again = client.run(
            Generate(prompt_ids=prompt, max_tokens=10, ignore_stop=True, mode=Mode.PLAIN),
            timeout=120,
        )
    assert written.files == (str(tmp_path / "0.pack.npy"), str(tmp_path / "1.pack.npy"))
    rows = np.load(written.files[0])
    assert rows.shape == (len(ids), loaded.target["vocab_size"]) and rows.dtype == np.float32
    predicted = tuple(int(t) for t in np.argmax(rows[len(prompt) - 1 : -1], axis=-1))
    assert predicted == done.tokens
    assert np.array_equal(np.load(written.files[1]), rows[: len(prompt)])
    assert again.tokens == done.tokens


def test_no_folder_for_the_logits_is_refused(tmp_path: Path) -> None:
    with EngineClient() as client:
        client.run(Load(target=str(TARGET), target_config=NORMAL), timeout=120)
        with pytest.raises(EngineError, match="no such folder"):
            client.run(ForcedLogits(((1, 2),), str(tmp_path / "missing")), timeout=60)
