"""The engine client seen from Qt: non-blocking calls, typed events as signals.

The worker's events are collected by the client's reader thread, which cues the
bridge after each one; the bridge then drains them on the GUI thread (one drain per
burst: the worker already batches rounds every 20 ms), so the window never waits on
the engine and an idle window has no engine wake-ups, yet a worker that dies while
idle is noticed at once. Starting the worker (a second or so while MNN imports) runs
in the background, owned by the bridge. While a request is pending, a timer asks the
client's watchdog every second whether the worker got stuck (SIGSTOP, a deadlock): a
stuck worker is killed and reported like a crash, so Chat offers Restart.

A load is planned first (core/measure/load_plan.py, the rules the worker applies as its
guard): a pair that cannot work together is refused here, without a round trip, or
loads its target alone when asked. The bridge alone holds what is known of the pair (a
PairState, pair_state.py, published on `pair_changed`) and alone replays the last load
into a fresh worker on Restart.

What you save is what runs: the bridge keeps the run recipes its last load was planned
with, and before each reply (and when Chat is shown) reads the files again; a key that
takes effect only at load (core/recipe/key_timing.py: all but the sampler's) saved
since then loads the pair again first, and the reply follows it on the engine's lane.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from app.core.infra.errors import EngineCrashed
from app.core.infra.words import Word
from app.core.measure.load_plan import Refusal
from app.core.recipe.files import run_recipes
from app.core.recipe.key_timing import load_time_changes
from app.engine.client.engine_client import EngineClient
from app.engine.load_rules import plan_request
from app.engine.protocol import (
    AgreementMeasured,
    Done,
    Event,
    Exit,
    Failed,
    FailureCode,
    Generate,
    Load,
    Loaded,
    MeasureAgreement,
    Request,
    Reset,
    Rounds,
)
from app.ui.base import background
from app.ui.base.pair_state import Pair, PairState

WATCH_MS = 1000


class EngineState(Word):
    """What the engine is doing for the window (state_changed)."""

    STOPPED = "stopped"
    STARTING = "starting"
    LOADING = "loading"
    READY = "ready"
    GENERATING = "generating"
    ERROR = "error"  # the last load was refused or failed
    CRASHED = "crashed"


STOPPED, STARTING, LOADING, READY = (
    EngineState.STOPPED,
    EngineState.STARTING,
    EngineState.LOADING,
    EngineState.READY,
)
GENERATING, ERROR, CRASHED = EngineState.GENERATING, EngineState.ERROR, EngineState.CRASHED


def _pair_of(request: Load) -> Pair:
    return Path(request.target), Path(request.draft) if request.draft else None


def _run_recipes(request: Load) -> tuple[dict[str, Any], dict[str, Any]]:
    draft = Path(request.draft) if request.draft else None
    return run_recipes(Path(request.target), draft, request.target_config, request.draft_config)


class EngineBridge(QObject):
    state_changed = Signal(object)  # an EngineState
    pair_changed = Signal(object)  # PairState: a fact of the pair changed
    rounds = Signal(object)  # Rounds with tokens
    prefilling = Signal(str, int, int)  # model ("target", "draft"), tokens read, to read
    finished = Signal(object)  # Done
    failed = Signal(str, str)  # code, message
    crashed = Signal(str)
    reloading = Signal(list)  # the load-time recipe keys saved since the last load
    _events_arrived = Signal()  # from the client's reader thread

    def __init__(self, client_factory: Callable[[], EngineClient] = EngineClient) -> None:
        super().__init__()
        self.client = client_factory()
        self.state = STOPPED
        self.pair_state = PairState()
        # What load() was last asked (replayed by restart), and what the engine is asked
        # to load for it (None: the plan refused it).
        self._chosen: tuple[Load, bool] | None = None
        self.load_request: Load | None = None
        # The last load planned (its target alone if so) and the run recipes it read.
        self._planned: tuple[Load, tuple[dict[str, Any], dict[str, Any]]] | None = None
        self._pending: dict[int, type[Request[Any]]] = {}  # request id -> its kind
        self.generating_id: int | None = None
        # The verify agreement runs on the engine's lane right after a load; a reply
        # sent meanwhile cancels it (it would wait behind it) and it runs after the reply.
        self.agreement_id: int | None = None
        self._drain_queued = threading.Event()
        self._shut_down = False
        self._events_arrived.connect(self.poll)  # queued: emitted on the reader thread
        self._watch = QTimer(self)
        self._watch.setInterval(WATCH_MS)
        self._watch.timeout.connect(self.client.kill_if_stuck)  # its Exit reports it
        self.client.on_event = self._on_event_arrived

    def _set_state(self, state: EngineState) -> None:
        if state != self.state:
            self.state = state
            self.state_changed.emit(state)

    def _publish(self, **changes: Any) -> None:
        self._publish_state(replace(self.pair_state, **changes))

    def _publish_state(self, state: PairState) -> None:
        if state != self.pair_state:
            self.pair_state = state
            self.pair_changed.emit(state)

    # -- requests --------------------------------------------------------------------------

    def _send(self, request: Request[Any]) -> int:
        request_id = self.client.send(request)
        self._pending[request_id] = type(request)
        self._watch.start()
        return request_id

    def load(self, request: Load, alone_if_blocked: bool = False) -> Refusal | None:
        """Load a pair once its load plan agrees, starting the worker if needed. A pair
        that cannot work together is refused at once, or with `alone_if_blocked` its
        target loads alone (Plain mode). What the window knows of the pair (blocked,
        alone, the last error) carries over to a load of the same pair (a mode switch, a
        restart); what the engine said of its last load does not. Returns the plan's
        refusal, if it refused."""
        self._chosen = (request, alone_if_blocked)
        pair = _pair_of(request)
        plan = plan_request(request)
        blocked = (
            plan.message
            if isinstance(plan, Refusal) and plan.code == FailureCode.BLOCKED_PAIR
            else ""
        )
        alone = bool(blocked) and alone_if_blocked
        if alone:
            request = replace(request, draft=None, draft_config=None)
            plan = plan_request(request)
        self._planned = (request, _run_recipes(request))
        known = self.pair_state
        if pair != known.pair:  # another pair: none of the last one's facts hold
            known = PairState(*pair, error=known.error, crash_code=known.crash_code)
        # The engine's facts (Loaded, the verify agreement) belong to one load, not to the
        # pair's paths: every load drops them, the same pair's too. A Restart after a
        # recipe edit must not show, nor write into a reply's figures, the old recipe's
        # agreement, and a reload that fails or is refused must not show the last Loaded.
        # Nothing is lost for an unchanged recipe: a load that verifies measures its
        # agreement again at once (Loaded.verify). A mode switch reloads only a blocked
        # pair (its target alone, or refused), which has no agreement to keep.
        self._publish_state(
            replace(known, blocked=blocked, alone=alone, loaded=None, agreement=None)
        )
        if isinstance(plan, Refusal):
            self._refuse(plan)
            return plan
        self.load_request = request
        if self.client.running:
            self._send_load()
            return None
        if background.is_running(self, "start"):
            return None  # the worker is starting; it loads the latest request when ready
        self._set_state(STARTING)
        background.run(
            self, "start", self._start_worker, lambda _r: self._send_load(), self._on_start_failed
        )
        return None

    def recipe_changes(self) -> list[str]:
        """The load-time keys saved since the last load was planned (its files read now)."""
        if self._planned is None:
            return []
        request, recipes = self._planned
        (target_was, draft_was), (target_now, draft_now) = recipes, _run_recipes(request)
        changed = load_time_changes(target_was, target_now)
        changed += load_time_changes(draft_was, draft_now)
        return list(dict.fromkeys(changed))  # a key in both: said once

    def reload_if_recipes_changed(self) -> tuple[list[str], Refusal | None]:
        """Load the pair again if a load-time key was saved since it was planned, when
        it is ready or its load was refused or failed (which the new recipe may mend); a
        load or a reply under way is left alone, and a crash waits for Restart. The keys,
        and the new plan's refusal."""
        changes = self.recipe_changes() if self.state in (READY, ERROR) else []
        if not changes or self._chosen is None:
            return [], None
        self.reloading.emit(changes)
        return changes, self.load(*self._chosen)

    def _start_worker(self) -> None:
        """In the background. If the window closed meanwhile, close the new worker right
        here: the bridge no longer hears that it started."""
        self.client.start()
        if not background.is_running(self, "start"):  # the bridge closed meanwhile
            self.client.close()

    def _send_load(self) -> None:
        if self.load_request is None:
            return  # refused while the worker started
        self._drop_agreement(again_after_reply=False)  # it was the old pair's
        self._drop_loads()
        self._set_state(LOADING)
        self._send(self.load_request)

    def _refuse(self, refusal: Refusal) -> None:
        """The plan refused the load: said as the engine would, and nothing is sent."""
        self.load_request = None
        self._drop_agreement(again_after_reply=False)
        self._drop_loads()
        if not self._pending:
            self._watch.stop()
        self._publish(error=refusal.message)
        self._set_state(ERROR)

    def _drop_loads(self) -> None:
        """Forget loads still on their way: their answers are for an earlier choice."""
        for request_id in [i for i, kind in self._pending.items() if kind is Load]:
            del self._pending[request_id]

    def _on_start_failed(self, error: Exception) -> None:
        self._publish(error=str(error), crash_code=getattr(error, "code", "start_failed"))
        self._set_state(CRASHED)
        self.crashed.emit(str(error))

    def generate(self, request: Generate) -> int | None:
        """Send a generation, after loading the pair again if its recipes' load-time
        keys were saved since; None if the worker died just before (its exit event still
        on the way: reported as a crash) or the new recipes' plan refused them (`failed`)."""
        if not self.client.running:
            self._on_crash(self.client.crash_error(Exit(self.client.exit_code)))
            return None
        _changes, refusal = self.reload_if_recipes_changed()
        if refusal is not None:
            self.failed.emit(refusal.code, refusal.message)
            return None
        self._drop_agreement(again_after_reply=True)
        self.generating_id = self._send(request)
        self._set_state(GENERATING)
        return self.generating_id

    def stop(self) -> None:
        if self.generating_id is not None:
            self.client.cancel(self.generating_id)

    def reset(self) -> None:
        if self.client.running:
            self._send(Reset())

    def restart(self) -> None:
        """A fresh worker with the last pair (after a crash, or on request)."""
        self._pending.clear()
        self._watch.stop()
        self.generating_id = self.agreement_id = None
        self._publish(measuring=False)
        self.client.close()
        if self._chosen is not None:
            self.load(*self._chosen)

    def shutdown(self) -> None:
        # A drain cued just before is still queued: the closed worker's Exit it would
        # find is no crash (it showed 'exited with code 0' after the window closed).
        self._shut_down = True
        background.close_owner(self)  # a worker still starting closes itself
        self.client.on_event = None
        self._pending.clear()
        self._watch.stop()
        self.client.close()
        self._set_state(STOPPED)

    def _request_agreement(self) -> None:
        self.agreement_id = self._send(MeasureAgreement())
        self._publish(measuring=True, after_reply=False)

    def _drop_agreement(self, again_after_reply: bool) -> None:
        """Cancel a pending measurement; its late answer is ignored."""
        if self.agreement_id is not None:
            self.client.cancel(self.agreement_id)
            self._pending.pop(self.agreement_id, None)
            self.agreement_id = None
            self._publish(measuring=False, after_reply=again_after_reply)

    # -- events ----------------------------------------------------------------------------

    def _on_crash(self, error: EngineCrashed) -> None:
        self._pending.clear()
        self._watch.stop()
        self.generating_id = self.agreement_id = None
        self._publish(measuring=False, error=str(error), crash_code=error.code)
        self._set_state(CRASHED)
        self.crashed.emit(str(error))

    def _on_event_arrived(self) -> None:  # the client's reader thread
        if not self._drain_queued.is_set():
            self._drain_queued.set()
            self._events_arrived.emit()

    def poll(self) -> None:
        """Handle every event that has arrived (on the GUI thread)."""
        self._drain_queued.clear()
        if self._shut_down:
            return
        if background.is_running(self, "start"):
            return  # start() is reading the worker's first event; it drains after
        for event in self.client.poll_events():
            self._dispatch(event)

    def _dispatch(self, event: Event) -> None:
        self._dispatch_event(event)
        if not self._pending:
            self._watch.stop()  # an idle window has no engine wake-ups

    def _dispatch_event(self, event: Event) -> None:
        if isinstance(event, Exit):
            self._on_crash(self.client.crash_error(event))
            return
        if isinstance(event, Rounds):
            if event.prefill_total:
                self.prefilling.emit(event.prefill_model, event.prefill_done, event.prefill_total)
            else:
                self.rounds.emit(event)
            return
        kind = self._pending.pop(event.id, None) if event.id is not None else None
        if kind is None:
            return
        if kind is MeasureAgreement:
            # A side figure: it never changes the state (a reply may be queued behind it).
            self.agreement_id = None
            found = event.result if isinstance(event, AgreementMeasured) else None
            self._publish(agreement=found, measuring=False)
            return
        if isinstance(event, Failed):
            if kind is Generate:
                self.generating_id = None
            # A reply sent behind a reload that failed finds nothing loaded: the load's
            # failure, already said, is the one to show.
            behind_failed_load = kind is not Load and self.pair_state.loaded is None
            self._set_state(ERROR if kind is Load or behind_failed_load else READY)
            if not behind_failed_load:
                self._publish(error=event.message)
                self.failed.emit(event.code, event.message)
        elif isinstance(event, Loaded):
            self._publish(loaded=event, error="")
            # A reload before a reply: the reply is already queued behind it.
            self._set_state(GENERATING if self.generating_id is not None else READY)
            if event.verify and self.generating_id is not None:
                self._publish(after_reply=True)  # measured once the reply is written
            elif event.verify:
                self._request_agreement()
        elif isinstance(event, Done):
            self.generating_id = None
            self._set_state(READY)
            self.finished.emit(event)
            if self.pair_state.after_reply:
                self._request_agreement()
