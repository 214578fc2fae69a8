"""Child process for the abandoned-temporary-file test: saves a recipe and stops for
good inside the fsync of the recipe's own temporary file, saying so, until it is killed
(a save killed half-way, at a known point)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.recipe.files import RecipeDocument

if TYPE_CHECKING:
    from _typeshed import FileDescriptorLike

path = Path(sys.argv[1])
real_fsync = os.fsync


def fsync_or_stop(fd: FileDescriptorLike) -> None:
    written = os.fstat(fd if isinstance(fd, int) else fd.fileno())
    for temp in path.parent.glob(f".{path.name}.*.tmp"):
        is_backups = temp.name.startswith(f".{path.name}.bak.")
        if not is_backups and os.path.samestat(temp.stat(), written):
            print(temp.name, flush=True)
            sys.stdin.readline()  # never answered: the test kills this process here
    real_fsync(fd)


os.fsync = fsync_or_stop
doc = RecipeDocument.load(path)
doc.save({**doc.data, "note": "never saved"})
