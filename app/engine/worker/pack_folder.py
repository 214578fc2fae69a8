"""MNN is handed names relative to a pack folder and runs from inside that folder.

MNN's Windows build opens files through the ANSI APIs (`CreateFileA`,
`GetFileAttributesA`, `std::ifstream(std::string)`, and `FileLoader` converts with
`MultiByteToWideChar(CP_ACP, ...)`), while pymnn hands it UTF-8: a pack under
`C:\\Users\\José\\模型\\…` reaches the file system mangled and fails to load. MNN 3.6.1
resolves every file of a bundle as `base_dir_ + name`, where `base_dir_` is the folder
part of the config path it was given, and `"./"` for a bare `"config.json"`
(transformers/llm/engine/src/llmconfig.hpp). So MNN is only ever given `"config.json"`,
and every call into it runs with the working directory inside the pack folder, entered
with Python's wide-character `os.chdir`. The same code runs on every OS, so the Linux
tests exercise it.

Not only the load: every call that runs the graph (forward, erase, reset) and the
destruction run inside too, because MNN keeps the relative names. Each Pipeline keeps
the weight file's name (`./llm.mnn.weight`) and may reopen it when it re-encodes for a
new shape; a GPU runtime writes `./mnn_cachefile.bin` when it is destroyed. Traced on
MNN 3.6.1 (strace; CPU; prefill, verify, erase and reset steps on Qwen3 and Qwen3.5
fixtures), nothing is opened after `load()`, but with a target and a draft in two
folders a late reopen from the wrong one would read the other pack's weights. Entering
the folder costs about 4 µs per call on Linux. Tokenizer calls touch no file (the
tokenizer is read whole at load) and stay outside. A pack whose config.json names an
absolute `base_dir` still hands MNN that path (bundle.py only checks that it is the
pack itself).

The previous working directory comes back after each call, so a caller's relative paths
keep their meaning, and no pack folder stays the working directory (Windows refuses to
delete or rename a process's working directory). The working directory is the
process's: only one thread may call into MNN at a time, as the worker does.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from pathlib import Path

from app.core.infra.errors import EngineError, UnreadableFileError

log = logging.getLogger("draftdeck.engine.folder")


class PackFolder:
    """One pack folder that MNN calls run inside."""

    def __init__(self, folder: Path) -> None:
        # Absolute first: a relative folder would mean something else once inside one.
        self.path = Path(os.path.abspath(folder))
        self._gone_logged = False

    @contextlib.contextmanager
    def inside(self, required: bool = True) -> Iterator[None]:
        """Run the block inside the folder. Loading requires it; a model already loaded
        holds its files in memory, so if its folder has gone since (deleted or renamed
        on Linux or macOS), `required=False` runs the block where it is."""
        try:
            home: str | None = os.getcwd()
        except OSError:  # the caller's folder was deleted: there is nothing to return to
            home = None
        try:
            os.chdir(self.path)
        except OSError as exc:
            problem = f"{self.path}: cannot enter the pack folder ({exc.strerror or exc})"
            if required:
                raise EngineError(problem, UnreadableFileError.code) from None
            if not self._gone_logged:  # once, not once per token
                self._gone_logged = True
                log.warning("%s; running from %s", problem, home)
            yield
            return
        try:
            yield
        finally:
            if home is not None:
                try:
                    os.chdir(home)
                except OSError as exc:
                    log.warning("could not return to %s: %s", home, exc)
