"""Packs under paths with accents, CJK and spaces load and generate (issue 15).

MNN's Windows build opens files through the ANSI APIs, so the engine hands it only
names relative to the pack folder and calls it from inside that folder
(app/engine/worker/pack_folder.py). The same code runs on every OS: these tests exercise it
here with real MNN and the fixture bundles, in-process, through the worker and through
the CLI. On Linux a folder name that is not UTF-8 at all is a path pymnn cannot even be
handed, which shows that it never is.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.infra.errors import EngineError
from app.core.recipe.drafting_settings import FIXED_DRAFTING
from app.engine.client.engine_client import EngineClient
from app.engine.protocol import Generate, Load, Mode
from app.engine.worker.decoder import Generation
from app.engine.worker.pack_folder import PackFolder
from app.engine.worker.session import Session
from tests.helpers.cli import APP, run_cli

NORMAL = {"memory": "normal", "thread_num": 1}
PROMPT = "Tell me about the rivers of the north."
TOKENS = 40
LIBRARY = "Zoë Ünïcødé"  # the library root above the packs
TARGET = os.path.join("模型 包", "qwen3-target")  # relative to the library root
DRAFT = os.path.join("Brouillon été ✓", "qwen3-draft-noisy")
Fixture = Callable[[str], Path]


@pytest.fixture
def library(tmp_path: Path) -> Path:
    return tmp_path / LIBRARY


@pytest.fixture
def pair(library: Path, bundle_copy: Callable[..., Path]) -> tuple[Path, Path]:
    """A target and a draft with different weights, in two non-ASCII folders."""
    target = bundle_copy("qwen3-target", library / TARGET)
    draft = bundle_copy("qwen3-draft-noisy", library / DRAFT)
    return target, draft


def _generate(session: Session, mode: Mode = Mode.SPECULATIVE) -> Generation:
    session.reset()
    return session.generate(
        # Fixed drafting: the accepted counts compared below are then the weights' alone
        # (adaptive drafting's follow the machine's speed).
        Generate(
            prompt=PROMPT, max_tokens=TOKENS, mode=mode, ignore_stop=True, drafting=FIXED_DRAFTING
        ),
        lambda event: None,
        lambda: False,
    )


def _same(a: str | Path, b: str | Path) -> bool:
    return Path(a).resolve() == Path(b).resolve()


# -- in-process session ------------------------------------------------------------------


def test_pair_in_non_ascii_folders_matches_the_ascii_pair(
    session: Session, fixture_bundle: Fixture, pair: tuple[Path, Path]
) -> None:
    home = os.getcwd()
    session.load(
        str(fixture_bundle("qwen3-target")),
        str(fixture_bundle("qwen3-draft-noisy")),
        dict(NORMAL),
        dict(NORMAL),
        3,
    )
    reference = _generate(session)
    target, draft = pair
    info = session.load(str(target), str(draft), dict(NORMAL), dict(NORMAL), 3)  # a reload
    assert info.target["path"] == str(target)
    assert info.draft is not None and info.draft["path"] == str(draft)
    got = _generate(session)
    assert got.tokens == reference.tokens
    # Each model ran on its own pack's weights: the noisy draft is partly accepted
    # exactly as from the ASCII folders (the target's weights would accept everything).
    assert got.stats.accepted == reference.stats.accepted
    assert got.stats.acceptance is not None and 0 < got.stats.acceptance < 1
    assert _generate(session, Mode.PLAIN).tokens == reference.tokens  # lossless
    assert os.getcwd() == home  # no call left the process in a pack folder


def test_relative_paths_keep_the_callers_meaning(
    session: Session, pair: tuple[Path, Path], library: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target, draft = pair
    monkeypatch.chdir(library)
    for _ in range(2):  # the second load resolves the same names: the cwd came back
        info = session.load(TARGET, DRAFT, dict(NORMAL), dict(NORMAL), 3)
        assert _same(info.target["path"], target) and Path(info.target["path"]).is_absolute()
        assert info.draft is not None and _same(info.draft["path"], draft)
        assert _generate(session).stats.tokens == TOKENS
        assert _same(os.getcwd(), library)


def test_linear_attention_pack_in_a_non_ascii_folder(
    session: Session, bundle_copy: Callable[..., Path], library: Path
) -> None:
    """Qwen3.5: the load-time probe, erase and reset steps all run inside the folder."""
    path = str(bundle_copy("qwen35-draft", library / "线性 注意力" / "qwen35-draft"))
    info = session.load(path, path, dict(NORMAL), dict(NORMAL), 2)
    assert info.verify == "stepwise"
    plain = _generate(session, Mode.PLAIN)
    spec = _generate(session)
    assert spec.tokens == plain.tokens
    assert spec.stats.acceptance == 1.0


@pytest.mark.skipif(sys.platform != "linux", reason="needs a file name that is not UTF-8")
def test_mnn_is_never_handed_the_folder_path(
    session: Session, bundle_copy: Callable[..., Path], tmp_path: Path
) -> None:
    import MNN.llm as mnn_llm

    folder = Path(os.fsdecode(os.fsencode(tmp_path) + b"/caf\xe9 \xff"))  # Latin-1, not UTF-8
    target = bundle_copy("qwen3-target", folder / "qwen3-target")
    with pytest.raises(TypeError):  # pymnn cannot take this path: it must never get it
        mnn_llm.create(str(target / "config.json"))
    session.load(str(target), None, dict(NORMAL))
    assert _generate(session, Mode.PLAIN).stats.tokens == TOKENS


def test_a_loaded_pack_whose_folder_went_away_still_generates(
    session: Session,
    bundle_copy: Callable[..., Path],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Linux and macOS let a folder be renamed while its files are open (Windows does not).
    target = bundle_copy("qwen3-target", tmp_path / "模型" / "qwen3-target")
    session.load(str(target), None, dict(NORMAL))
    expected = _generate(session, Mode.PLAIN).tokens
    if sys.platform == "win32":
        pytest.skip("Windows refuses to rename a folder whose files are open")
    target.rename(tmp_path / "模型" / "renamed")
    with caplog.at_level(logging.WARNING, logger="draftdeck.engine.folder"):
        assert _generate(session, Mode.PLAIN).tokens == expected
    assert sum("cannot enter the pack folder" in r.getMessage() for r in caplog.records) == 1
    session.unload()  # frees it where it is


# -- the worker process and the CLI ------------------------------------------------------


def test_worker_loads_and_generates_from_non_ascii_folders(
    pair: tuple[Path, Path],
    library: Path,
    fixture_bundle: Fixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    target, draft = pair
    monkeypatch.chdir(library)  # the worker starts here: relative paths are the caller's
    # Like Windows, the worker's text streams use a code page without CJK; requests
    # carry paths as \\u escapes, so they must arrive intact anyway.
    monkeypatch.setenv("PYTHONIOENCODING", "cp1252")
    generate = Generate(prompt=PROMPT, max_tokens=TOKENS, ignore_stop=True, drafting=FIXED_DRAFTING)
    with EngineClient() as client:
        client.run(
            Load(
                target=str(fixture_bundle("qwen3-target")),
                draft=str(fixture_bundle("qwen3-draft-noisy")),
                target_config=NORMAL,
                draft_config=NORMAL,
                draft_length=3,
            ),
            timeout=120,
        )
        reference = client.run(generate, timeout=120)
        loaded = client.run(
            Load(
                target=TARGET,
                draft=str(draft),
                target_config=NORMAL,
                draft_config=NORMAL,
                draft_length=3,
            ),
            timeout=120,
        )
        assert _same(loaded.target["path"], target)
        assert loaded.draft is not None and loaded.draft["path"] == str(draft)
        done = client.run(generate, timeout=120)
    assert done.tokens == reference.tokens
    assert done.stats.accepted == reference.stats.accepted


def test_cli_info_and_generate_on_non_ascii_paths(
    pair: tuple[Path, Path], library: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target, _draft = pair
    described = json.loads(run_cli("info", str(target), "--json", check=True).stdout)
    assert described["path"] == str(target)
    # A redirected stdout on Windows has the ANSI code page (cp1252): no CJK in it.
    windows_like = dict(os.environ, PYTHONIOENCODING="cp1252")
    info = subprocess.run(
        [*APP, "info", str(target)], capture_output=True, env=windows_like, timeout=120
    )
    assert info.returncode == 0, info.stderr.decode("cp1252")
    shown = info.stdout.decode("cp1252")
    assert "Zoë Ünïcødé" in shown  # what cp1252 holds is printed as is
    assert "\\u6a21\\u578b" in shown  # 模型 is escaped rather than a crash
    monkeypatch.chdir(library)
    spoken = run_cli(
        "generate",
        "--target",
        TARGET,
        "--draft",
        DRAFT,
        "--recipe",
        str(_write_recipe(library)),
        "--prompt",
        "Hello",
        "--max-tokens",
        "20",
        "--json",
        check=True,
    )
    out = json.loads(spoken.stdout)
    assert out["stats"]["tokens"] == len(out["tokens"]) <= 20
    assert out["stats"]["acceptance"] is not None  # the draft took part
    text = subprocess.run(
        [*APP, "generate", "--target", TARGET, "--prompt", "Hello", "--max-tokens", "20"],
        capture_output=True,
        env=windows_like,
        timeout=300,
    )
    assert text.returncode == 0, text.stderr.decode("cp1252")


def _write_recipe(library: Path) -> Path:
    recipe = library / "réglages" / "recette.json"
    recipe.parent.mkdir()
    recipe.write_text(json.dumps(NORMAL), encoding="utf-8")
    return recipe


# -- the folder helper itself ------------------------------------------------------------


def test_pack_folder_returns_to_the_callers_folder(tmp_path: Path) -> None:
    inner = tmp_path / "模型 包"
    inner.mkdir()
    home = os.getcwd()
    folder = PackFolder(inner)
    with pytest.raises(RuntimeError), folder.inside():
        assert _same(os.getcwd(), inner)
        raise RuntimeError("MNN failed")
    assert os.getcwd() == home


def test_pack_folder_is_absolute_from_the_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    folder = PackFolder(Path("a") / "b")
    with folder.inside(), folder.inside():  # nested: still the same folder
        assert _same(os.getcwd(), tmp_path / "a" / "b")
    assert _same(os.getcwd(), tmp_path)


def test_a_missing_pack_folder_is_an_error_only_where_required(tmp_path: Path) -> None:
    folder = PackFolder(tmp_path / "gone")
    with pytest.raises(EngineError) as caught, folder.inside():
        pass
    assert caught.value.code == "unreadable"
    assert "cannot enter the pack folder" in caught.value.message
    home = os.getcwd()
    with folder.inside(required=False):
        assert os.getcwd() == home
