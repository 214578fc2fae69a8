"""The phone's files through its shell (toybox): free space, listings, hashes.

Sizes come from `ls -l`, not from adb's sync STAT, whose sizes are 32-bit (a 5 GB
weight file would read as 1 GB)."""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from app.core.infra.errors import PhoneError
from app.core.phone.adb import Phone

NOT_FOUND = 127  # the shell's exit status for an unknown command
COMMAND_BUDGET = 3000  # characters per shell command line; adb's limit is 4 KiB on old phones
_SHA_LINE = re.compile(r"^([0-9a-f]{64})\s+\*?(.+)$")


@dataclass(frozen=True)
class RemoteEntry:
    name: str
    size: int
    is_dir: bool


def quote(path: str) -> str:
    return shlex.quote(path)


def parse_df_available(text: str, path: str) -> int:
    """Available bytes from `df -k PATH`, also when a long device name wraps the line."""
    lines = text.strip().splitlines()
    numbers = [int(tok) for line in lines[1:] for tok in line.split() if tok.isdigit()]
    if len(numbers) < 3:
        raise PhoneError(f"Could not read the free space of {path} from `df`: {text!r}")
    return numbers[2] * 1024  # 1K-blocks, Used, Available


def parse_ls_long(text: str) -> list[RemoteEntry]:
    entries = []
    for line in text.splitlines():
        parts = line.split(None, 7)
        if len(parts) < 8 or not parts[4].isdigit():
            continue  # "total N" and anything unexpected
        name = parts[7]
        if parts[0].startswith("l"):
            name = name.split(" -> ", 1)[0]
        if name in (".", ".."):
            continue
        entries.append(RemoteEntry(name, int(parts[4]), parts[0].startswith("d")))
    return entries


def parse_sha256sum(text: str) -> dict[str, str]:
    found = {}
    for line in text.splitlines():
        match = _SHA_LINE.match(line.strip())
        if match:
            found[match.group(2)] = match.group(1)
    return found


def batches(paths: list[str], budget: int = COMMAND_BUDGET) -> Iterator[list[str]]:
    batch: list[str] = []
    used = 0
    for path in paths:
        cost = len(quote(path)) + 1
        if batch and used + cost > budget:
            yield batch
            batch, used = [], 0
        batch.append(path)
        used += cost
    if batch:
        yield batch


def free_bytes(phone: Phone, folder: str, create: bool = False) -> int:
    """Bytes available in `folder` (made first with `create`, in the same round trip)."""
    command = f"df -k {quote(folder)}"
    if create:
        command = f"mkdir -p {quote(folder)} && {command}"
    return parse_df_available(phone.run(command), folder)


def existing(phone: Phone, paths: list[str]) -> set[str]:
    """Which of these paths exist (one `ls -d` for all)."""
    out = phone.shell("ls -1d " + " ".join(quote(p) for p in paths)).out
    return set(out.splitlines()) & set(paths)


def list_dir(phone: Phone, folder: str) -> list[RemoteEntry]:
    """Entries of a folder (hidden ones too); empty when it does not exist."""
    # The trailing slash lists what a symlinked folder (/sdcard) points to.
    result = phone.shell(f"ls -la {quote(folder.rstrip('/') + '/')}")
    return parse_ls_long(result.out) if result.code == 0 else []


def file_sizes(phone: Phone, paths: list[str]) -> dict[str, int]:
    """Sizes of those paths that are files (missing ones are simply absent)."""
    found: dict[str, int] = {}
    for batch in batches(paths):
        # `ls -ld` names each entry by the path given; a missing one makes it exit 1.
        out = phone.shell("ls -ld " + " ".join(quote(p) for p in batch)).out
        found.update((e.name, e.size) for e in parse_ls_long(out) if not e.is_dir)
    return found


def sha256_of(phone: Phone, paths: list[str], then: str = "") -> dict[str, str]:
    """sha256 of those files that exist (missing ones are simply absent). `then` is a
    command run right after, in the same round trip (its exit status is ignored)."""
    found: dict[str, str] = {}
    for batch in batches(paths):
        # A missing file makes sha256sum exit 1 but it still hashes the others.
        command = "sha256sum " + " ".join(quote(p) for p in batch)
        result = phone.shell(f"{command}; {then}" if then else command)
        # (With `then`, the status is its command's: pushes learn whether the phone has
        # sha256sum from their first, plain call.)
        if result.code == NOT_FOUND and not then:
            raise PhoneError(
                f"{phone.name} has no sha256sum command, so copies cannot be verified. "
                "Older Android versions lack it; Android 8 and newer have it.",
                "no_sha256sum",
            )
        found.update(parse_sha256sum(result.out))
    return found


def make_dirs(phone: Phone, folders: list[str]) -> None:
    for batch in batches(sorted(set(folders))):
        phone.run("mkdir -p " + " ".join(quote(f) for f in batch))


def move(phone: Phone, source: str, dest: str) -> None:
    phone.run(f"mv {quote(source)} {quote(dest)}")


def remove_tree(phone: Phone, path: str) -> None:
    if posixpath.normpath(path).count("/") < 2:  # never `rm -rf /` or a top folder
        raise PhoneError(f"Refusing to delete {path} on the phone.", "bad_dest")
    phone.run(f"rm -rf {quote(path)}")


def read_json_object(phone: Phone, path: str) -> dict[str, Any] | None:
    """A JSON object in a file on the phone; None when the file is missing or does not
    hold one."""
    result = phone.shell(f"cat {quote(path)}")
    if result.code != 0:
        return None
    try:
        data = json.loads(result.out)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None
