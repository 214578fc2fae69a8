"""The library re-reads only packs whose files changed, and judging a pair renders each
pack's chat format once: on fixture copies in a real library folder, counted."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.infra.settings import Settings
from app.core.pack import compat, library
from app.core.pack.bundle import read_bundle
from app.core.pack.chat_format import ChatFormat
from app.core.pack.compat import assess
from app.core.pack.folder_stamp import folder_stamp
from app.core.pack.library import Library
from app.core.pack.pair_table import PairTables

Copy = Callable[..., Path]


def _counting(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> list[object]:
    calls: list[object] = []
    original = getattr(module, name)

    def counted(*args: object) -> object:
        calls.append(args[0])
        return original(*args)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_a_scan_reads_only_the_packs_that_changed(
    tmp_path: Path, bundle_copy: Copy, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "packs"
    for name in ("qwen3-target", "qwen3-draft-noisy", "fast-draft"):
        bundle_copy(name, root / name)
    lib = Library(Settings(library_dir=str(root)), lambda _: None)
    reads = _counting(monkeypatch, library, "read_bundle")
    first = lib.scan()
    assert len(reads) == 3
    reads.clear()
    assert lib.scan() == first and reads == []

    recipe = root / "fast-draft" / "config_cpu.json"
    recipe.write_text(recipe.read_text().replace("}", ', "thread_num": 3}', 1))
    (root / "qwen3-draft-noisy" / "notes.txt").write_text("a file added")
    again = lib.scan()
    assert sorted(Path(str(p)).name for p in reads) == ["fast-draft", "qwen3-draft-noisy"]
    assert [e.path for e in again] == [e.path for e in first]


def test_a_stamp_follows_every_file_and_a_missing_folder(tmp_path: Path, bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-target", tmp_path / "pack")
    stamp = folder_stamp(pack)
    assert stamp == folder_stamp(pack)
    assert {name for name, _, _ in stamp[2]} >= {"config.json", "llm.mnn", "llm.mnn.weight"}
    weight = pack / "llm.mnn.weight"
    weight.write_bytes(weight.read_bytes()[:100])
    assert folder_stamp(pack) != stamp
    assert folder_stamp(tmp_path / "gone") == (str(tmp_path / "gone"), -1, ())


def test_judging_a_pack_in_many_pairs_renders_its_chat_format_once(
    fixture_bundle: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    target = read_bundle(fixture_bundle("qwen3-target"))
    drafts = [read_bundle(fixture_bundle(n)) for n in ("qwen3-draft-noisy", "fast-draft")]
    renders = _counting(monkeypatch, ChatFormat, "render")
    for draft in drafts * 5:
        assess(target, draft)
    assert len(renders) == 3  # once per pack, not once per pair


def test_a_pair_table_judges_only_pairs_not_judged_before(
    tmp_path: Path, bundle_copy: Copy, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "packs"
    for name in ("qwen3-target", "fast-target", "qwen3-draft-noisy", "fast-draft"):
        bundle_copy(name, root / name)
    lib = Library(Settings(library_dir=str(root)), lambda _: None)
    tables = PairTables()
    judged = _counting(monkeypatch, compat, "assess_either")
    table = tables.build(lib.scan())
    assert len(judged) == len(table.targets) * len(table.drafts) > 0
    assert table.best is not None
    judged.clear()
    assert tables.build(lib.scan()) is table and judged == []
    (root / "fast-draft" / "config_cpu.json").write_text("{oops")
    changed = tables.build(lib.scan())
    assert changed is not table
    assert 0 < len(judged) < len(changed.targets) * len(changed.drafts)
