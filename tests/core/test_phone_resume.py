"""A push cut inside a large file resumes inside it, and a large file is checked for room
before it is sent. Fake phone behind a real adb server (see test_phone.py); amounts are
the bytes the phone received, never seconds."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from app.core.infra.transfer_stats import disk_margin
from app.core.phone.adb import Adb
from app.core.phone.local_files import pack_files
from app.core.phone.push import CANCELLED, DONE, FAILED, PushJob
from tests.adb_harness import AdbServer
from tests.core.test_phone import ROOT, _pack, _phone_copy, _push, _same_files
from tests.fake_phone import FakePhone

WEIGHT = "llm.mnn.weight"


def _pack_bytes(pack: Path) -> int:
    return sum(f.size for f in pack_files(pack))


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _verified_by_sha256(pack: Path, phone: FakePhone) -> None:
    on_phone = _phone_copy(phone)
    for item in pack_files(pack):
        assert _sha256(on_phone / item.rel) == _sha256(item.path), item.rel
    _same_files(pack, on_phone)


def _cut_halfway(phone: FakePhone, adb_server: AdbServer, pack: Path) -> Path:
    """Push until the phone has taken half the pack, then pull the cable; plug it back
    in. The phone's partial folder."""
    phone.cut_after_bytes = phone.bytes_received + _pack_bytes(pack) // 2
    cut = _push(phone, pack).status()
    assert cut.state == FAILED and cut.error_code == "disconnected", cut.error
    phone.settle()  # what the cut interrupted on the phone has stopped
    phone.cut_after_bytes, phone.unplugged = None, False
    adb_server.connect(phone)
    return phone.local(f"{ROOT}/fast-draft.partial")


def _partial_copies(partial: Path) -> list[Path]:
    return [p for p in partial.iterdir() if p.name.startswith(f".{WEIGHT}.")]


def test_a_push_cut_halfway_resumes_inside_the_weight_file(
    tmp_path: Path, adb_server: AdbServer, phone: FakePhone, bundle_copy: Callable[..., Path]
) -> None:
    pack = _pack(bundle_copy, tmp_path, extra_mb=40)
    total = _pack_bytes(pack)
    partial = _cut_halfway(phone, adb_server, pack)
    [kept] = _partial_copies(partial)  # what arrived of the weight file stayed
    kept_bytes = kept.stat().st_size
    assert 0 < kept_bytes < (pack / WEIGHT).stat().st_size
    # Room for the rest but not for the whole pack: the check counts what is there.
    phone.free_bytes = int(0.6 * total) + disk_margin(total)
    before = phone.bytes_received
    resumed = _push(phone, pack).status()
    assert resumed.state == DONE, resumed.error
    sent = phone.bytes_received - before
    assert sent <= 0.55 * total, f"{sent / total:.0%} of the pack sent again"
    assert WEIGHT in resumed.pushed and resumed.resumed_bytes == kept_bytes
    assert (
        resumed.done_bytes
        == resumed.total_bytes
        == total
        - resumed.resumed_bytes
        - sum(f.size for f in pack_files(pack) if f.rel in resumed.skipped)
    )
    _verified_by_sha256(pack, phone)
    assert not partial.exists()


def test_a_partial_copy_whose_prefix_differs_is_sent_whole(
    tmp_path: Path, adb_server: AdbServer, phone: FakePhone, bundle_copy: Callable[..., Path]
) -> None:
    pack = _pack(bundle_copy, tmp_path, extra_mb=20)
    partial = _cut_halfway(phone, adb_server, pack)
    [kept] = _partial_copies(partial)
    with kept.open("r+b") as handle:  # a bad cable, or another version of the pack
        handle.seek(1000)
        byte = handle.read(1)
        handle.seek(1000)
        handle.write(bytes([byte[0] ^ 0xFF]))
    before = phone.bytes_received
    again = _push(phone, pack).status()
    assert again.state == DONE, again.error
    assert again.resumed_bytes == 0
    assert phone.bytes_received - before >= (pack / WEIGHT).stat().st_size
    _verified_by_sha256(pack, phone)


def test_a_file_larger_than_the_free_space_is_refused_before_it_is_sent(
    tmp_path: Path, phone: FakePhone, bundle_copy: Callable[..., Path]
) -> None:
    pack = _pack(bundle_copy, tmp_path, extra_mb=20)
    weight = (pack / WEIGHT).stat().st_size
    filled_at: list[int] = []

    class PhoneFillsUp(PushJob):
        """Another app takes the phone's space while the small files go."""

        def _on_bytes(self, count: int) -> None:
            super()._on_bytes(count)
            if not filled_at and self.status().current_file != WEIGHT:
                phone.free_bytes = weight // 2
                filled_at.append(phone.bytes_received)

    status = PhoneFillsUp(Adb(), phone.address, pack, ROOT).run()
    assert status.state == FAILED and status.error_code == "no_space", status.error
    assert WEIGHT in status.error and "free" in status.error
    assert filled_at and phone.bytes_received - filled_at[0] < 1_000_000  # not sent
    assert not _phone_copy(phone).exists()


def test_a_push_cancelled_inside_a_large_file_resumes_there(
    tmp_path: Path, phone: FakePhone, bundle_copy: Callable[..., Path]
) -> None:
    pack = _pack(bundle_copy, tmp_path, extra_mb=20)
    weight = (pack / WEIGHT).stat().st_size

    class CancelHalfwayThroughWeight(PushJob):
        def _on_bytes(self, count: int) -> None:
            super()._on_bytes(count)
            status = self.status()
            if status.current_file == WEIGHT and status.file_done >= weight // 2:
                self.cancel()

    stopped = CancelHalfwayThroughWeight(Adb(), phone.address, pack, ROOT).run()
    assert stopped.state == CANCELLED and "resumes" in stopped.error
    phone.settle()
    before = phone.bytes_received
    resumed = _push(phone, pack).status()
    assert resumed.state == DONE, resumed.error
    assert resumed.resumed_bytes >= weight // 2
    assert phone.bytes_received - before <= weight - resumed.resumed_bytes + 200_000
    _verified_by_sha256(pack, phone)


def test_a_large_file_to_a_phone_without_the_shell_protocol_goes_whole(
    tmp_path: Path, adb_server: AdbServer, bundle_copy: Callable[..., Path]
) -> None:
    # Android 6 has no stdin for shell commands: the large file goes by sync SEND.
    with FakePhone(tmp_path / "old-phone", android="6.0", shell_v2=False) as old:
        adb_server.connect(old)
        pack = _pack(bundle_copy, tmp_path, extra_mb=10)
        status = _push(old, pack).status()
        assert status.state == DONE and WEIGHT in status.pushed, status.error
        assert not any(c.startswith("cat >") for c in old.commands)
        _verified_by_sha256(pack, old)
