"""The base of every word that crosses modules, the pipe and saved files.

A `Word` is a str enum (requires-python 3.10 has no StrEnum): a member equals,
hashes and writes to JSON as its text, so old files and plain strings still compare
equal, and `str()` and f-strings give the text too. Each domain defines its own words
(`core/measure/words.py`, the job states beside their jobs).
"""

from __future__ import annotations

from enum import Enum


class Word(str, Enum):
    def __str__(self) -> str:
        return str(self.value)
