"""One MNN LLM instance, stepped token by token through public pymnn calls.

Facts this relies on (MNN 3.6.1, see DESIGN.md):
- `set_config()` takes a dict and must come before `_c_obj.load()`, which returns a bool;
  `forward()` after a failed load can segfault, so it is never called then.
- `speculative_type` + `draft_predict_length` make the target prepare a verify module:
  a forward of exactly d+1 tokens in decode mode then returns logits for every row.
- `erase_history(keep, 0)` is lazy: it takes effect at the next forward, so the count
  of tokens in the KV cache is tracked here, not read back. Cuts are gathered here and
  handed to MNN once, just before the next forward (a second erase before a forward
  makes MNN complain and override the first).
- A token id outside the vocabulary makes MNN crash natively: ids are checked first.
- With `reuse_kv`, `generate_init()` keeps the cache and switches to prefill mode; the
  next multi-token forward then uses the prefill module (no module clone per length).
- `tokenizer_decode()` gives empty text for every added token of a `tokenizer.mtok`
  (`<think>`, `</think>`, `<|im_end|>`...): their text is read from the file itself.
- The chat prompt is rendered here (chat_format.py, under template_budget.py's budget),
  not by MNN's apply_chat_template: MNN's jinja.cpp has no bounds, so a hostile
  template hung it at 5 GB. Measured: for every fixture pack the two give the same text.
- MNN's Windows build opens files through the ANSI APIs: it is given "config.json" and
  called from inside the pack folder, so no path it sees holds the folder's name
  (pack_folder.py).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from app.core.infra.errors import EngineError, FileError
from app.core.infra.jsonfile import read_json_object
from app.core.pack.chat_format import UNRENDERABLE, ChatFormat, chat_format, jinja_setting
from app.core.pack.files import CONFIG, LLM_CONFIG, TOKENIZER_CANDIDATES
from app.core.pack.template_budget import TemplateFailed
from app.core.pack.tokenizer_info import read_tokenizer_info
from app.core.recipe.schema import FIELDS, physical_cores
from app.engine.protocol import FailureCode
from app.engine.worker.pack_folder import PackFolder

log = logging.getLogger("draftdeck.engine.mnn")

Logits = npt.NDArray[np.float32]


def runtime_config(bundle: Path, overrides: dict[str, Any]) -> dict[str, Any]:
    """Settings passed to MNN: the caller's overrides plus the fixes every pack needs."""
    config = dict(overrides)
    if "tokenizer_file" not in config:
        named = read_json_object(bundle / CONFIG).get("tokenizer_file")
        if not (isinstance(named, str) and (bundle / named).is_file()):
            # Stock MNN defaults to tokenizer.txt; llmexport 0.0.5 writes tokenizer.mtok.
            for candidate in TOKENIZER_CANDIDATES:
                if (bundle / candidate).is_file():
                    config["tokenizer_file"] = candidate
                    break
    if "thread_num" not in config:
        # The caller did not choose: the pack's config.json (llmexport writes 4) or MNN's
        # own 4 would apply whatever the machine, and threads beyond the physical cores
        # only compete. A caller's explicit choice (a tune sweep, --recipe) stands.
        saved = read_json_object(bundle / CONFIG).get("thread_num")
        wanted = saved if isinstance(saved, int) and saved > 0 else FIELDS["thread_num"].default
        config["thread_num"] = min(wanted, physical_cores())
    if "jinja" not in config:
        # A 2025 pack's prompt templates as the jinja template MNN 3.6.1 needs: without
        # one its apply_chat_template joins the messages with no turn markers.
        jinja = jinja_setting(engine_chat_format(bundle, config))
        if jinja is not None:
            config["jinja"] = jinja
    # The KV cache must survive generate_init() so turns and rounds can build on it.
    config["reuse_kv"] = True
    return config


def engine_chat_format(bundle: Path, config: Mapping[str, Any]) -> ChatFormat:
    """The chat format MNN reads with `config` (settings over config.json over
    llm_config.json, then the tokenizer file's template)."""
    saved = read_json_object(bundle / CONFIG)
    llm_config = read_json_object(bundle / str(saved.get("llm_config", LLM_CONFIG)))
    named = config.get("tokenizer_file", saved.get("tokenizer_file"))
    template = None
    if isinstance(named, str) and (bundle / named).is_file():
        try:
            template = read_tokenizer_info(bundle / named).chat_template
        except FileError as exc:
            raise EngineError(str(exc), exc.code) from None
    return chat_format({**llm_config, **saved, **config}, template)


def added_token_bytes(bundle: Path, config: dict[str, Any]) -> Mapping[int, bytes]:
    """The added tokens' text, from the tokenizer file MNN loads with `config`."""
    named = config.get("tokenizer_file")
    if not isinstance(named, str):
        named = read_json_object(bundle / CONFIG).get("tokenizer_file")
    if not isinstance(named, str) or not (bundle / named).is_file():
        return {}
    try:
        return read_tokenizer_info(bundle / named).added_bytes
    except FileError as exc:
        raise EngineError(str(exc), exc.code) from None


class MnnLlm:
    def __init__(
        self,
        bundle: Path,
        overrides: dict[str, Any],
        vocab_size: int | None = None,
        verify_length: int = 0,
    ) -> None:
        import MNN.llm as mnn_llm  # only the engine imports MNN

        # MNN sees only names relative to the pack folder, from inside it (pack_folder.py).
        self._folder = PackFolder(bundle)
        bundle = self.bundle = self._folder.path
        config = runtime_config(bundle, overrides)
        if verify_length > 1:
            config["speculative_type"] = "draftmodel"
            config["draft_predict_length"] = verify_length - 1
        self.config = config
        self.chat = engine_chat_format(bundle, config)
        # Read before MNN loads: a tokenizer file it cannot parse fails here, not in MNN.
        self.added_tokens = added_token_bytes(bundle, config)
        with self._folder.inside():
            self._llm: Any = mnn_llm.create(CONFIG)
            self._llm.set_config(config)
            loaded = self._llm._c_obj.load()
            if loaded:
                self._c: Any = self._llm._c_obj
                self._c.generate_init()
            else:
                self._llm = None  # freed in the folder it was made in
        if not loaded:
            raise EngineError(f"{bundle}: MNN could not load this bundle", FailureCode.LOAD_FAILED)
        self.vocab_size = vocab_size
        self.kv_tokens: list[int] = []  # exactly what the KV cache holds
        # The input lengths fed so far: MNN clones a module on a length's first forward
        # (tens of steps' time), which adaptive drafting must not take for a step's cost.
        self.lengths_fed: set[int] = set()
        self._erase_to: int | None = None  # a cut not yet handed to MNN

    def close(self) -> None:
        """Free MNN's instance now, inside its folder (a GPU runtime writes its cache then)."""
        with self._folder.inside(required=False):
            self._c = self._llm = None

    # -- text --------------------------------------------------------------------------

    # The tokenizer is read whole at load and these run per token: they stay outside the
    # pack folder (pack_folder.py).

    def encode(self, text: str) -> list[int]:
        return list(self._c.tokenizer_encode(text))

    def chat_prompt(self, messages: Sequence[dict[str, str]]) -> str:
        """What MNN's apply_chat_template would give, rendered under a budget; a
        template that fails is this pack's error, not a hang or a crash."""
        try:
            return self.chat.engine_prompt(messages)
        except TemplateFailed as exc:
            raise EngineError(
                f"{self.bundle}: {UNRENDERABLE}: {exc.why}", FailureCode.BAD_TEMPLATE
            ) from None

    def token_bytes(self, token: int) -> bytes:
        """The raw bytes of one token, even when they end inside a UTF-8 sequence."""
        added = self.added_tokens.get(token)
        if added is not None:
            return added  # MNN would give b"" (see the module's notes)
        try:
            return str(self._c.tokenizer_decode(token)).encode("utf-8")
        except UnicodeDecodeError as exc:
            return bytes(exc.object)

    # -- cache -------------------------------------------------------------------------

    def reset(self) -> None:
        with self._folder.inside(required=False):
            self._c.reset()
            self._c.generate_init()
        self.kv_tokens = []
        self._erase_to = None

    def truncate(self, keep: int) -> None:
        """Drop cached tokens after the first `keep` (applied at the next forward)."""
        if keep < len(self.kv_tokens):
            del self.kv_tokens[keep:]
            self._erase_to = keep

    def begin_prefill(self) -> None:
        """Switch to prefill mode for the next forward, keeping the cache."""
        with self._folder.inside(required=False):
            self._c.generate_init()

    # -- stepping ----------------------------------------------------------------------

    def forward(self, tokens: Sequence[int]) -> Logits:
        """Feed tokens; returns the logits rows MNN gives back (last, or all on verify)."""
        ids = list(tokens)
        if not ids or (
            self.vocab_size is not None and not all(0 <= t < self.vocab_size for t in ids)
        ):
            raise EngineError(
                f"{self.bundle}: token ids outside the vocabulary", FailureCode.BAD_TOKENS
            )
        self.lengths_fed.add(len(ids))
        with self._folder.inside(required=False):
            if self._erase_to is not None:
                self._c.erase_history(self._erase_to, 0)
                self._erase_to = None
            out = self._c.forward(ids)
            data = np.asarray(out.read()) if out is not None else None
        if data is None or data.size == 0:
            raise EngineError(
                f"{self.bundle}: MNN forward returned nothing", FailureCode.FORWARD_FAILED
            )
        self.kv_tokens.extend(ids)
        rows: Logits = data.reshape(-1, data.shape[-1])
        return rows
