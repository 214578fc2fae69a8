"""What the engine worker holds between requests: the loaded pair and the conversation.

No I/O here: the worker feeds it requests and forwards what it emits, and benchmarks
drive it in-process to measure what the process boundary costs.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.core.bundle import BundleInfo, read_bundle
from app.core.compat import assess
from app.core.errors import EngineError, FileError
from app.core.jsonfile import read_json_object
from app.engine.decoder import Decoder, Generation, RoundOutput
from app.engine.mnn_llm import MnnLlm

log = logging.getLogger("draftdeck.engine.session")

Emit = Callable[[dict[str, Any]], None]
DEFAULT_DRAFT_LENGTH = 3  # MNN's own default for draft_predict_length
FLUSH_SECONDS = 0.02  # batch round events: the GUI needs ~10 Hz, not one per token


def draft_overrides(draft: Path, overrides: dict[str, Any] | None) -> dict[str, Any]:
    """The draft runs with its pack's recipe (config_cpu.json) under the caller's keys."""
    recipe = draft / "config_cpu.json"
    merged = read_json_object(recipe) if recipe.is_file() else {}
    merged.update(overrides or {})
    return merged


class Session:
    def __init__(self) -> None:
        self.target: MnnLlm | None = None
        self.draft: MnnLlm | None = None
        self.target_info: BundleInfo | None = None
        self.draft_info: BundleInfo | None = None
        self.draft_length = 0
        self._conversation: tuple[str, list[int]] | None = None

    # -- load ------------------------------------------------------------------------------

    def load(
        self,
        target: str,
        draft: str | None = None,
        target_config: dict[str, Any] | None = None,
        draft_config: dict[str, Any] | None = None,
        draft_length: int | None = None,
    ) -> dict[str, Any]:
        self.unload()
        target_cfg = dict(target_config or {})
        try:
            t_info = read_bundle(Path(target))
            d_info = read_bundle(Path(draft)) if draft else None
        except FileError as exc:
            raise EngineError(str(exc), exc.code) from None
        if d_info is not None:
            verdict = assess(t_info, d_info)
            if verdict.blocked:
                raise EngineError(
                    f"This pair cannot work: {verdict.summary()}",
                    "blocked_pair",
                    [r.to_json() for r in verdict.reasons],
                )
        d = draft_length or int(target_cfg.get("draft_predict_length", DEFAULT_DRAFT_LENGTH))
        if d < 1 or d > 16:
            raise EngineError(f"draft length {d} is out of range (1 to 16)", "bad_request")
        started = time.perf_counter()
        # mrope targets verify step by step (see decoder.py), so need no verify module.
        verify = d + 1 if d_info and not t_info.mrope else 0
        self.target = MnnLlm(t_info.path, target_cfg, verify_length=verify)
        if d_info is not None:
            self.draft = MnnLlm(d_info.path, draft_overrides(d_info.path, draft_config))
        self.target_info, self.draft_info, self.draft_length = t_info, d_info, d if d_info else 0
        return {
            "target": t_info.to_json(),
            "draft": d_info.to_json() if d_info else None,
            "draft_length": self.draft_length,
            "load_seconds": time.perf_counter() - started,
            # A d+1 verify matches single steps bit for bit only without run-time
            # activation quantization (memory "low").
            "lossless_expected": self.target.config.get("memory", "low") != "low"
            and (self.draft is None or self.draft.config.get("memory", "low") != "low"),
            "verify": "stepwise" if t_info.mrope else "batched",
            "linear_attention": t_info.linear_attention,
        }

    def unload(self) -> None:
        self.target = self.draft = None
        self.target_info = self.draft_info = None
        self._conversation = None

    def reset(self) -> None:
        for model in (self.target, self.draft):
            if model is not None:
                model.reset()
        self._conversation = None

    # -- generate --------------------------------------------------------------------------

    def prompt_ids(self, request: dict[str, Any]) -> tuple[list[int], str | None]:
        """Token ids for a request, reusing the previous turn's ids when they still apply."""
        target = self._require_target()
        if "prompt_ids" in request:
            return [int(t) for t in request["prompt_ids"]], None
        if "messages" in request:
            text = target.chat_prompt(request["messages"])
        elif request.get("chat", True):
            text = target.chat_prompt([{"role": "user", "content": str(request["prompt"])}])
        else:
            text = str(request["prompt"])
        if self._conversation is not None:
            prev_text, prev_ids = self._conversation
            if text.startswith(prev_text):
                # The earlier turns keep the exact ids they were generated with.
                return prev_ids + target.encode(text[len(prev_text) :]), text
        return target.encode(text), text

    def generate(
        self, request: dict[str, Any], emit: Emit, cancelled: Callable[[], bool]
    ) -> Generation:
        target = self._require_target()
        mode = request.get("mode", "speculative" if self.draft else "plain")
        if mode == "speculative" and self.draft is None:
            raise EngineError("speculative decoding needs a draft; none is loaded", "bad_request")
        assert self.target_info is not None
        decoder = Decoder(
            target,
            self.draft if mode == "speculative" else None,
            self.draft_length,
            () if request.get("ignore_stop") else self.target_info.tokenizer.stop_ids,
            target_linear=self.target_info.linear_attention,
            draft_linear=bool(self.draft_info and self.draft_info.linear_attention),
            verify_stepwise=self.target_info.mrope,
        )
        ids, text = self.prompt_ids(request)
        batch = _RoundBatch(emit, request.get("id"))
        result = decoder.generate(ids, int(request.get("max_tokens", 256)), batch.add, cancelled)
        batch.flush()
        if text is not None:
            spoken = b"".join(target.token_bytes(t) for t in result.tokens)
            self._conversation = (text + spoken.decode("utf-8", "replace"), ids + result.tokens)
        return result

    def _require_target(self) -> MnnLlm:
        if self.target is None:
            raise EngineError("no model is loaded", "not_loaded")
        return self.target


class _RoundBatch:
    """Collects rounds and emits them together every FLUSH_SECONDS."""

    def __init__(self, emit: Emit, request_id: Any) -> None:
        self._emit = emit
        self._id = request_id
        self._last = time.perf_counter()
        self._clear()

    def _clear(self) -> None:
        self.tokens: list[int] = []
        self.flags: list[int] = []
        self.text: list[str] = []
        self.rounds: list[list[float]] = []

    def add(self, out: RoundOutput) -> None:
        self.tokens.extend(out.tokens)
        self.flags.extend(int(f) for f in out.from_draft)
        self.text.append(out.text)
        r = out.stats
        if r is not None:
            self.rounds.append(
                [r.emitted, r.accepted, r.drafted, r.draft_seconds, r.target_seconds]
            )
        if time.perf_counter() - self._last >= FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        if self.tokens:
            self._emit(
                {
                    "event": "rounds",
                    "id": self._id,
                    "tokens": self.tokens,
                    "draft": self.flags,
                    "text": "".join(self.text),
                    "rounds": self.rounds,
                }
            )
        self._clear()
        self._last = time.perf_counter()
