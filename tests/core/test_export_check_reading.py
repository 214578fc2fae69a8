"""A pack's export_check.json read back (app/core/pack/export_check.py): the verdict and
its figures at memory normal as verify-export wrote them, None for a pack never checked,
and a broken file reported as unreadable, naming it, without stopping a library scan."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.infra.settings import Settings
from app.core.pack import library
from app.core.pack.export_check import ExportVerdict, SavedExportCheck, read_export_check
from app.core.pack.files import EXPORT_CHECK
from app.core.pack.library import Library
from tests.helpers.export_checks import record_check

Copy = Callable[..., Path]


def test_a_pack_never_checked_has_no_check(bundle_copy: Copy) -> None:
    assert read_export_check(bundle_copy("qwen3-draft-noisy")) is None


def test_a_verified_check_reads_back_with_its_figures(bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-draft-noisy")
    record_check(pack, faithful=1.0, cost=0.9137)
    check = read_export_check(pack)
    assert check is not None and check.verified
    assert (check.verdict, check.faithful, check.cost) == (ExportVerdict.VERIFIED, 1.0, 0.9137)
    assert check.headline() == (
        "Export verified (faithful 1.000 top-1 against the quantized source, "
        "quantization cost 0.913)"
    )
    assert check.words() == check.headline()
    assert check.to_json()["verdict"] == "export verified"


def test_a_failed_check_reads_back_with_what_differs(bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-draft-noisy")
    written = record_check(pack, faithful=0.7, cost=0.6)
    check = read_export_check(pack)
    assert check is not None and not check.verified
    assert check.verdict == ExportVerdict.NOT_VERIFIED
    assert check.reasons == written.reasons and len(check.reasons) == 2
    words = check.words()
    assert words.startswith("Export not verified: Top-1 agreement with the quantized source")
    assert "first differs after token 3" in words and "' ,,,,'" in words
    assert check.to_json()["faithful"] == pytest.approx(0.7)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{not json", "line 1"),
        ("[]", "expected an object"),
        ("", "empty"),
        ('{"verdict": "export verified"}', '"verified"'),
        ('{"verified": true, "runs": 3}', '"runs" is not a list'),
        ('{"verified": true, "reasons": [1], "runs": []}', '"reasons"'),
        (
            '{"verified": true, "runs": [{"memory": "normal", "faithful": "0.99", '
            '"quantization_cost": 0.9}]}',
            "not numbers from 0 to 1",
        ),
        (
            '{"verified": true, "runs": [{"memory": "normal", "faithful": 1.5, '
            '"quantization_cost": 0.9}]}',
            "not numbers from 0 to 1",
        ),
    ],
)
def test_a_broken_check_is_unreadable_naming_the_file(
    tmp_path: Path, text: str, problem: str
) -> None:
    (tmp_path / EXPORT_CHECK).write_text(text, encoding="utf-8")
    check = read_export_check(tmp_path)
    assert check is not None and check.verdict == ExportVerdict.UNREADABLE
    assert problem in check.problem, check.problem
    assert not check.verified and check.faithful is None
    assert str(tmp_path / EXPORT_CHECK) in check.headline()
    assert check.words() == check.headline()


def test_a_check_without_a_memory_normal_run_says_it_has_no_figures(tmp_path: Path) -> None:
    data = {"verified": False, "reasons": [], "runs": [{"memory": "low", "faithful": 0.9}]}
    (tmp_path / EXPORT_CHECK).write_text(json.dumps(data), encoding="utf-8")
    check = read_export_check(tmp_path)
    assert check is not None and check.faithful is None
    assert check.words() == "Export not verified: no figures at memory normal"


def test_a_folder_in_place_of_the_file_is_unreadable(tmp_path: Path) -> None:
    (tmp_path / EXPORT_CHECK).mkdir()
    check = read_export_check(tmp_path)
    assert check is not None and check.verdict == ExportVerdict.UNREADABLE
    assert "folder" in check.problem


def test_the_library_lists_each_packs_check_and_reads_it_again_only_when_changed(
    tmp_path: Path, bundle_copy: Copy, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "packs"
    names = ("fast-draft", "qwen3-draft-noisy", "qwen3-target", "broken-check")
    packs = {
        name: bundle_copy(name.replace("broken-check", "fast-target"), root / name)
        for name in names
    }
    record_check(packs["fast-draft"], 0.999, 0.91)
    record_check(packs["qwen3-draft-noisy"], 0.5, 0.4)
    (packs["broken-check"] / EXPORT_CHECK).write_text("{", encoding="utf-8")
    lib = Library(Settings(library_dir=str(root)), lambda _: None)
    reads: list[Path] = []
    original = read_export_check

    def counted(pack: Path) -> SavedExportCheck | None:
        reads.append(pack)
        return original(pack)

    monkeypatch.setattr(library, "read_export_check", counted)

    entries = {e.name: e for e in lib.scan()}
    assert all(e.ok for e in entries.values())  # a broken check never breaks the pack
    verdicts = {name: e.export_check and e.export_check.verdict for name, e in entries.items()}
    assert verdicts == {
        "fast-draft": ExportVerdict.VERIFIED,
        "qwen3-draft-noisy": ExportVerdict.NOT_VERIFIED,
        "qwen3-target": None,
        "broken-check": ExportVerdict.UNREADABLE,
    }
    assert [e.export_doubtful for e in entries.values()] == [
        name in ("qwen3-draft-noisy", "broken-check") for name in entries
    ]
    assert len(reads) == 4

    reads.clear()
    lib.scan()
    assert reads == []  # the scan is cached by folder stamps: nothing read again
    record_check(packs["broken-check"], 1.0, 0.95)  # checked again: a new file
    again = {e.name: e for e in lib.scan()}
    assert reads == [packs["broken-check"]]
    check = again["broken-check"].export_check
    assert check is not None and check.verified
