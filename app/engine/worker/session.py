"""What the engine worker holds between requests: the loaded pair and the conversation.

No I/O here: the worker feeds it requests and forwards what it emits, and benchmarks
drive it in-process to measure what the process boundary costs.
"""

from __future__ import annotations

import codecs
import dataclasses
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from app.core.infra.errors import EngineError, FileError
from app.core.measure import ram_estimate, verify_agreement
from app.core.measure.drafting_control import DraftingControl
from app.core.measure.metrics import SEEDED
from app.core.pack.advice import read_advice
from app.core.pack.bundle import BundleInfo
from app.core.pack.context_window import ContextWindow
from app.core.pack.verdict import LINEAR_CANNOT_PAY
from app.core.recipe.desktop_settings import read_desktop
from app.core.recipe.drafting_settings import FIXED_DRAFTING, DraftingSettings, read_drafting
from app.core.recipe.files import draft_settings, target_settings
from app.engine.load_rules import planned
from app.engine.protocol import (
    ChatTurn,
    Decoded,
    FailureCode,
    Generate,
    Load,
    Loaded,
    Mode,
    VerifyMethod,
)
from app.engine.worker import agreement
from app.engine.worker.decoder import Decoder, Generation
from app.engine.worker.mnn_llm import MnnLlm
from app.engine.worker.rollback_probe import probe_linear_rollback
from app.engine.worker.round_batch import EmitRounds, RoundBatch
from app.engine.worker.speculative_sampling import SpeculativeSampler
from app.engine.worker.turn_fitting import drop_oldest_turns
from app.engine.worker.work_clock import FINE

log = logging.getLogger("draftdeck.engine.session")

AGREEMENT_PROMPT = "Write a short paragraph about rivers and the towns along them."


def _settings_problem(packs: list[Path]) -> str | None:
    """Why a pack's settings for this computer could not be used (files.py then runs it
    as its recipes say), or None."""
    for pack in packs:
        try:
            read_desktop(pack)
        except FileError as exc:
            return f"{exc}; running the pack as its recipes say"
    return None


class Session:
    def __init__(self) -> None:
        self.target: MnnLlm | None = None
        self.draft: MnnLlm | None = None
        self.target_info: BundleInfo | None = None
        self.draft_info: BundleInfo | None = None
        self.draft_length = 0
        self.linear_rollback: bool | None = None  # what the load-time probe found
        self.target_recipe: dict[str, Any] = {}  # config.json under the caller's keys
        self.verify: VerifyMethod | None = None  # None without a draft
        # What a generation can hold under the recipes in force: the target alone, and
        # both caches when speculating (the same without a draft).
        self.plain_window: ContextWindow | None = None
        self.pair_window: ContextWindow | None = None
        self._conversation: tuple[str, list[int]] | None = None
        # The draft pack's drafting settings, and the controller of adaptive drafting:
        # it lives as long as the pair, so a reply starts from what the last one learned.
        self.drafting = DraftingSettings()
        self.control: DraftingControl | None = None

    # -- load ------------------------------------------------------------------------------

    def load(
        self,
        target: str,
        draft: str | None = None,
        target_config: dict[str, Any] | None = None,
        draft_config: dict[str, Any] | None = None,
        draft_length: int | None = None,
    ) -> Loaded:
        self.unload()
        target_cfg = dict(target_config or {})
        plan = planned(Load(target, draft, target_cfg, draft_config, draft_length))
        t_info, d_info, d = plan.target, plan.draft, plan.draft_length
        target_run, verify_length = plan.target_recipe, plan.verify_length
        estimate, fit = plan.memory, plan.fit
        started = time.perf_counter()
        # Built into locals first: a draft that fails to load leaves nothing half set.
        # MNN reads each pack's config.json itself; what it is handed layers this
        # computer's settings for the pack over it, then the caller's keys (files.py).
        target_llm = MnnLlm(
            t_info.path, target_settings(t_info.path, target_cfg), t_info.vocab_size, verify_length
        )
        draft_llm = (
            MnnLlm(d_info.path, draft_settings(d_info.path, draft_config), d_info.vocab_size)
            if d_info is not None
            else None
        )
        # Linear attention: ask this MNN whether erase_history rolls the state back
        # exactly (rollback_probe.py). If it does, the pair verifies d+1 rows at once
        # and cuts both caches back like KV caches; if not (MNN 3.6.1), the target is
        # verified one token at a time and a linear draft is rebuilt after a rejection:
        # exact, but never faster than plain decoding. One MNN, one LinearAttention op:
        # the target's answer holds for the draft as well.
        rollback = (
            probe_linear_rollback(target_llm, d).exact
            if d_info is not None and t_info.linear_attention
            else None
        )
        stepwise = d_info is not None and t_info.linear_attention and not rollback
        cannot_pay = LINEAR_CANNOT_PAY if stepwise else None
        self.target, self.draft = target_llm, draft_llm
        self.target_recipe = target_run
        self.plain_window, self.pair_window = plan.target_window, plan.window
        self.verify = (
            (VerifyMethod.STEPWISE if stepwise else VerifyMethod.BATCHED) if d_info else None
        )
        self.target_info, self.draft_info, self.draft_length = t_info, d_info, d if d_info else 0
        self.linear_rollback = rollback
        self.drafting, drafting_problem = DraftingSettings(), None
        if d_info is not None:
            try:
                self.drafting = read_drafting(d_info.path)
            except FileError as exc:
                self.drafting = FIXED_DRAFTING  # what the message says: as MNN does
                drafting_problem = f"{exc}; drafting the full length every round"
        memory = target_run.get("memory", "low")
        settings_problem = _settings_problem([t_info.path] + ([d_info.path] if d_info else []))
        return Loaded(
            target=t_info.to_json(),
            draft=d_info.to_json() if d_info else None,
            draft_length=self.draft_length,
            load_seconds=time.perf_counter() - started,
            # Only the target's verify decides the output. A d+1 verify matches single
            # steps bit for bit unless memory "low" quantizes activations at run time;
            # step-by-step verification always does.
            lossless_expected=stepwise or memory != "low",
            verify=self.verify,
            linear_attention=t_info.linear_attention,
            linear_rollback=rollback,
            cannot_pay=cannot_pay,
            memory={"estimate": estimate.to_json(), **fit.to_json()},
            memory_warning=fit.message if fit.level == ram_estimate.TIGHT else None,
            window_tokens=plan.window.tokens,
            plain_window_tokens=plan.target_window.tokens,
            drafting_problem=drafting_problem,
            settings_problem=settings_problem,
        )

    def verify_agreement(
        self, rows: int = agreement.DEFAULT_ROWS, cancelled: Callable[[], bool] = lambda: False
    ) -> verify_agreement.VerifyAgreement:
        """How often the target's verify agrees with its own single steps (cached per
        target, recipe and d; measured with the target alone, whose cache is put back)."""
        target = self._require_target()
        assert self.target_info is not None
        if not self.verify:
            raise EngineError(
                "verify agreement needs a draft: none is loaded", FailureCode.BAD_REQUEST
            )
        d = self.draft_length
        if self.verify == VerifyMethod.STEPWISE:
            checked = agreement.checked_rows(d, rows)
            return verify_agreement.VerifyAgreement(1.0, checked, checked, d, self.verify)
        key = verify_agreement.cache_key(
            self.target_info.path,
            self.target_recipe,
            d,
            f"mnn {_mnn_version()}",
            f"{AGREEMENT_PROMPT}|{rows}",
        )
        found = verify_agreement.cached(key)
        if found is None:
            prompt = target.encode(
                target.chat_prompt([{"role": "user", "content": AGREEMENT_PROMPT}])
            )
            agree = agreement.measure(target, prompt, d, rows, cancelled)
            matched, checked = sum(agree), len(agree)
            found = verify_agreement.VerifyAgreement(
                matched / checked, matched, checked, d, VerifyMethod.BATCHED
            )
            verify_agreement.store(key, found)
        return found

    def encode(self, text: str) -> list[int]:
        """The target tokenizer's ids for a text (no chat template)."""
        return self._require_target().encode(text)

    def decode(self, tokens: Sequence[int]) -> Decoded:
        """The target's text for token ids: per token (a token that ends inside a UTF-8
        sequence shows up with the one that completes it) and joined."""
        target = self._require_target()
        ids = self._token_ids(tokens, "tokens", allow_empty=True)
        text_decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        pieces = [text_decoder.decode(target.token_bytes(t)) for t in ids]
        tail = text_decoder.decode(b"", final=True)  # an unfinished sequence at the end
        if tail:
            pieces[-1] += tail
        return Decoded(tuple(pieces), "".join(pieces))

    def unload(self) -> None:
        for model in (self.target, self.draft):
            if model is not None:
                model.close()
        self.target = self.draft = None
        self.target_info = self.draft_info = None
        self.plain_window = self.pair_window = None
        self._conversation = None
        self.control = None

    def reset(self) -> None:
        for model in (self.target, self.draft):
            if model is not None:
                model.reset()
        self._conversation = None

    # -- generate --------------------------------------------------------------------------

    def prompt_ids(self, request: Generate) -> tuple[list[int], str | None]:
        """Token ids for a request, reusing the previous turn's ids when they still apply."""
        target = self._require_target()
        if request.prompt_ids is not None:
            return self._token_ids(request.prompt_ids, "prompt_ids", allow_empty=False), None
        if request.messages is not None:
            turns = [{"role": m.role, "content": m.content} for m in request.messages]
            text = target.chat_prompt(turns)
        elif request.prompt is None:
            raise EngineError(
                "a generation needs a prompt, messages or prompt_ids", FailureCode.BAD_REQUEST
            )
        elif request.chat:
            text = target.chat_prompt([{"role": "user", "content": request.prompt}])
        else:
            text = request.prompt
        if self._conversation is not None:
            prev_text, prev_ids = self._conversation
            if text.startswith(prev_text):
                # The earlier turns keep the exact ids they were generated with.
                return prev_ids + target.encode(text[len(prev_text) :]), text
        return target.encode(text), text

    def generate(
        self, request: Generate, emit: EmitRounds, cancelled: Callable[[], bool]
    ) -> Generation:
        target = self._require_target()
        mode = self._mode(request)
        if mode == Mode.SPECULATIVE and self.draft is None:
            raise EngineError(
                "speculative decoding needs a draft; none is loaded", FailureCode.BAD_REQUEST
            )
        assert self.target_info is not None
        settings = request.drafting or self.drafting
        sampler = _sampler(request)
        # A seed repeats a sampled reply only when every round drafts the same length.
        seeded = settings.adaptive and sampler is not None and request.seed is not None
        decoder = Decoder(
            target,
            self.draft if mode == Mode.SPECULATIVE else None,
            self.draft_length,
            () if request.ignore_stop else self.target_info.tokenizer.stop_ids,
            # Rebuilt after a rejection unless this MNN rolls their state back.
            target_linear=self.target_info.linear_attention and not self.linear_rollback,
            draft_linear=bool(self.draft_info and self.draft_info.linear_attention)
            and not self.linear_rollback,
            verify_stepwise=self.target_info.linear_attention and not self.linear_rollback,
            sampler=sampler,
            control=self._control(settings) if mode == Mode.SPECULATIVE and not seeded else None,
            stop_below=settings.stop_below,
        )
        window = self.window(mode)
        request, dropped = self._fitted(request, window.tokens)
        ids, text = self.prompt_ids(request)
        if len(ids) >= window.tokens:
            raise EngineError(
                f"The prompt is {len(ids):,} tokens and the {'pair' if decoder.draft else 'model'}"
                f" holds {window.describe()}: nothing would be left for a reply. Shorten the "
                "prompt, start a new chat, or raise max_all_tokens in the recipe.",
                FailureCode.CONTEXT_FULL,
            )
        batch = RoundBatch(emit)
        try:
            result = decoder.generate(
                ids,
                request.max_tokens,
                batch.add,
                cancelled,
                window=window.tokens,
                on_prefill=batch.prefill,
            )
        finally:
            batch.flush()  # rounds made before an error still reach the client
        if request.max_tokens > window.tokens - len(ids):
            result.stats.max_tokens_asked = request.max_tokens  # more than could fit
        result.stats.dropped_messages = dropped
        if seeded and mode == Mode.SPECULATIVE:
            result.stats.drafting = SEEDED
        if text is not None:
            spoken = b"".join(target.token_bytes(t) for t in result.tokens)
            self._conversation = (text + spoken.decode("utf-8", "replace"), ids + result.tokens)
        return result

    def _control(self, settings: DraftingSettings) -> DraftingControl | None:
        """The pair's controller when drafting adaptively (made at its first use)."""
        if not settings.adaptive:
            return None
        if self.control is None:
            advised = self._advised_length()  # in pairs where work is timed by the wall:
            self.control = DraftingControl(self.draft_length, start_length=advised, paired=not FINE)
        self.control.stop_below = settings.stop_below
        return self.control

    def _advised_length(self) -> int:
        """The draft length the pack's authors recommend (runtime_config.json), where
        adaptive drafting starts; 0 when they say none."""
        advice = read_advice(self.draft_info.runtime_config) if self.draft_info else None
        length = advice.recommended.get("draft_predict_length") if advice else None
        return length if isinstance(length, int) and not isinstance(length, bool) else 0

    def _mode(self, request: Generate) -> Mode:
        if request.mode is None:
            return Mode.SPECULATIVE if self.draft else Mode.PLAIN
        try:
            return Mode(request.mode)
        except ValueError:
            words = " or ".join(m.value for m in Mode)
            raise EngineError(
                f"mode {request.mode!r} is not {words}", FailureCode.BAD_REQUEST
            ) from None

    def _fitted(self, request: Generate, window: int) -> tuple[Generate, int]:
        """The request with its oldest turns left out when asked and needed: the prompt
        must leave a reply room for its max_tokens, or a quarter of the window."""
        if not request.drop_oldest or request.messages is None:
            return request, 0
        target = self._require_target()
        room = min(request.max_tokens, window // 4)

        def fits(turns: list[ChatTurn]) -> bool:
            text = target.chat_prompt([{"role": t.role, "content": t.content} for t in turns])
            return len(target.encode(text)) + room <= window

        fitted = drop_oldest_turns(request.messages, lambda t: t.role, fits)
        if fitted is None:
            return request, 0  # not even the newest turn: refused with both numbers below
        kept, dropped = fitted
        return dataclasses.replace(request, messages=tuple(kept)), dropped

    def window(self, mode: Mode) -> ContextWindow:
        """What fits in a generation of `mode`: both caches hold it when speculating."""
        if self.plain_window is None or self.pair_window is None:
            raise EngineError("no model is loaded", FailureCode.NOT_LOADED)
        return self.pair_window if mode == Mode.SPECULATIVE else self.plain_window

    def _token_ids(self, value: Sequence[int], name: str, allow_empty: bool) -> list[int]:
        """`value` as a list of the target's token ids, or a bad_request error naming
        `name` (an id outside the vocabulary makes MNN crash natively)."""
        vocab = self.target_info.vocab_size if self.target_info else None
        if not (value or allow_empty) or not all(
            t >= 0 and (vocab is None or t < vocab) for t in value
        ):
            some = "a" if allow_empty else "a non-empty"
            raise EngineError(
                f"{name} must be {some} list of token ids below {vocab}", FailureCode.BAD_REQUEST
            )
        return list(value)

    def _require_target(self) -> MnnLlm:
        if self.target is None:
            raise EngineError("no model is loaded", FailureCode.NOT_LOADED)
        return self.target


def _sampler(request: Generate) -> SpeculativeSampler | None:
    """The request's sampler; None for plain greedy, which keeps the exact argmax path."""
    settings = request.sampler
    if settings is None or (settings.is_greedy and not settings.steps):
        return None
    return SpeculativeSampler(settings, request.seed)


def _mnn_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("mnn")
    except metadata.PackageNotFoundError:
        return "unknown"
