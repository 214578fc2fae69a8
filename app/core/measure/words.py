"""The words of measuring and the engine, each spelled once: core defines them
because core reads them (load rules, chat records, bench figures);
`engine/protocol.py` re-exports them for the engine, the window and the command line.
"""

from __future__ import annotations

from app.core.infra.words import Word


class Mode(Word):
    """How a reply is generated."""

    SPECULATIVE = "speculative"  # the draft proposes, the target verifies
    PLAIN = "plain"  # the target alone


class StopReason(Word):
    """Why a generation ended (Done.stopped_by)."""

    STOP_TOKEN = "stop_token"
    MAX_TOKENS = "max_tokens"
    CONTEXT_FULL = "context_full"
    CANCELLED = "cancelled"


class VerifyMethod(Word):
    """How the target checks a draft's tokens."""

    BATCHED = "batched"  # d+1 rows in one forward (measured agreement)
    STEPWISE = "stepwise"  # one token at a time (exact by construction)


class FailureCode(Word):
    """The engine's codes for a request it refused or could not run (Failed.code,
    EngineError.code); a file's problem keeps its FileError code."""

    BAD_REQUEST = "bad_request"
    BAD_TEXT = "bad_text"  # not valid Unicode, or NUL: MNN would crash or cut it
    BAD_TOKENS = "bad_tokens"
    BAD_TEMPLATE = "bad_template"  # the pack's chat template fails or passes its budget
    BLOCKED_PAIR = "blocked_pair"
    NOT_ENOUGH_MEMORY = "not_enough_memory"
    CONTEXT_FULL = "context_full"
    CANCELLED = "cancelled"
    NOT_LOADED = "not_loaded"
    LOAD_FAILED = "load_failed"
    FORWARD_FAILED = "forward_failed"
    INTERNAL = "internal"  # an unexpected exception in the worker (details: traceback)
    BAD_EVENT = "bad_event"  # the worker sent something the client cannot read
    TIMEOUT = "timeout"
    NOT_RUNNING = "not_running"
    UNRESPONSIVE = "unresponsive"  # the watchdog killed a worker that stopped answering
