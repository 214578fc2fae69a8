"""The engine worker process: newline-delimited JSON requests in, events out.

MNN prints to C-level stdout, so the protocol gets its own copy of the original
stdout descriptor and descriptor 1 (on Windows also the standard output handle) is
pointed at stderr before MNN is imported: nothing MNN prints can corrupt the event
stream. Should something still get there, the client reads the event that follows it
on the line (client.parse_event_line).

Requests: {"op": "load" | "generate" | "agreement" | "encode" | "decode" | "reset" | "cancel" |
"ping" | "shutdown", "id": …}. Events: {"event": "ready" | "loaded" | "rounds" | "done" |
"agreement" | "encoded" | "decoded" | "reset" | "pong" | "error", "id": …}.
A reader thread takes requests so that "cancel" lands while a generation runs. A cancel
names the request it stops ({"op": "cancel", "target": id}) so that it also works when it
arrives before that request has started; without a target it stops whatever runs.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import sys
import threading
import traceback
from typing import IO, Any

from app.core.infra.errors import EngineError

log = logging.getLogger("draftdeck.engine.worker")


class Worker:
    def __init__(self, out: IO[str]) -> None:
        self._out = out
        self._lock = threading.Lock()
        self._requests: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._cancelled: set[Any] = set()
        self._cancel_all = threading.Event()  # the client is gone
        self._running: Any = None

    def emit(self, event: dict[str, Any]) -> None:
        line = json.dumps(event, separators=(",", ":"))
        with self._lock:
            self._out.write(line + "\n")
            self._out.flush()

    def read_requests(self, source: IO[str]) -> None:
        for line in source:
            line = line.strip()
            if not line:
                continue
            try:
                request = json.loads(line)
                if not isinstance(request, dict):
                    raise ValueError("a request must be a JSON object")
            except ValueError as exc:
                self.emit(
                    {"event": "error", "id": None, "code": "bad_request", "message": str(exc)}
                )
                continue
            if request.get("op") == "cancel":
                self._cancelled.add(request.get("target", self._running))
            else:
                self._requests.put(request)
        # stdin closed: the client is gone, so stop what runs and leave.
        self._cancel_all.set()
        self._requests.put(None)

    def _is_cancelled(self, request_id: Any) -> bool:
        return self._cancel_all.is_set() or request_id in self._cancelled

    def serve(self) -> int:
        from app.engine.worker.session import Session  # imports MNN

        session = Session()
        self.emit({"event": "ready", "pid": os.getpid()})
        while True:
            request = self._requests.get()
            if request is None or request.get("op") == "shutdown":
                return 0
            request_id = request.get("id")
            self._running = request_id
            try:
                self._handle(session, request)
            except EngineError as exc:
                self.emit(
                    {
                        "event": "error",
                        "id": request_id,
                        "code": exc.code,
                        "message": exc.message,
                        "reasons": exc.reasons,
                    }
                )
            except Exception as exc:  # a bug must reach the user, not kill the worker
                log.exception("request failed")
                self.emit(
                    {
                        "event": "error",
                        "id": request_id,
                        "code": "internal",
                        "message": f"{type(exc).__name__}: {exc}",
                        "details": traceback.format_exc(),
                    }
                )
            finally:
                self._running = None
                self._cancelled.discard(request_id)

    def _handle(self, session: Any, request: dict[str, Any]) -> None:
        op = request.get("op")
        request_id = request.get("id")
        if op == "ping":
            self.emit({"event": "pong", "id": request_id})
        elif op == "load":
            info = session.load(
                request["target"],
                request.get("draft"),
                request.get("target_config"),
                request.get("draft_config"),
                request.get("draft_length"),
            )
            self.emit({"event": "loaded", "id": request_id, **info})
        elif op == "generate":
            result = session.generate(request, self.emit, lambda: self._is_cancelled(request_id))
            self.emit(
                {
                    "event": "done",
                    "id": request_id,
                    "tokens": result.tokens,
                    "text": result.text,
                    "stopped_by": result.stopped_by,
                    "stats": result.stats.to_json(),
                }
            )
        elif op == "agreement":
            measured = session.verify_agreement(
                int(request.get("rows", 64)), lambda: self._is_cancelled(request_id)
            )
            self.emit({"event": "agreement", "id": request_id, **measured})
        elif op == "reset":
            session.reset()
            self.emit({"event": "reset", "id": request_id})
        elif op == "decode":
            self.emit({"event": "decoded", "id": request_id, **session.decode(request["tokens"])})
        elif op == "encode":
            tokens = session.encode(request.get("text"))
            self.emit({"event": "encoded", "id": request_id, "tokens": tokens})
        else:
            raise EngineError(f"unknown request {op!r}", "bad_request")


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
    worker = Worker(protocol)
    reader = threading.Thread(
        target=worker.read_requests, args=(sys.stdin,), name="requests", daemon=True
    )
    reader.start()
    return worker.serve()
