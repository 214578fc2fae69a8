"""A pack is its regular files inside its folder (app/core/pack/sendable.py): what
Publish and a phone push may send, and what refuses them."""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.infra.errors import NotSendableError, UnreadableFileError
from app.core.pack.sendable import sendable_files

Copy = Callable[..., Path]
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX links, FIFOs, sockets")


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    folder = tmp_path / "packs" / "draft"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    return folder


@posix_only
def test_a_link_out_of_the_pack_refuses_all_naming_it_and_its_target(
    pack: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "hf-home" / "token"
    secret.parent.mkdir()
    secret.write_text("hf_secret")
    (pack / "LICENSE.txt").symlink_to(os.path.relpath(secret, pack))
    (pack / "sub").mkdir()
    (pack / "sub" / "elsewhere").symlink_to(tmp_path)  # a folder link on the way out
    with pytest.raises(NotSendableError) as refused:
        sendable_files(pack, ["config.json", "LICENSE.txt", "sub/elsewhere/hf-home/token"])
    said = str(refused.value)
    assert f"LICENSE.txt is a symbolic link to {secret}, outside the pack" in said
    assert f"sub/elsewhere/hf-home/token leads to {secret}, outside the pack" in said
    assert "nothing was" in said


@posix_only
def test_a_link_to_a_file_of_the_pack_is_sent_as_that_file(pack: Path) -> None:
    (pack / "LICENSE").write_text("Apache-2.0")
    (pack / "LICENSE.txt").symlink_to("LICENSE")
    files = {f.rel: f for f in sendable_files(pack, ["LICENSE", "LICENSE.txt"])}
    linked = files["LICENSE.txt"]
    assert linked.path == (pack / "LICENSE").resolve() and linked.size == len("Apache-2.0")
    with linked.open() as handle:
        assert handle.read() == b"Apache-2.0"


@posix_only
def test_a_link_to_the_packs_hidden_files_is_refused(pack: Path) -> None:
    (pack / ".draftdeck-export.json").write_text('{"source": "/home/me/models/x"}')
    (pack / "export.json").symlink_to(".draftdeck-export.json")
    with pytest.raises(NotSendableError, match=r"export.json is a symbolic link to .*hidden"):
        sendable_files(pack, ["export.json"])


@posix_only
def test_fifos_sockets_and_devices_are_refused_by_name(pack: Path, tmp_path: Path) -> None:
    os.mkfifo(pack / "pipe.bin")
    (pack / "null.bin").symlink_to("/dev/null")
    # AF_UNIX paths are short: bind in a short folder, then move the socket into the pack.
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "s"))
        os.rename(tmp_path / "s", pack / "sock.bin")
        with pytest.raises(NotSendableError) as refused:
            sendable_files(pack, ["config.json", "pipe.bin", "null.bin", "sock.bin"])
    said = str(refused.value)
    assert "pipe.bin is a named pipe (FIFO), not a regular file" in said
    assert "null.bin is a symbolic link to /dev/null, outside the pack" in said
    assert "sock.bin is a socket, not a regular file" in said


@posix_only
def test_a_file_swapped_for_a_link_after_listing_is_not_read(pack: Path, tmp_path: Path) -> None:
    secret = tmp_path / "token"
    secret.write_text("hf_secret")
    (pack / "LICENSE.txt").write_text("MIT")
    [listed] = sendable_files(pack, ["LICENSE.txt"])
    (pack / "LICENSE.txt").unlink()
    (pack / "LICENSE.txt").symlink_to(secret)
    with pytest.raises(UnreadableFileError, match=r"LICENSE\.txt: .*symbolic link"):
        listed.open()


def test_a_file_replaced_after_listing_is_not_read(pack: Path) -> None:
    (pack / "LICENSE.txt").write_text("MIT")
    [listed] = sendable_files(pack, ["LICENSE.txt"])
    (pack / "other").write_text("someone else's")
    os.replace(pack / "other", pack / "LICENSE.txt")
    with pytest.raises(UnreadableFileError, match="was replaced after the pack's files"):
        listed.open()
