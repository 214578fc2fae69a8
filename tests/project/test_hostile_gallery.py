"""The hostile-pack gallery: every kind of stranger's file DraftDeck refuses, through every
path that reads a pack (the Library scan, `info`, `check`, the Pair page, the engine).

Each pack is made here from a copy of a committed bundle. Whatever the read path, a
hostile pack must be named with its reason, must not make a command print a traceback,
hang past its bound or grow past its memory bound, and must leave the good packs beside
it as they were. The subprocess runs are bounded by their timeouts (a hang fails the
test, never the suite) and their peak memory is read from the kernel (wait4).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.core.hub.publish import publish_plan
from app.core.infra.errors import EngineError, FileError, NotSendableError
from app.core.infra.settings import load_settings, save_settings
from app.core.phone.local_files import pack_files
from app.engine.client.engine_client import EngineClient
from app.engine.protocol import Generate, Load
from app.ui.shell.application import create_main_window
from tests.helpers.cli import APP
from tests.helpers.mnn_graphs import FUSED_LINEAR, graph_bytes, transformer_ops
from tests.helpers.paths import FIXTURES

Copy = Callable[..., Path]
GOOD_TARGET, GOOD_DRAFT = "qwen3-target", "qwen3-draft-identical"
TEMPLATE_FAILS = "template could not be rendered"
# A pack's reading costs far less; 1 GiB catches a bomb that got past its bound.
MEMORY_BOUND = 1 << 30
TIMEOUT = 120  # a guard against a hang on a loaded machine, not a speed limit


def _edit_json(path: Path, change: Callable[[dict[str, object]], None]) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def _template(source: str) -> Callable[[Path], None]:
    def make(pack: Path) -> None:
        def change(config: dict[str, object]) -> None:
            jinja = config["jinja"]
            assert isinstance(jinja, dict)
            jinja["chat_template"] = source

        _edit_json(pack / "llm_config.json", change)

    return make


@dataclass(frozen=True)
class Hostile:
    """A way to spoil a pack, and the words that must name what is wrong with it."""

    make: Callable[[Path], None]
    reason: str
    # A pack DraftDeck can still read (its fault shows in its pairs, not as an error).
    readable: bool = False


def _config_text(text: str) -> Callable[[Path], None]:
    def make(pack: Path) -> None:
        (pack / "config.json").write_text(text, encoding="utf-8")

    return make


def _llm_config(key: str, value: object) -> Callable[[Path], None]:
    def make(pack: Path) -> None:
        _edit_json(pack / "llm_config.json", lambda config: config.__setitem__(key, value))

    return make


def _raw_llm_config(key: str, literal: str) -> Callable[[Path], None]:
    """A value Python's json module would write differently (a 5,000-digit number)."""

    def make(pack: Path) -> None:
        path = pack / "llm_config.json"
        text = path.read_text(encoding="utf-8").rstrip()
        assert text.endswith("}")
        path.write_text(f'{text[:-1]}, "{key}": {literal}}}', encoding="utf-8")

    return make


def _graph(data: Callable[[bytes], bytes]) -> Callable[[Path], None]:
    def make(pack: Path) -> None:
        graph = pack / "llm.mnn"
        graph.write_bytes(data(graph.read_bytes()))

    return make


def _symlink_loop(pack: Path) -> None:
    (pack / "llm.mnn").unlink()
    (pack / "loop-a").symlink_to("loop-b")
    (pack / "loop-b").symlink_to("loop-a")
    (pack / "llm.mnn").symlink_to("loop-a")


GALLERY: dict[str, Hostile] = {
    # MNN reads the first of a key given twice (outside the pack), other readers the last.
    "json-key-twice": Hostile(
        _config_text('{"llm_weight": "../../outside.weight", "llm_weight": "llm.mnn.weight"}'),
        "is given twice",
    ),
    "json-huge-number": Hostile(_raw_llm_config("hidden_size", "9" * 5000), "beyond any sane size"),
    "json-nul-in-a-path": Hostile(_config_text('{"llm_weight": "llm.mnn.weight\\u0000x"}'), "NUL"),
    "json-layers-not-in-the-graph": Hostile(
        _llm_config("layer_nums", 10**9), "llm.mnn holds 2 layers"
    ),
    "graph-random-bytes": Hostile(
        _graph(lambda data: os.urandom(len(data))), "is not an MNN graph"
    ),
    "graph-cut-short": Hostile(_graph(lambda data: data[: len(data) // 2]), "is not an MNN graph"),
    "graph-one-byte": Hostile(_graph(lambda data: b"\x00"), "is not an MNN graph"),
    "graph-newer-ops": Hostile(
        _graph(lambda data: graph_bytes(transformer_ops(2, [(FUSED_LINEAR, "fused")]))),
        "needs a newer MNN than 3.6.1: FusedLinear",
    ),
    "symlink-loop": Hostile(_symlink_loop, "llm.mnn"),
    "template-loops": Hostile(
        _template(
            "{% for a in range(100000) %}{% for b in range(100000) %}x{% endfor %}{% endfor %}"
        ),
        TEMPLATE_FAILS,
        readable=True,
    ),
    "template-divides-by-zero": Hostile(_template("{{ 1/0 }}"), TEMPLATE_FAILS, readable=True),
    "template-recurses": Hostile(
        _template("{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}"), TEMPLATE_FAILS, True
    ),
    "template-huge-string": Hostile(_template("{{ 'a' * 10**10 }}"), TEMPLATE_FAILS, True),
    "template-nested-ifs": Hostile(
        _template("{% if 1 %}" * 5000 + "{% endif %}" * 5000), TEMPLATE_FAILS, True
    ),
}


@dataclass(frozen=True)
class Ran:
    code: int
    out: str
    err: str
    peak_bytes: int


def _run(*args: str) -> Ran:
    """A draftdeck command as a user runs it."""
    return _run_command([*APP, *args], f"draftdeck {' '.join(args)}")


def _run_command(command: list[str], what: str, env: dict[str, str] | None = None) -> Ran:
    """`command`'s outcome, with its own peak memory as the kernel counted it."""
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    if sys.platform == "win32":  # no wait4: the memory bound is checked elsewhere
        try:
            out, err = proc.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            pytest.fail(f"{what} still ran after {TIMEOUT} s")
        return Ran(proc.returncode, out, err, 0)
    texts: dict[str, str] = {}
    readers = [
        threading.Thread(target=lambda k=k, f=f: texts.__setitem__(k, f.read()))
        for k, f in (("out", proc.stdout), ("err", proc.stderr))
    ]
    for reader in readers:
        reader.start()
    timer = threading.Timer(TIMEOUT, proc.kill)
    timer.start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        timer.cancel()
        timer.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    for reader in readers:
        reader.join()
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    proc.stderr.close()
    if proc.returncode == -signal.SIGKILL:
        pytest.fail(f"{what} still ran after {TIMEOUT} s")
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB on Linux
    return Ran(proc.returncode, texts["out"], texts["err"], usage.ru_maxrss * scale)


def _assert_calm(ran: Ran, what: str) -> None:
    assert "Traceback" not in ran.err, f"{what} printed a traceback:\n{ran.err}"
    assert ran.peak_bytes < MEMORY_BOUND, f"{what} peaked at {ran.peak_bytes:,} bytes"


@pytest.fixture(scope="module")
def gallery(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A library folder holding the two good packs and every hostile one."""

    from tests.helpers.paths import FIXTURES

    root = tmp_path_factory.mktemp("gallery") / "library"
    root.mkdir()
    for name in (GOOD_TARGET, GOOD_DRAFT):
        shutil.copytree(FIXTURES / name, root / name)
    for name, hostile in GALLERY.items():
        pack = root / name
        shutil.copytree(FIXTURES / GOOD_DRAFT, pack)
        hostile.make(pack)
    yield root


@pytest.mark.parametrize("name", sorted(GALLERY))
def test_info_names_the_fault(gallery: Path, name: str) -> None:
    ran = _run("info", "--json", str(gallery / name))
    _assert_calm(ran, f"info {name}")
    assert GALLERY[name].reason in ran.out + ran.err
    assert ran.code == (0 if GALLERY[name].readable else 1)


@pytest.mark.parametrize("name", sorted(GALLERY))
def test_check_names_the_fault_both_ways(gallery: Path, name: str) -> None:
    hostile = GALLERY[name]
    # Exit 2: a pack could not be read. A template that fails blocks a target (1); the
    # engine never renders a draft's template, so there it is a warning (0).
    for target, draft, code in ((GOOD_TARGET, name, 0), (name, GOOD_DRAFT, 1)):
        ran = _run("check", str(gallery / target), str(gallery / draft))
        _assert_calm(ran, f"check {target} {draft}")
        assert hostile.reason in ran.out + ran.err
        assert ran.code == (code if hostile.readable else 2), (target, draft, ran)


SCAN = """
import json, sys
from pathlib import Path
from app.core.infra.settings import load_settings, save_settings
from app.core.pack.library import Library
settings = load_settings()
library = Library(settings, save_settings)
library.set_root(Path(sys.argv[1]))
print(json.dumps({e.name: e.status for e in library.scan()}))
"""


def test_the_library_scan_keeps_the_good_packs(gallery: Path, tmp_path: Path) -> None:
    env = {**os.environ, "DRAFTDECK_HOME": str(tmp_path / "home")}
    ran = _run_command([sys.executable, "-c", SCAN, str(gallery)], "the library scan", env)
    _assert_calm(ran, "the library scan")
    assert ran.code == 0, ran.err
    statuses = json.loads(ran.out)
    assert statuses[GOOD_TARGET] == "ok" and statuses[GOOD_DRAFT] == "ok"
    for name, hostile in GALLERY.items():
        if not hostile.readable:
            assert hostile.reason in statuses[name], (name, statuses[name])


def test_the_pair_page_reads_and_judges_every_pack(
    gallery: Path, qtbot: QtBot, draftdeck_home: Path
) -> None:
    settings = load_settings()
    settings.library_dir = str(gallery)
    save_settings(settings)
    win = create_main_window()
    qtbot.addWidget(win)
    win.show()
    win.show_page("pair")
    page = win.pair_page
    qtbot.waitUntil(lambda: not page.loading() and page.matrix_model.rowCount() > 0, timeout=90_000)
    # The good pair is judged as it is away from the gallery.
    alone = _run("check", str(FIXTURES / GOOD_TARGET), str(FIXTURES / GOOD_DRAFT))
    page.choose(gallery / GOOD_TARGET, gallery / GOOD_DRAFT)
    assert page.card.title.text().endswith(alone.out.splitlines()[0])
    for name, hostile in GALLERY.items():
        page.choose(gallery / GOOD_TARGET, gallery / name)
        shown = page.card.title.text() + page.card.body.text()
        assert hostile.reason in shown, (name, shown)


def test_the_engine_refuses_each_pack_and_serves_the_next(
    gallery: Path, client: EngineClient
) -> None:
    good = {"thread_num": 1}
    for name in sorted(GALLERY):
        with pytest.raises(EngineError) as caught:
            client.run(Load(target=str(gallery / name), target_config=good), timeout=TIMEOUT)
            client.run(Generate(prompt="Hi", max_tokens=4), timeout=TIMEOUT)
        assert GALLERY[name].reason in str(caught.value), name
        client.run(Load(target=str(gallery / GOOD_TARGET), target_config=good), timeout=TIMEOUT)
        done = client.run(Generate(prompt="Hi", max_tokens=4), timeout=TIMEOUT)
        assert done.stats.tokens > 0, f"after {name}, the good pack did not run"


def _links_out(pack: Path) -> Path:
    """LICENSE.txt leading to a secret beside the pack, as a token would be."""
    secret = pack.parent / f"{pack.name}-secret"
    secret.write_text("hf_not_for_anyone", encoding="utf-8")
    (pack / "LICENSE.txt").symlink_to(f"../{secret.name}")
    return secret


@pytest.mark.parametrize("send", [publish_plan, pack_files], ids=["publish", "push"])
def test_only_a_packs_own_regular_files_are_sent(
    gallery: Path, tmp_path: Path, send: Callable[..., object]
) -> None:
    linked = tmp_path / "links-out"
    shutil.copytree(FIXTURES / GOOD_DRAFT, linked)
    _links_out(linked)
    args = ("me/pack",) if send is publish_plan else ()
    with pytest.raises(NotSendableError) as caught:
        send(linked, *args)
    assert "LICENSE.txt" in caught.value.problem and "outside the pack" in caught.value.problem
    for name, hostile in GALLERY.items():
        if hostile.readable:
            continue  # its files are its own; the fault is in what they say
        with pytest.raises(FileError) as refused:
            send(gallery / name, *args)
        assert hostile.reason in str(refused.value), name
