"""The engine worker process: requests in on stdin, events out on stdout (protocol.py).

MNN prints to C-level stdout, so the protocol gets its own copy of the original
stdout descriptor and descriptor 1 (on Windows also the standard output handle) is
pointed at stderr before MNN is imported: nothing MNN prints can corrupt the event
stream. Should something still get there, the client reads the event that follows it
on the line (client.worker_process.parse_event_line).

A reader thread takes requests so that a Cancel lands while a generation runs. A cancel
names the request it stops so that it also works when it arrives before that request
has started; without a target it stops whatever runs.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import queue
import sys
import threading
import traceback
from typing import IO, TYPE_CHECKING

from app.core.infra.errors import EngineError
from app.engine.protocol import (
    PROTOCOL_VERSION,
    AgreementMeasured,
    AnyRequest,
    Cancel,
    Decode,
    Done,
    Encode,
    Encoded,
    Event,
    Failed,
    FailureCode,
    ForcedLogits,
    Generate,
    Load,
    MeasureAgreement,
    Ping,
    Pong,
    ProtocolError,
    Ready,
    Reset,
    ResetDone,
    Rounds,
    Shutdown,
    check_text,
    decode_request,
    encode_event,
)
from app.engine.worker.orphan_guard import start_orphan_guard

if TYPE_CHECKING:
    from app.engine.worker.session import Session

log = logging.getLogger("draftdeck.engine.worker")


class Worker:
    def __init__(self, out: IO[str]) -> None:
        self._out = out
        self._lock = threading.Lock()
        self._requests: queue.Queue[tuple[int | None, AnyRequest] | None] = queue.Queue()
        self._cancelled: set[int | None] = set()
        self._cancel_all = threading.Event()  # the client is gone
        self._running: int | None = None

    def emit(self, event: Event) -> None:
        line = encode_event(event)
        with self._lock:
            self._out.write(line + "\n")
            self._out.flush()

    def read_requests(self, source: IO[str]) -> None:
        for line in source:
            line = line.strip()
            if not line:
                continue
            try:
                request_id, request = decode_request(line)
            except ProtocolError as exc:
                self.emit(Failed(FailureCode.BAD_REQUEST, str(exc), id=exc.request_id))
                continue
            if isinstance(request, Cancel):
                self._cancelled.add(self._running if request.target is None else request.target)
            else:
                self._requests.put((request_id, request))
        # stdin closed: the client is gone, so stop what runs and leave.
        self._cancel_all.set()
        self._requests.put(None)

    def _is_cancelled(self, request_id: int | None) -> bool:
        return self._cancel_all.is_set() or request_id in self._cancelled

    def serve(self) -> int:
        # Imports MNN: only now, after claim_stdout has moved its prints off the pipe.
        from app.engine.worker.session import Session

        self.emit(Ready(os.getpid(), PROTOCOL_VERSION))
        return self.handle_requests(Session())

    def handle_requests(self, session: Session) -> int:
        """Answer queued requests until shutdown or the end of input; returns 0."""
        while True:
            item = self._requests.get()
            if item is None or isinstance(item[1], Shutdown):
                return 0
            request_id, request = item
            self._running = request_id
            try:
                reply = self._handle(session, request_id, request)
                self.emit(dataclasses.replace(reply, id=request_id))
            except EngineError as exc:
                reasons = tuple(exc.reasons)
                self.emit(Failed(exc.code, exc.message, reasons, id=request_id))
            except Exception as exc:  # a bug must reach the user, not kill the worker
                log.exception("request failed")
                message = f"{type(exc).__name__}: {exc}"
                details = traceback.format_exc()
                self.emit(Failed(FailureCode.INTERNAL, message, details=details, id=request_id))
            finally:
                self._running = None
                self._cancelled.discard(request_id)

    def _handle(self, session: Session, request_id: int | None, request: AnyRequest) -> Event:
        """The request's final event (the caller stamps its id on it)."""
        cancelled = lambda: self._is_cancelled(request_id)  # noqa: E731
        check_text(request)  # lone surrogates crash MNN's tokenizer natively
        if isinstance(request, Ping):
            return Pong()
        if isinstance(request, Load):
            return session.load(
                request.target,
                request.draft,
                request.target_config,
                request.draft_config,
                request.draft_length,
            )
        if isinstance(request, Generate):

            def emit_rounds(rounds: Rounds) -> None:
                self.emit(dataclasses.replace(rounds, id=request_id))

            result = session.generate(request, emit_rounds, cancelled)
            return Done(tuple(result.tokens), result.text, result.stopped_by, result.stats)
        if isinstance(request, ForcedLogits):
            from app.engine.worker.forced_logits import forced_logits  # beside Session's

            return forced_logits(session, request, cancelled)
        if isinstance(request, MeasureAgreement):
            return AgreementMeasured(session.verify_agreement(request.rows, cancelled))
        if isinstance(request, Reset):
            session.reset()
            return ResetDone()
        if isinstance(request, Decode):
            return session.decode(request.tokens)
        if isinstance(request, Encode):
            return Encoded(tuple(session.encode(request.text)))
        raise EngineError(f"unexpected request {type(request).__name__}", FailureCode.BAD_REQUEST)


def claim_stdout() -> IO[str]:
    """Keep the real stdout for ourselves; send fd 1 (MNN's printf, print()) to stderr."""
    sys.stdout.flush()
    own = os.fdopen(os.dup(1), "w", encoding="utf-8", newline="\n")
    os.dup2(2, 1)
    _point_windows_stdout_at_stderr()
    sys.stdout = sys.stderr
    return own


def _point_windows_stdout_at_stderr() -> None:
    """On Windows, also point the process's standard output *handle* at stderr.

    `os.dup2` moves descriptor 1 of Python's own C runtime. A DLL linked with its own
    C runtime (MNN's .pyd may be) has its own descriptor table, whose stdout it set up
    from the process's standard output handle when it was loaded: so this must happen
    before MNN is imported. The protocol writes through a duplicate of the original
    handle (`claim_stdout`'s `own`), which this does not touch.
    """
    if sys.platform != "win32":
        return
    import ctypes
    import msvcrt
    from ctypes import wintypes

    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
    kernel32.SetStdHandle.argtypes = (wintypes.DWORD, wintypes.HANDLE)
    kernel32.SetStdHandle.restype = wintypes.BOOL
    std_output_handle = wintypes.DWORD(-11 & 0xFFFFFFFF)  # STD_OUTPUT_HANDLE, (DWORD)-11
    if not kernel32.SetStdHandle(std_output_handle, msvcrt.get_osfhandle(2)):
        log.warning(
            "SetStdHandle failed (error %d): MNN may print on the event pipe",
            ctypes.get_last_error(),
        )


def main() -> int:
    protocol = claim_stdout()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    start_orphan_guard()
    worker = Worker(protocol)
    reader = threading.Thread(
        target=worker.read_requests, args=(sys.stdin,), name="requests", daemon=True
    )
    reader.start()
    return worker.serve()
