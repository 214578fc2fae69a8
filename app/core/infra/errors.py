"""Typed errors. Every problem with a file names the file and says what is wrong."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar


class DraftDeckError(Exception):
    """Base of every error DraftDeck raises on purpose."""


class FileError(DraftDeckError):
    """A file (or folder) that cannot be used, and why."""

    code: ClassVar[str] = "file_error"

    def __init__(self, path: Path | str, problem: str) -> None:
        self.path = Path(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


class NotABundleError(FileError):
    code = "not_a_bundle"


class MissingFileError(FileError):
    code = "missing_file"


class EmptyFileError(FileError):
    code = "empty_file"


class UnreadableFileError(FileError):
    code = "unreadable"


class InvalidJsonError(FileError):
    code = "invalid_json"

    def __init__(self, path: Path | str, problem: str, line: int = 0, column: int = 0) -> None:
        self.line = line
        self.column = column
        where = f"line {line}, column {column}: " if line else ""
        super().__init__(path, f"invalid JSON: {where}{problem}")


class BadValueError(FileError):
    code = "bad_value"


class OutsideFolderError(FileError):
    code = "outside_folder"


class TieEmbeddingsError(FileError):
    code = "tie_embeddings"


class TokenizerError(FileError):
    code = "bad_tokenizer"


class NotAGraphError(FileError):
    code = "not_a_graph"


class NeedsNewerMnnError(FileError):
    """A pack exported for a newer MNN than the one DraftDeck runs."""

    code = "needs_newer_mnn"


class UnsafeArchiveError(FileError):
    code = "unsafe_archive"


class NotSendableError(FileError):
    """A pack holds something that is not one of its own regular files (a link out of
    it, a FIFO, a device): nothing of it is published or pushed."""

    code = "not_sendable"


class WriteFailedError(FileError):
    code = "write_failed"


class AlreadyExistsError(FileError):
    code = "already_exists"


class CodedError(DraftDeckError):
    """An error with a short machine-readable code besides its message."""

    code = "error"

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code:
            self.code = code


class UsageError(CodedError):
    """A command line that cannot be carried out as given (a pack name that fits two
    packs): exit code 2, as argparse's own usage errors."""

    code = "usage"


class EngineError(CodedError):
    """A run could not start or went wrong inside the engine."""

    code = "engine_error"

    def __init__(
        self, message: str, code: str | None = None, reasons: list[dict[str, Any]] | None = None
    ) -> None:
        super().__init__(message, code)
        self.reasons = reasons or []


class EngineCrashed(EngineError):
    """The engine worker process died (native crash, killed, out of memory)."""

    code = "engine_crashed"

    def __init__(self, message: str, exit_code: int | None, stderr_tail: list[str]) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.stderr_tail = stderr_tail


class SpeculationCannotPay(EngineError):
    """The loaded pair cannot gain on this MNN; bench and tune measure it only if forced."""

    code = "cannot_pay"


class HubError(CodedError):
    """The Hub (or its stand-in) refused, failed or could not be reached."""

    code = "hub_error"


class PhoneError(CodedError):
    """adb, the phone or the copy to it failed; the message says what to do next."""

    code = "phone_error"
