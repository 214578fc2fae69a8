"""Text MNN's tokenizer must never see.

A str may hold lone surrogates (bytes that were not UTF-8, kept by surrogateescape, or a
"\\udcff" escape in JSON): MNN's tokenizer crashes natively (SIGSEGV) on them. It reads
text as a C string, so a NUL silently ends the text there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from app.core.infra.errors import EngineError
from app.core.measure.words import FailureCode

_UNSAFE_TEXT = re.compile("[\x00\ud800-\udfff]")


def refuse_unsafe_text(texts: Iterable[tuple[str, str]]) -> None:
    """EngineError BAD_TEXT naming the first (name, text) pair that holds such text."""
    for name, text in texts:
        found = _UNSAFE_TEXT.search(text)
        if found is None:
            continue
        code = ord(found.group())
        if code == 0:
            what = "a NUL character (MNN would end the text there)"
        elif 0xDC80 <= code <= 0xDCFF:  # how surrogateescape keeps an undecodable byte
            what = f"the byte 0x{code - 0xDC00:02X}, which is not UTF-8,"
        else:
            what = f"a lone surrogate U+{code:04X}"
        raise EngineError(
            f"The {name} holds {what} at character {found.start()}: give the text as UTF-8 "
            "without NUL.",
            FailureCode.BAD_TEXT,
        )
