"""The engine client seen from Qt: non-blocking calls, events as signals.

The worker's events are collected by the client's reader thread; a timer here drains
them every POLL_MS on the GUI thread (the worker already batches rounds every 20 ms),
so the window never waits on the engine. Starting the worker (a second or so while MNN
imports) runs on the thread pool.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from app.core.infra.errors import EngineCrashed
from app.engine.client.engine_client import EngineClient
from app.ui import background

POLL_MS = 15

STOPPED, STARTING, LOADING, READY = "stopped", "starting", "loading", "ready"
GENERATING, ERROR, CRASHED = "generating", "error", "crashed"


class EngineBridge(QObject):
    state_changed = Signal(str)
    loaded = Signal(dict)
    agreement = Signal(dict)  # the loaded pair's verify agreement, measured after load
    agreement_started = Signal()
    rounds = Signal(dict)
    finished = Signal(dict)
    failed = Signal(str, str)  # code, message
    crashed = Signal(str)

    def __init__(self, client_factory: Callable[[], EngineClient] = EngineClient) -> None:
        super().__init__()
        self.client = client_factory()
        self.state = STOPPED
        self.load_params: dict[str, Any] | None = None
        self._pending: dict[int, str] = {}  # request id -> op
        self.generating_id: int | None = None
        # The verify agreement runs on the engine's lane right after a load; a reply
        # sent meanwhile cancels it (it would wait behind it) and it runs after the reply.
        self.agreement_id: int | None = None
        self._agreement_after_reply = False
        self._shut_down = False
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self.poll)

    def _set_state(self, state: str) -> None:
        if state != self.state:
            self.state = state
            self.state_changed.emit(state)

    # -- requests --------------------------------------------------------------------------

    def load(self, **params: Any) -> None:
        """Start the worker if needed, then load a pair (target, draft, configs)."""
        self.load_params = dict(params)
        if self.client.running:
            self._send_load()
            return
        self._set_state(STARTING)
        background.run(
            self, "start", self._start_worker, lambda _r: self._on_started(), self._on_start_failed
        )

    def _start_worker(self) -> None:
        """On the thread pool. If the window closed meanwhile, close the new worker right
        here: the queued 'started' signal may never be delivered after the window is gone."""
        self.client.start()
        if self._shut_down:
            self.client.close()

    def _on_started(self) -> None:
        if self._shut_down:  # the window closed while the worker was starting
            self.client.close()
            return
        self._send_load()

    def _send_load(self) -> None:
        assert self.load_params is not None
        self._drop_agreement(again_after_reply=False)  # it was the old pair's
        self._set_state(LOADING)
        self._pending[self.client.send("load", **self.load_params)] = "load"
        self._timer.start()

    def _on_start_failed(self, error: Exception) -> None:
        self._set_state(CRASHED)
        self.crashed.emit(str(error))

    def generate(self, **params: Any) -> int:
        self._drop_agreement(again_after_reply=True)
        request = self.client.send("generate", **params)
        self._pending[request] = "generate"
        self.generating_id = request
        self._set_state(GENERATING)
        self._timer.start()
        return request

    def stop(self) -> None:
        if self.generating_id is not None:
            self.client.cancel(self.generating_id)

    def reset(self) -> None:
        if self.client.running:
            self._pending[self.client.send("reset")] = "reset"

    def restart(self) -> None:
        """A fresh worker with the last pair (after a crash, or on request)."""
        self._pending.clear()
        self.generating_id = self.agreement_id = None
        self.client.close()
        if self.load_params is not None:
            self.load(**self.load_params)

    def shutdown(self) -> None:
        self._shut_down = True
        self._timer.stop()
        self.client.close()
        self._set_state(STOPPED)

    @property
    def agreement_waits_for_reply(self) -> bool:
        """A measurement was put off until the reply being written is done."""
        return self._agreement_after_reply

    def _request_agreement(self) -> None:
        self._agreement_after_reply = False
        self.agreement_id = self.client.send("agreement")
        self._pending[self.agreement_id] = "agreement"
        self.agreement_started.emit()

    def _drop_agreement(self, again_after_reply: bool) -> None:
        """Cancel a pending measurement; its late answer is ignored."""
        if self.agreement_id is not None:
            self.client.cancel(self.agreement_id)
            self._pending.pop(self.agreement_id, None)
            self.agreement_id = None
            self._agreement_after_reply = again_after_reply

    # -- events ----------------------------------------------------------------------------

    def poll(self) -> None:
        for event in self.client.poll_events():
            self._dispatch(event)

    def _dispatch(self, event: dict[str, Any]) -> None:
        kind = event.get("event")
        if kind == "exit":
            error: EngineCrashed = self.client.crash_error(event)
            self._pending.clear()
            self.generating_id = self.agreement_id = None
            self._timer.stop()
            self._set_state(CRASHED)
            self.crashed.emit(str(error))
            return
        op = self._pending.get(event.get("id"))  # type: ignore[arg-type]
        if kind == "rounds":
            self.rounds.emit(event)
            return
        if op is None:
            return
        del self._pending[event["id"]]
        if op == "agreement":
            # A side figure: it never changes the state (a reply may be queued behind it).
            self.agreement_id = None
            self.agreement.emit(event if kind == "agreement" else {})
            return
        if kind == "error":
            if op == "generate":
                self.generating_id = None
            self._set_state(ERROR if op == "load" else READY)
            self.failed.emit(str(event.get("code")), str(event.get("message")))
        elif kind == "loaded":
            self._set_state(READY)
            self.loaded.emit(event)
            if event.get("verify"):
                self._request_agreement()
        elif kind == "done":
            self.generating_id = None
            self._set_state(READY)
            self.finished.emit(event)
            if self._agreement_after_reply:
                self._request_agreement()
