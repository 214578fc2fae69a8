"""What a pack folder holds, in a form that changes whenever its contents may have.

Reading a pack and judging a pair depend only on the packs' files, so a stamp of each
file's name, size and modification time tells whether an earlier reading still holds
(the library re-reads only packs whose stamp changed; the Pair page re-judges only
pairs whose stamps changed). A stamp costs one directory walk and a stat per file,
against milliseconds to read a bundle and a jinja render to judge a pair.

Stamps are nested tuples of strings and numbers only: the garbage collector stops
tracking those, so keeping one per pack (or two per pair, as cache keys) costs the
GUI thread's collections nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

# (the file's path inside the pack, size in bytes, modification time in ns)
FileStamp = tuple[str, int, int]
# (the pack folder, the folder's own mtime in ns or -1 when it is missing, its files)
PackStamp = tuple[str, int, tuple[FileStamp, ...]]


def folder_stamp(folder: Path) -> PackStamp:
    """The stamp of `folder` and every file under it (symbolic links followed for
    files, not for folders, as reading the pack does)."""
    try:
        folder_mtime = os.stat(folder).st_mtime_ns
    except OSError:  # missing or unreadable: reading it will say which
        return (str(folder), -1, ())
    files: list[FileStamp] = []
    for root, dirs, names in os.walk(folder):
        dirs.sort()
        for name in sorted(names):
            path = os.path.join(root, name)
            try:
                stat = os.stat(path)
            except OSError:  # a dangling link: its name still counts
                files.append((os.path.relpath(path, folder), -1, -1))
                continue
            files.append((os.path.relpath(path, folder), stat.st_size, stat.st_mtime_ns))
    return (str(folder), folder_mtime, tuple(files))
