"""Speculative decoding on two MNN instances, and plain decoding as its d=0 case.

Greedy by default (the exact comparison: the output is the target's own argmax
sequence). With a `SpeculativeSampler` each token is drawn by the recipe's sampler and a
draft token is accepted by the speculative-sampling rule (speculative_sampling.py), so
the output is distributed exactly as the target's own sampling would be.

Invariant at the start of every round, with `seq` = prompt + tokens generated so far:
the target's cache holds seq[:-1] (the newest token is fed by the next verify) and the
draft's cache holds a prefix of seq that is one or two tokens short (`pending`), or of
seq's latest tokens only, when adaptive drafting tries the draft again after standing
aside (PROBE_WINDOW).

A round: the draft feeds `pending` and proposes t1..tk one step at a time (k = d, or
fewer when adaptive drafting or the per-round stop ends the round early: drafting.py);
the target feeds [last, t1..tk] in one forward and returns k+1 logit rows g0..gk; the
longest prefix with t_i == g_(i-1) is accepted, then g_n is added (a correction when
n < k, a bonus when all matched). Both caches are cut back to what stays valid. A round
the controller plans with k = 0 (stepped aside, or measuring the plain step) is a
plain target step.

Linear attention (Qwen3.5) keeps one running state per layer that every forward
updates in place. On MNN 3.6.1 `erase_history` does not take rejected tokens out of it
(a partial erase restores a prefix-cache snapshot or zeroes the state), and pymnn has
no call that reads or restores it; only a reset and a full re-prefill is exact. So a
model flagged `*_linear` here is reset and re-prefilled after a rejection, and a target
flagged `verify_stepwise` is verified one token at a time, which only ever feeds
accepted tokens and so never needs a rollback. Both are exact and neither can beat
plain decoding: each accepted token still costs the target a step of its own. The
session sets these flags from a probe at load (rollback_probe.py): an MNN that rolls
the state back exactly gets the batched verify and plain cut-backs instead.

That is the reason for stepwise verification, not rotary positions. MNN 3.6.1 does
fill only the first of the three mrope position rows of a verify input, but only in
text-only bundles and only for the length its verify module was made for at load
(`draft_predict_length` + 1); the session loads mrope targets with another length, and
their d+1 verify rows then match one-token steps.
"""

from __future__ import annotations

import codecs
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from app.core.measure.drafting_check import Judgement
from app.core.measure.drafting_control import DraftingControl
from app.core.measure.metrics import ADAPTIVE, DecodeStats, RoundStats
from app.core.measure.step_times import RoundMeasure
from app.engine.protocol import Mode, StopReason
from app.engine.worker.drafting import draft_tokens
from app.engine.worker.mnn_llm import Logits, MnnLlm
from app.engine.worker.prefill import OnPrefill, PrefillCancelled, prefill
from app.engine.worker.speculative_sampling import SpeculativeSampler
from app.engine.worker.verify import cut_back, verify_sampled, verify_stepwise
from app.engine.worker.work_clock import Mark, work_seconds

TARGET, DRAFT = "target", "draft"
CATCH_UP = 2  # a round's first draft forward feeds up to this many pending tokens
# Trying drafting again after standing aside, the draft reads at most this many of the
# latest tokens: reading all it missed (hundreds) can cost more than the plain steps
# saved, and a draft's proposals need not see everything (the verify keeps it exact).
PROBE_WINDOW = 64


@dataclass
class RoundOutput:
    tokens: list[int]
    from_draft: list[bool]
    text: str
    stats: RoundStats | None  # None for the first token, which the prefill produced
    pieces: list[str]  # the text of each token (joined: `text`)


@dataclass
class Generation:
    tokens: list[int]
    text: str
    stats: DecodeStats
    stopped_by: StopReason


class Decoder:
    def __init__(
        self,
        target: MnnLlm,
        draft: MnnLlm | None,
        draft_length: int,
        stop_ids: Sequence[int],
        target_linear: bool = False,
        draft_linear: bool = False,
        verify_stepwise: bool = False,
        sampler: SpeculativeSampler | None = None,
        control: DraftingControl | None = None,
        stop_below: float = 0.0,
    ) -> None:
        """`control`: adaptive drafting (each round's length up to `draft_length`, and
        stepping aside); without it every round drafts `draft_length` tokens, or fewer
        when the draft's top-1 probability falls below `stop_below`."""
        if draft is not None and draft_length < 1:
            raise ValueError("speculative decoding needs a draft length of at least 1")
        self.target = target
        self.draft = draft
        self.d = draft_length if draft is not None else 0
        self.stop_ids = frozenset(stop_ids)
        self.target_linear = target_linear
        self.draft_linear = draft_linear
        self.verify_stepwise = verify_stepwise
        self.sampler = sampler  # None: greedy
        self.control = control if draft is not None else None
        self.stop_below = stop_below
        self._cycle_start = Mark(0.0, 0.0)  # when the last round ended (generate sets it)
        # What the latest round measured, recorded once its text is out; what the
        # controller judged, said with the round after it.
        self._measure: RoundMeasure | None = None
        self._judged: Judgement | None = None
        # Where in the sequence the draft's cache starts: 0 but after a probe's window.
        self._draft_start = 0

    @property
    def mode(self) -> Mode:
        return Mode.SPECULATIVE if self.draft is not None else Mode.PLAIN

    def generate(
        self,
        prompt: Sequence[int],
        max_tokens: int,
        on_round: Callable[[RoundOutput], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
        window: int = 0,
        on_prefill: OnPrefill | None = None,
    ) -> Generation:
        """`window`: the most tokens the caches may hold, prompt included (0: no limit);
        generation stops with CONTEXT_FULL when the sequence fills it."""
        stats = self._start_stats(prompt, max_tokens, window)
        text_decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        seq = list(prompt)
        out: list[int] = []
        texts: list[str] = []

        start = time.perf_counter()
        try:
            row, stats.prefill_fed = self._prefill(self.target, seq, on_prefill, cancelled)
        except PrefillCancelled:
            stats.prefill_seconds = time.perf_counter() - start
            return Generation([], "", stats, StopReason.CANCELLED)
        first = self._pick(row, seq)
        stats.prefill_seconds = time.perf_counter() - start
        # The draft reads the prompt only when a round needs it, after the first token
        # is out (a reply that ends at once never pays for it).
        draft_ready = self.draft is None

        self._cycle_start = Mark.now()
        decode_start = self._cycle_start.wall
        # The prefill's logits give the first token: the target's own, outside any round.
        new, flags, rnd = [first], [False], None
        while True:
            keep, stopped_by = self._cut(new, len(out), max_tokens, len(seq), window)
            new, flags = new[:keep], flags[:keep]
            if rnd is None:
                stats.add_first_token(keep)
            else:
                rnd.emitted = keep
                stats.add_round(rnd)
            out.extend(new)
            seq.extend(new)
            # Text per token, so a view can mark which words came from the draft. A token
            # that ends inside a UTF-8 sequence shows up with the token that completes it.
            pieces = [self._piece(t, text_decoder) for t in new]
            text = "".join(pieces)
            texts.append(text)
            if on_round is not None:
                on_round(RoundOutput(new, flags, text, rnd, pieces))
            self._judge()
            if stopped_by:
                break
            if cancelled is not None and cancelled():
                stopped_by = StopReason.CANCELLED
                break
            # A verify puts d more tokens in the target's cache: near the end of the
            # window the target steps alone.
            alone = bool(window) and len(seq) + self.d > window
            cap = 0 if alone else self.control.plan() if self.control else self.d
            if self.control is not None:
                # A round emits up to cap + 1 tokens, and those past max_tokens are cut:
                # adaptive drafting does not draft them (fixed drafting does, as MNN).
                cap = min(cap, max_tokens - len(out) - 1)
            # After plain steps (stepped aside) the draft catches up apart from the round,
            # so the round's time is its drafting and verifying alone.
            behind = self._draft_behind(seq)
            if cap and (not draft_ready or behind > CATCH_UP):
                if not self._draft_reads(seq, stats, on_prefill, cancelled):
                    stopped_by = StopReason.CANCELLED
                    break
                draft_ready = True
            new, flags, rnd = self._round(seq, cap, planned=not alone)
        stats.decode_seconds = time.perf_counter() - decode_start
        if self._judged is not None:  # judged on the reply's last round: said with its figures
            stats.add_judgement(*self._notes())
        texts.append(text_decoder.decode(b"", final=True))
        assert stopped_by is not None  # each way out of the loop says why
        return Generation(out, "".join(texts), stats, stopped_by)

    # -- pieces ----------------------------------------------------------------------------

    def _start_stats(self, prompt: Sequence[int], max_tokens: int, window: int) -> DecodeStats:
        """The request checked, and the figures it starts with."""
        if not prompt:
            raise ValueError("the prompt is empty")
        if max_tokens < 1:
            raise ValueError("max_tokens must be at least 1")
        if window and len(prompt) >= window:
            raise ValueError("the prompt fills the context window")
        stats = DecodeStats(mode=self.mode, draft_length=self.d, prompt_tokens=len(prompt))
        if self.control is not None:
            stats.drafting = ADAPTIVE
        if self.sampler is not None:
            stats.sampler, stats.seed = self.sampler.settings.describe(), self.sampler.seed
        stats.window_tokens = window
        return stats

    def _piece(self, token: int, text_decoder: codecs.IncrementalDecoder) -> str:
        return "" if token in self.stop_ids else text_decoder.decode(self.target.token_bytes(token))

    def _draft_behind(self, seq: list[int]) -> int:
        """Tokens of `seq` (but its newest) the draft has not read."""
        if self.draft is None:
            return 0
        return len(seq) - 1 - self._draft_start - len(self.draft.kv_tokens)

    def _draft_reads(
        self,
        seq: list[int],
        stats: DecodeStats,
        on_prefill: OnPrefill | None,
        cancelled: Callable[[], bool] | None,
    ) -> bool:
        """The draft reads the sequence but its newest token (a probe: only the latest
        PROBE_WINDOW of what it missed); False when cancelled."""
        assert self.draft is not None
        probing = self.control is not None and self.control.probing and not self.draft_linear
        if probing and self._draft_behind(seq) > PROBE_WINDOW:
            self._draft_start = max(len(seq) - 1 - PROBE_WINDOW, 0)
        draft_start = Mark.now()
        try:
            self._prefill(self.draft, seq[self._draft_start : -1] or seq, on_prefill, cancelled)
        except PrefillCancelled:
            return False
        finally:
            spent = draft_start.since()
            stats.draft_prefill_seconds += spent.wall
            # Not the next round's time: whether drafting pays is judged on rounds. What
            # a read costs is weighed by the controller when it steps aside (the gap).
            self._cycle_start = self._cycle_start.after(spent)
            if self.control is not None:
                self.control.read(spent.work)
        return True

    def _cut(
        self, tokens: list[int], produced: int, max_tokens: int, length: int, window: int
    ) -> tuple[int, StopReason | None]:
        """How many of the new tokens to keep, and why generation stops (or None), with
        `length` tokens in the sequence before them."""
        for i, token in enumerate(tokens):
            if token in self.stop_ids:
                return i + 1, StopReason.STOP_TOKEN
            if window and length + i + 1 >= window:
                return i + 1, StopReason.CONTEXT_FULL
            if produced + i + 1 >= max_tokens:
                return i + 1, StopReason.MAX_TOKENS
        return len(tokens), None

    def _pick(self, row: Logits, history: list[int]) -> int:
        """The target's own next token: its argmax, or the sampler's draw."""
        if self.sampler is None:
            return int(np.argmax(row))
        return self.sampler.draw(row, history)[0]

    def _prefill(
        self,
        model: MnnLlm,
        seq: list[int],
        on_prefill: OnPrefill | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> tuple[Logits, int]:
        if model is self.target:
            return prefill(model, seq, TARGET, self.target_linear, on_prefill, cancelled)
        return prefill(model, seq, DRAFT, self.draft_linear, on_prefill, cancelled)

    def _judge(self) -> None:
        """The round just out, timed whole: planned, drafted, verified, and the loop's own
        work on its tokens (cutting, decoding text, sending), which on a tiny model costs
        as much as a forward and so counts in what adaptive drafting weighs. Timed from
        the end of the round before (the draft's reads apart), so a round that emits
        seven tokens is not charged the next round's work on them: plain and speculative
        rounds alternate when the controller judges."""
        cycle = self._cycle_start.since()
        self._cycle_start = self._cycle_start.after(cycle)
        m, self._measure = self._measure, None
        if m is None or self.control is None:
            return
        m.round_seconds, m.wall_seconds = cycle.work, cycle.wall
        judged = self.control.record(m)
        if judged is not None:
            self._judged = judged

    def _notes(self) -> tuple[str, str]:
        """What the controller judged last, unsaid so far: why it stepped aside, or why
        it went on drafting on a busy computer."""
        judged, self._judged = self._judged, None
        if judged is None:
            return "", ""
        return (judged.describe(), "") if judged.aside else ("", judged.describe())

    def _round(
        self, seq: list[int], cap: int, planned: bool = True
    ) -> tuple[list[int], list[bool], RoundStats]:
        """One round drafting at most `cap` tokens; 0: a plain target step even with a
        draft (its cache catches up on the next speculative round). `planned`: the
        controller chose `cap` and hears what the round measured."""
        target, draft = self.target, self.draft
        last = seq[-1]
        if draft is None or cap == 0:
            aside = self.control is not None and self.control.stepped_aside
            # Standing aside, a step is only counted: read no more clocks than plain does.
            timed = self.control is not None and planned and not aside
            t0, w0 = time.perf_counter(), work_seconds() if timed else 0.0
            rows = target.forward([last])
            token = self._pick(rows[-1], seq)  # sampling time counts as the step's
            wall = time.perf_counter() - t0
            note, kept = self._notes()
            stats = RoundStats(0, 0, 1, 0, 0.0, wall, aside=aside, note=note, kept_note=kept)
            if self.control is not None and planned:
                self._measure = RoundMeasure(0, 0, 1, work_seconds() - w0 if timed else wall)
            return [token], [False], stats

        lengths_fed = len(draft.lengths_fed) + len(target.lengths_fed)
        began = Mark.now()
        proposal, qs, forwards, later = draft_tokens(
            draft,
            seq,
            self._draft_start,
            cap,
            self.target.vocab_size,
            self.sampler,
            self.control,
            self.stop_below,
        )
        drafting = began.since()

        t1 = Mark.now()
        expected: list[float] = []
        if self.sampler is not None:
            n, guess, target_forwards, expected = verify_sampled(
                target, self.sampler, seq, proposal, qs, self.verify_stepwise
            )
        elif self.verify_stepwise:
            n, guess, target_forwards = verify_stepwise(target, last, proposal)
        else:
            # Verify all k + 1 positions in one target forward.
            guesses = np.argmax(target.forward([last, *proposal]), axis=-1)
            n = 0
            while n < len(proposal) and proposal[n] == int(guesses[n]):
                n += 1
            guess, target_forwards = int(guesses[n]), 1
        verifying = t1.since()
        new_tokens = [*proposal[:n], guess]

        # The draft's cache holds every token it drafted but the last: what stays valid
        # is seq and the accepted part (a cut beyond the cache is none).
        base = len(seq)
        cut_back(target, base + n, self.target_linear, seq, proposal[:n])
        start = self._draft_start
        cut_back(draft, base + n - start, self.draft_linear, seq[start:], proposal[:n])
        k = len(proposal)
        note, kept = self._notes()
        if self.control is not None:
            self._measure = RoundMeasure(
                drafted=k,
                accepted=n,
                emitted=len(new_tokens),
                target_seconds=verifying.work,
                draft_seconds=drafting.work,
                draft_forwards=forwards,
                later_seconds=later,
                # A length either model never fed before: MNN cloned a module this round.
                cloned=len(draft.lengths_fed) + len(target.lengths_fed) > lengths_fed,
            )
        flags = [True] * n + [False]
        stats = RoundStats(
            k,
            n,
            len(new_tokens),
            forwards,
            drafting.wall,
            verifying.wall,
            target_forwards,
            tuple(expected),
            note=note,
            kept_note=kept,
        )
        return new_tokens, flags, stats
