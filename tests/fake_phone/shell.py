"""The phone's shell services: a mini mksh with toybox commands, and its stdin."""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import stat
import struct
import time
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from tests.fake_phone.wire import Stream

if TYPE_CHECKING:
    from tests.fake_phone.phone import FakePhone

SHELL_STDIN, SHELL_CLOSE_STDIN = 0, 4  # shell protocol v2 packet ids (shell_protocol.h)


class NoSpace(Exception):
    """A write went past the phone's free space (ENOSPC)."""


def serve_shell(phone: FakePhone, stream: Stream, command: str, v2: bool) -> None:
    """``shell:`` (v1: one stream, no exit status) or ``shell,v2,...:`` (packets)."""
    phone.commands.append(command)
    out, err, code, mixed = Shell(phone, ShellInput(stream, v2)).run(command)
    if not v2:
        stream.write(mixed)
        return
    packets = b""
    for kind, data in ((1, out), (2, err)):
        if data:
            packets += bytes([kind]) + struct.pack("<I", len(data)) + data
    stream.write(packets + bytes([3]) + struct.pack("<I", 1) + bytes([code & 0xFF]))


class ShellInput:
    """A shell command's stdin. Shell protocol v2: stdin packets until close-stdin (other
    packets, such as a window size, are skipped). v1 has no such packets: everything the
    stream carries until it closes."""

    def __init__(self, stream: Stream, v2: bool) -> None:
        self.stream, self.v2 = stream, v2
        self.ended = False

    def read(self) -> bytes:
        """The next block; b"" at the end. A cut raises Cut (the command dies with it)."""
        while not self.ended:
            if not self.v2:
                data = self.stream.read_some()
                self.ended = not data
                return data
            kind, length = struct.unpack("<BI", self.stream.read(5))
            data = self.stream.read(length) if length else b""
            if kind == SHELL_CLOSE_STDIN:
                self.ended = True
            elif kind == SHELL_STDIN and data:
                return data
        return b""


class Shell:
    """Just enough of the phone's shell (mksh running toybox commands) for what DraftDeck
    (and a person poking around) runs."""

    def __init__(self, phone: FakePhone, stdin: ShellInput | None = None) -> None:
        self.phone = phone
        self.stdin = stdin
        self._sink: BinaryIO | None = None  # the file a `>` or `>>` sends stdout to

    def run(self, line: str) -> tuple[bytes, bytes, int, bytes]:
        """stdout, stderr, exit status, and both streams as a terminal shows them."""
        out, err, code, mixed = b"", b"", 0, b""
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&>")
        lexer.whitespace_split = True
        words: list[str] = []
        for token in [*lexer, ";"]:
            if token in (";", "&&"):
                if words:
                    words = [w.replace("$?", str(code)) for w in words]
                    o, e, code = self._command(words)
                    out, err, mixed = out + o, err + e, mixed + o + e
                    words = []
                    if token == "&&" and code != 0:
                        break
            else:
                words.append(token)
        return out, err, code, mixed

    def _command(self, words: list[str]) -> tuple[bytes, bytes, int]:
        words, redirect = self._redirection(words)
        if redirect is None:
            return self._dispatch(words)
        mode, target = redirect
        try:  # the shell opens (and with `>` truncates) the file before the command runs
            sink = self.phone.local(target).open("ab" if mode == ">>" else "wb", buffering=0)
        except OSError as exc:
            return b"", f"/system/bin/sh: can't create {target}: {exc.strerror}\n".encode(), 1
        with sink:
            self._sink = sink
            try:
                out, err, code = self._dispatch(words)
                if out and code == 0:
                    self._emit(out)
            except NoSpace:
                err, code = b"%s: xwrite: No space left on device\n" % words[0].encode(), 1
            finally:
                self._sink = None
        return b"", err, code

    @staticmethod
    def _redirection(words: list[str]) -> tuple[list[str], tuple[str, str] | None]:
        """The words without a trailing `> FILE` / `>> FILE`, and that redirection."""
        if len(words) >= 3 and words[-2] in (">", ">>"):
            return words[:-2], (words[-2], words[-1])
        return words, None

    def _dispatch(self, words: list[str]) -> tuple[bytes, bytes, int]:
        name, args = words[0], words[1:]
        flags = "".join(a[1:] for a in args if a.startswith("-") and len(a) > 1)
        paths = [a for a in args if not a.startswith("-")]
        handler = getattr(self, f"_cmd_{name}", None)
        time.sleep(self.phone.command_delay.get(name, 0.0))
        if handler is None or name in self.phone.missing_commands:
            return b"", f"/system/bin/sh: {name}: inaccessible or not found\n".encode(), 127
        try:
            out, err, code = handler(flags, paths)
        except OSError as exc:
            return b"", f"{name}: {exc.strerror}\n".encode(), 1
        return out, err, code

    def _emit(self, data: bytes) -> None:
        """Write to the redirected file at once, within the phone's free space."""
        assert self._sink is not None
        budget = self.phone.free_bytes
        fits = data if budget is None else data[: max(budget, 0)]
        self._sink.write(fits)
        if budget is not None:
            self.phone.free_bytes = budget - len(fits)
        if len(fits) < len(data):
            raise NoSpace

    def _missing(self, name: str, path: str) -> bytes:
        return f"{name}: {path}: No such file or directory\n".encode()

    def _cmd_getprop(self, _flags: str, paths: list[str]) -> tuple[bytes, bytes, int]:
        props = self.phone.props
        if paths:
            return (props.get(paths[0], "") + "\n").encode(), b"", 0
        return "".join(f"[{k}]: [{v}]\n" for k, v in sorted(props.items())).encode(), b"", 0

    def _cmd_echo(self, _flags: str, paths: list[str]) -> tuple[bytes, bytes, int]:
        return (" ".join(paths) + "\n").encode(), b"", 0

    def _cmd_cat(self, _flags: str, paths: list[str]) -> tuple[bytes, bytes, int]:
        if not paths and self.stdin is not None:
            if self._sink is None:
                return b"".join(iter(self.stdin.read, b"")), b"", 0
            # Block by block as it comes, as toybox's cat does: a cut keeps what arrived.
            while block := self.stdin.read():
                self._emit(block)
            return b"", b"", 0
        out, err = b"", b""
        for path in paths:
            local = self.phone.local(path)
            if local.is_file():
                out += local.read_bytes()
            else:
                err += self._missing("cat", path)
        return out, err, 1 if err else 0

    def _cmd_df(self, _flags: str, paths: list[str]) -> tuple[bytes, bytes, int]:
        path = paths[0] if paths else "/data"
        if not self.phone.local(path).exists():
            return b"", self._missing("df", path), 1
        total = shutil.disk_usage(self.phone.root).total
        free = self.phone.free_space()
        line = (
            "Filesystem      1K-blocks    Used Available Use% Mounted on\n"
            f"/dev/block/dm-48 {total // 1024} {(total - free) // 1024} {free // 1024}"
            f" {100 * (total - free) // max(total, 1)}% /data\n"
        )
        return line.encode(), b"", 0

    def _cmd_ls(self, flags: str, paths: list[str]) -> tuple[bytes, bytes, int]:
        out, err = b"", b""
        for path in paths or ["/"]:
            local = self.phone.local(path)
            if not local.exists():
                err += self._missing("ls", path)
                continue
            if local.is_dir() and "d" not in flags:
                names = sorted(os.listdir(local))
                if "a" not in flags:
                    names = [n for n in names if not n.startswith(".")]
                else:
                    names = [".", "..", *names]  # toybox lists them with -a
                entries = [(n, local / n) for n in names]
                if "l" in flags:
                    out += f"total {len(entries)}\n".encode()
            else:
                entries = [(path, local)]
            for name, entry in entries:
                out += (self._long(name, entry) if "l" in flags else name + "\n").encode()
        return out, err, 1 if err else 0

    @staticmethod
    def _long(name: str, path: Path) -> str:
        info = path.lstat()
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.st_mtime))
        size = 4096 if stat.S_ISDIR(info.st_mode) else info.st_size
        if stat.S_ISLNK(info.st_mode):
            name += f" -> {os.readlink(path)}"
        return f"{stat.filemode(info.st_mode)} 1 shell shell {size} {when} {name}\n"

    def _cmd_mkdir(self, flags: str, paths: list[str]) -> tuple[bytes, bytes, int]:
        for path in paths:
            self.phone.local(path).mkdir(parents="p" in flags, exist_ok="p" in flags)
        return b"", b"", 0

    def _cmd_mv(self, _flags: str, paths: list[str]) -> tuple[bytes, bytes, int]:
        source, dest = self.phone.local(paths[0]), self.phone.local(paths[1])
        if not source.exists():
            return b"", self._missing("mv", paths[0]), 1
        if dest.is_dir():
            dest = dest / source.name
        os.replace(source, dest)
        return b"", b"", 0

    def _cmd_rm(self, flags: str, paths: list[str]) -> tuple[bytes, bytes, int]:
        err = b""
        for path in paths:
            local = self.phone.local(path)
            if local.is_dir() and not local.is_symlink():
                if "r" not in flags:
                    err += f"rm: {path}: Is a directory\n".encode()
                    continue
                shutil.rmtree(local)
            elif local.exists():
                local.unlink()
            elif "f" not in flags:
                err += self._missing("rm", path)
        return b"", err, 1 if err else 0

    def _cmd_sha256sum(self, _flags: str, paths: list[str]) -> tuple[bytes, bytes, int]:
        out, err = b"", b""
        for path in paths:
            local = self.phone.local(path)
            if not local.is_file():
                err += self._missing("sha256sum", path)
                continue
            digest = hashlib.sha256()
            with local.open("rb") as handle:
                while block := handle.read(1 << 20):
                    digest.update(block)
            out += f"{digest.hexdigest()}  {path}\n".encode()
        return out, err, 1 if err else 0
