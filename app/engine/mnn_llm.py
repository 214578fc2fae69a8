"""One MNN LLM instance, stepped token by token through public pymnn calls.

Facts this relies on (MNN 3.6.1, see DESIGN.md):
- `set_config()` takes a dict and must come before `_c_obj.load()`, which returns a bool;
  `forward()` after a failed load can segfault, so it is never called then.
- `speculative_type` + `draft_predict_length` make the target prepare a verify module:
  a forward of exactly d+1 tokens in decode mode then returns logits for every row.
- `erase_history(keep, 0)` is lazy: it takes effect at the next forward, so the count
  of tokens in the KV cache is tracked here, not read back.
- With `reuse_kv`, `generate_init()` keeps the cache and switches to prefill mode; the
  next multi-token forward then uses the prefill module (no module clone per length).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from app.core.bundle import TOKENIZER_CANDIDATES
from app.core.errors import EngineError

log = logging.getLogger("draftdeck.engine.mnn")

Logits = npt.NDArray[np.float32]


def runtime_config(bundle: Path, overrides: dict[str, Any]) -> dict[str, Any]:
    """Settings passed to MNN: the caller's overrides plus the fixes every pack needs."""
    config = dict(overrides)
    if "tokenizer_file" not in config:
        from app.core.jsonfile import read_json_object

        named = read_json_object(bundle / "config.json").get("tokenizer_file")
        if not (isinstance(named, str) and (bundle / named).is_file()):
            # Stock MNN defaults to tokenizer.txt; llmexport 0.0.5 writes tokenizer.mtok.
            for candidate in TOKENIZER_CANDIDATES:
                if (bundle / candidate).is_file():
                    config["tokenizer_file"] = candidate
                    break
    # The KV cache must survive generate_init() so turns and rounds can build on it.
    config["reuse_kv"] = True
    return config


class MnnLlm:
    def __init__(self, bundle: Path, overrides: dict[str, Any], verify_length: int = 0) -> None:
        import MNN.llm as mnn_llm  # only the engine imports MNN

        self.bundle = bundle
        config = runtime_config(bundle, overrides)
        if verify_length > 1:
            config["speculative_type"] = "draftmodel"
            config["draft_predict_length"] = verify_length - 1
        self.config = config
        self._llm = mnn_llm.create(str(bundle / "config.json"))
        self._llm.set_config(config)
        if not self._llm._c_obj.load():
            raise EngineError(f"{bundle}: MNN could not load this bundle", "load_failed")
        self._c = self._llm._c_obj
        self.kv_tokens: list[int] = []  # exactly what the KV cache holds
        self._c.generate_init()

    # -- text --------------------------------------------------------------------------

    def encode(self, text: str) -> list[int]:
        return list(self._c.tokenizer_encode(text))

    def chat_prompt(self, messages: Sequence[dict[str, str]]) -> str:
        return str(self._c.apply_chat_template([dict(m) for m in messages]))

    def token_bytes(self, token: int) -> bytes:
        """The raw bytes of one token, even when they end inside a UTF-8 sequence."""
        try:
            return str(self._c.tokenizer_decode(token)).encode("utf-8")
        except UnicodeDecodeError as exc:
            return bytes(exc.object)

    # -- cache -------------------------------------------------------------------------

    def reset(self) -> None:
        self._c.reset()
        self.kv_tokens = []
        self._c.generate_init()

    def truncate(self, keep: int) -> None:
        """Drop cached tokens after the first `keep` (applied at the next forward)."""
        if keep < len(self.kv_tokens):
            self._c.erase_history(keep, 0)
            del self.kv_tokens[keep:]

    def begin_prefill(self) -> None:
        """Switch to prefill mode for the next forward, keeping the cache."""
        self._c.generate_init()

    # -- stepping ----------------------------------------------------------------------

    def forward(self, tokens: Sequence[int]) -> Logits:
        """Feed tokens; returns the logits rows MNN gives back (last, or all on verify)."""
        out = self._c.forward(list(tokens))
        if out is None:
            raise EngineError(f"{self.bundle}: MNN forward failed", "forward_failed")
        self.kv_tokens.extend(tokens)
        data = np.asarray(out.read())
        rows: Logits = data.reshape(-1, data.shape[-1])
        return rows
