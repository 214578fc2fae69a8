"""Every message between the engine client and its worker, and their JSON-lines form.

Requests go to the worker on its stdin, events come back on its stdout, one JSON
object a line: {"op": kind, "id": n, ...fields} and {"event": kind, "id": n, ...}.
Each message is a frozen dataclass; its fields are its wire keys, checked against the
type hints when read (core.infra.typed_json), so a malformed line is a ProtocolError
that says what is wrong.
This module is the only place that spells a message kind or field name.

A request the client waits on is a `Request[Reply]`; `Cancel` and `Shutdown` get no
reply. The worker's first event, `Ready`, carries PROTOCOL_VERSION: a client refuses a
worker that speaks another one. `Exit` never crosses the pipe: the client's reader
makes it when the worker's stdout ends.
"""

from __future__ import annotations

import json
import typing
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, Union

from app.core.infra.typed_json import TypedJsonError, from_json, to_json
from app.core.measure.metrics import DecodeStats
from app.core.measure.verify_agreement import VerifyAgreement

# The words, re-exported: the engine's users spell them from here.
from app.core.measure.words import FailureCode as FailureCode
from app.core.measure.words import Mode as Mode
from app.core.measure.words import StopReason as StopReason
from app.core.measure.words import VerifyMethod as VerifyMethod
from app.core.recipe.drafting_settings import DraftingSettings
from app.core.recipe.sampler_settings import SamplerSettings
from app.engine.text_check import refuse_unsafe_text

PROTOCOL_VERSION = 2

JsonObject = dict[str, Any]  # nested figures the protocol passes through unread
ReplyT = TypeVar("ReplyT")
REQUEST_KEY, EVENT_KEY, ID_KEY = "op", "event", "id"
EVENT_START = '{"' + EVENT_KEY + '"'  # how every encoded event begins


class ProtocolError(ValueError):
    """A line that is not a valid message; `request_id` is its id when that was legible."""

    def __init__(self, message: str, request_id: int | None = None) -> None:
        super().__init__(message)
        self.request_id = request_id


# -- requests ------------------------------------------------------------------------------


class Request(Generic[ReplyT]):
    """A request answered by one final event of type ReplyT (or by `Failed`)."""


class OneWay:
    """A request without a reply."""


@dataclass(frozen=True)
class ChatTurn:
    role: str
    content: str


@dataclass(frozen=True)
class Load(Request["Loaded"]):
    target: str
    draft: str | None = None
    target_config: JsonObject | None = None
    draft_config: JsonObject | None = None
    draft_length: int | None = None


@dataclass(frozen=True)
class Generate(Request["Done"]):
    """One of prompt_ids, messages or prompt (raw text, or one user turn when `chat`)."""

    prompt: str | None = None
    messages: tuple[ChatTurn, ...] | None = None
    prompt_ids: tuple[int, ...] | None = None
    chat: bool = True
    mode: Mode | None = None  # None: speculative with a draft, else plain
    max_tokens: int = 256
    ignore_stop: bool = False
    sampler: SamplerSettings | None = None  # None: greedy (the exact comparison)
    seed: int | None = None  # None: a fresh one (Done.stats.seed says which)
    # With messages: leave out the oldest turns when the prompt does not fit the window
    # with room for a reply (Done.stats.dropped_messages says how many).
    drop_oldest: bool = False
    # Adaptive drafting and the per-round stop; None: the draft pack's own settings.
    drafting: DraftingSettings | None = None


@dataclass(frozen=True)
class MeasureAgreement(Request["AgreementMeasured"]):
    rows: int = 64


@dataclass(frozen=True)
class Encode(Request["Encoded"]):
    text: str


@dataclass(frozen=True)
class Decode(Request["Decoded"]):
    tokens: tuple[int, ...]


@dataclass(frozen=True)
class Reset(Request["ResetDone"]):
    pass


@dataclass(frozen=True)
class Ping(Request["Pong"]):
    pass


@dataclass(frozen=True)
class ForcedLogits(Request["LogitsWritten"]):
    """Teacher-force each token sequence through the loaded target, one token a step,
    and write each one's logits rows to `<out_dir>/<n>.pack.npy` (a file, not the pipe:
    a row is a whole vocabulary)."""

    sequences: tuple[tuple[int, ...], ...]
    out_dir: str


@dataclass(frozen=True)
class Cancel(OneWay):
    """Stop request `target` (even before it starts); None: whatever runs."""

    target: int | None = None


@dataclass(frozen=True)
class Shutdown(OneWay):
    pass


AnyRequest = Union[  # noqa: UP007 (a runtime alias of classes, for isinstance too)
    Load, Generate, MeasureAgreement, Encode, Decode, Reset, Ping, ForcedLogits, Cancel, Shutdown
]

# -- events --------------------------------------------------------------------------------
# `id` is the request an event answers (None for Ready and Exit), set by the worker.


@dataclass(frozen=True)
class Ready:
    pid: int
    protocol: int
    id: int | None = None


@dataclass(frozen=True)
class Loaded:
    target: JsonObject  # BundleInfo.to_json()
    draft: JsonObject | None
    draft_length: int
    load_seconds: float
    lossless_expected: bool
    verify: VerifyMethod | None  # None without a draft
    linear_attention: bool
    linear_rollback: bool | None  # None: not probed (no draft or no linear attention)
    cannot_pay: str | None
    memory: JsonObject
    memory_warning: str | None
    # What a generation can hold under the recipes loaded: speculative, and the target
    # alone (Plain); the Chat's meter shows the one its mode uses before any reply.
    window_tokens: int = 0
    plain_window_tokens: int = 0
    # Why the draft pack's drafting settings file could not be used (its defaults are
    # used then); the command line says it, Chat reads the file itself.
    drafting_problem: str | None = None
    # Why a pack's settings for this computer (.draftdeck-this-computer.json) could not
    # be used (the pack runs as its recipes say then); said like drafting_problem.
    settings_problem: str | None = None
    id: int | None = None


@dataclass(frozen=True)
class Round:
    """One verification (metrics.RoundStats as it crosses the pipe)."""

    emitted: int
    accepted: int
    drafted: int
    draft_seconds: float
    target_seconds: float
    expected: tuple[float, ...] = ()  # sampling: sum_v min(p, q) per checked position
    aside: bool = False  # a plain step while adaptive drafting stands aside
    note: str = ""  # why it stepped aside, on the round that made it
    kept_note: str = ""  # why it went on drafting, when judged on a busy computer


@dataclass(frozen=True)
class Rounds:
    """The rounds of a generation since the last batch."""

    tokens: tuple[int, ...]
    from_draft: tuple[bool, ...]  # per token
    text: str
    pieces: tuple[str, ...]  # per token (joined: `text`)
    elapsed: float  # seconds since the generation started
    rounds: tuple[Round, ...]  # the first token comes from the prefill, not a round
    # While a long prompt is read (no tokens then): which model, and how far it is.
    prefill_model: str = ""
    prefill_done: int = 0
    prefill_total: int = 0
    id: int | None = None


@dataclass(frozen=True)
class Done:
    tokens: tuple[int, ...]
    text: str
    stopped_by: StopReason
    stats: DecodeStats
    id: int | None = None


@dataclass(frozen=True)
class AgreementMeasured:
    result: VerifyAgreement
    id: int | None = None


@dataclass(frozen=True)
class Encoded:
    tokens: tuple[int, ...]
    id: int | None = None


@dataclass(frozen=True)
class Decoded:
    pieces: tuple[str, ...]
    text: str
    id: int | None = None


@dataclass(frozen=True)
class ResetDone:
    id: int | None = None


@dataclass(frozen=True)
class Pong:
    id: int | None = None


@dataclass(frozen=True)
class LogitsWritten:
    files: tuple[str, ...]  # one .npy a sequence, float32 [tokens, vocab]
    seconds: float
    id: int | None = None


@dataclass(frozen=True)
class Failed:
    code: str  # a FailureCode, or a FileError's code
    message: str
    reasons: tuple[JsonObject, ...] = ()
    details: str | None = None  # a traceback, for an internal error
    id: int | None = None


@dataclass(frozen=True)
class Exit:
    """The worker's stdout ended (made by the client, never sent)."""

    code: int | None
    id: int | None = None


Reply = Union[  # noqa: UP007 (a runtime alias of classes): the events that end a request
    Loaded, Done, AgreementMeasured, Encoded, Decoded, ResetDone, Pong, LogitsWritten
]
Event = Union[Ready, Rounds, Reply, Failed, Exit]  # noqa: UP007

REQUESTS: dict[str, type[Any]] = {
    "load": Load,
    "generate": Generate,
    "agreement": MeasureAgreement,
    "encode": Encode,
    "decode": Decode,
    "reset": Reset,
    "ping": Ping,
    "forced_logits": ForcedLogits,
    "cancel": Cancel,
    "shutdown": Shutdown,
}
EVENTS: dict[str, type[Any]] = {
    "ready": Ready,
    "loaded": Loaded,
    "rounds": Rounds,
    "done": Done,
    "agreement": AgreementMeasured,
    "encoded": Encoded,
    "decoded": Decoded,
    "reset": ResetDone,
    "pong": Pong,
    "logits_written": LogitsWritten,
    "error": Failed,
    "exit": Exit,
}
_KINDS = {cls: kind for table in (REQUESTS, EVENTS) for kind, cls in table.items()}
_EVENT_NAMES = {cls.__name__: cls for cls in EVENTS.values()}


def reply_type(request: Request[ReplyT]) -> type[ReplyT]:
    """The event class that ends `request`: the one its class names in Request[...]."""
    (reply,) = typing.get_args(vars(type(request))["__orig_bases__"][0])
    cls: type[ReplyT] = _EVENT_NAMES[reply.__forward_arg__]
    return cls


# -- text --------------------------------------------------------------------------------


def check_text(request: Request[Any] | OneWay) -> None:
    """Refuse (EngineError BAD_TEXT) a request whose text for the tokenizer is not
    valid Unicode or holds NUL: the client before sending, the worker before MNN sees it."""
    texts: list[tuple[str, str]] = []
    if isinstance(request, Generate):
        if request.prompt is not None:
            texts.append(("prompt", request.prompt))
        for n, turn in enumerate(request.messages or ()):
            texts += [(f"message {n + 1} role", turn.role), (f"message {n + 1}", turn.content)]
    elif isinstance(request, Encode):
        texts.append(("text", request.text))
    refuse_unsafe_text(texts)


# -- encoding ------------------------------------------------------------------------------


def encode_request(request: Request[Any] | OneWay, request_id: int | None = None) -> str:
    """The request's line; EngineError BAD_TEXT for text that is not valid Unicode."""
    check_text(request)
    head: JsonObject = {REQUEST_KEY: _KINDS[type(request)]}
    if request_id is not None:
        head[ID_KEY] = request_id
    return json.dumps({**head, **to_json(request)}, separators=(",", ":"))


def encode_event(event: Event) -> str:
    fields = to_json(event)
    if fields[ID_KEY] is None:
        del fields[ID_KEY]
    # The kind first: a reader finds an event in a line by EVENT_START.
    return json.dumps({EVENT_KEY: _KINDS[type(event)], **fields}, separators=(",", ":"))


def decode_request(line: str | bytes) -> tuple[int | None, AnyRequest]:
    """(id, request) from one line; ProtocolError for anything else."""
    data = _object(line)
    request_id = _id_of(data)
    request: AnyRequest = _message(data, REQUEST_KEY, REQUESTS, "request", request_id)
    return request_id, request


def decode_event(line: str | bytes) -> Event:
    return event_from_json(_object(line))


def event_from_json(data: JsonObject) -> Event:
    """The event a parsed JSON object holds; ProtocolError if it holds none."""
    data = dict(data)
    request_id = _id_of(data)
    data[ID_KEY] = request_id  # events carry their id as a field
    event: Event = _message(data, EVENT_KEY, EVENTS, "event", request_id)
    return event


def _message(
    data: JsonObject, kind_key: str, table: dict[str, type[Any]], what: str, request_id: int | None
) -> Any:
    """The message of the kind `data[kind_key]` names in `table`, built from the rest."""
    kind = data.pop(kind_key, None)
    cls = table.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ProtocolError(f"unknown {what} {kind!r}", request_id)
    try:
        return from_json(cls, data)
    except TypedJsonError as exc:
        raise ProtocolError(f"{kind} {what}: {exc}", request_id) from None


def _object(line: str | bytes) -> JsonObject:
    try:
        data = json.loads(line)
    except ValueError as exc:
        raise ProtocolError(f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ProtocolError("a message must be a JSON object")
    return data


def _id_of(data: JsonObject) -> int | None:
    value = data.pop(ID_KEY, None)
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise ProtocolError(f"{ID_KEY} must be a whole number, not {value!r}")
