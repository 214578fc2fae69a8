"""How an export job finishes (export_run.py): the pack waits in its hidden partial folder
until `place()` moves it where it was asked for, only when it reads back; a failure at any
step removes the partial folder (so the next export to the same folder runs), an earlier
export is replaced only once the new one is in place, and Ctrl+C after the exporter has
finished is said as such.

The exporter here is a small script run by this Python in place of llmexport.py: it writes
what the test says into the folder the job gives it (the checks after it are the real
ones), so these tests need no export environment.
"""

from __future__ import annotations

import _thread
import json
import sys
import threading
from pathlib import Path

import pytest

from app.cli.export import place_made_pack, run_export
from app.core.pack.bundle import read_bundle
from app.core.pack.files import EXPORT_CHECK
from app.core.packmaking.card import CARD_MARK
from app.core.packmaking.export_checks import ExportRefused, ExportSettings, plan_export
from app.core.packmaking.export_env import write_mnnconvert_shim
from app.core.packmaking.export_mark import EXPORT_MARK
from app.core.packmaking.export_partials import PARTIAL_MARK
from app.core.packmaking.export_run import (
    DONE,
    FAILED,
    NEEDED,
    READING,
    ExportJob,
)
from tests.helpers.export_env import HF_FIXTURES
from tests.helpers.paths import FIXTURES
from tests.helpers.script_exporter import script_env

LLAMA = HF_FIXTURES / "llama-tiny"
PACK = FIXTURES / "era-3.3.0"  # what the stand-in exporter "makes": a pack that reads


def _copying(pack: Path, also: str = "") -> str:
    """An exporter that copies `pack`'s files into its working folder, then runs `also`."""
    return f"import shutil; shutil.copytree({str(pack)!r}, '.', dirs_exist_ok=True)\n{also}\n"


def _job(tmp_path: Path, exporter: str, out: Path) -> ExportJob:
    plan = plan_export(LLAMA, out, ExportSettings(block=64))
    return ExportJob(script_env(tmp_path, exporter), plan)


def _hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_a_pack_that_does_not_read_back_leaves_no_partial_folder(tmp_path: Path) -> None:
    garbage = "".join(f"open({name!r}, 'w').write('not a pack')\n" for name in NEEDED)
    out = tmp_path / "models" / "pack"
    job = _job(tmp_path, garbage, out)
    status = job.run()
    assert status.state == FAILED and "do not read as a pack" in status.error
    assert not job.partial.exists() and not out.exists()
    # The next export to the same folder starts afresh (not "File exists").
    job.restart()
    status = job.run()
    assert status.state == FAILED and "do not read as a pack" in status.error, status.error
    assert _hidden(out.parent) == []


def test_a_file_put_in_the_output_meanwhile_fails_the_export_and_is_kept(
    tmp_path: Path,
) -> None:
    out = tmp_path / "pack"
    # Someone writes into the output folder while the exporter runs.
    meanwhile = f"import os; os.makedirs({str(out)!r}); open({str(out / 'notes.txt')!r}, 'w')"
    job = _job(tmp_path, _copying(PACK, meanwhile), out)
    assert job.run().state == DONE, job.status().error
    assert read_bundle(job.partial).path == job.partial  # made, not in place yet
    with pytest.raises(ExportRefused, match="not empty and DraftDeck did not make it"):
        job.place()
    assert not job.partial.exists()
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


def test_an_earlier_make_pack_folder_is_replaced_by_the_new_export(tmp_path: Path) -> None:
    out = tmp_path / "pack"
    job = _job(tmp_path, _copying(PACK), out)
    assert job.run().state == DONE, job.status().error
    assert not out.exists()  # in the partial folder until placed
    assert job.place() == out
    mark = json.loads((out / EXPORT_MARK).read_text(encoding="utf-8"))
    assert not (out / PARTIAL_MARK).exists() and PARTIAL_MARK not in mark["files"]
    # What Make Pack adds after the export: the verification and DraftDeck's card.
    (out / EXPORT_CHECK).write_text("{}", encoding="utf-8")
    (out / "README.md").write_text(f"---\nx: 1\n---\n{CARD_MARK} -->\n", encoding="utf-8")
    (out / "llm_config.json").write_text(  # told apart from the new export's below
        json.dumps({**json.loads((out / "llm_config.json").read_text()), "old": True})
    )
    again = _job(tmp_path / "again", _copying(PACK), out)
    assert again.run().state == DONE, again.status().error
    again.place()
    assert "old" not in json.loads((out / "llm_config.json").read_text())
    assert not (out / EXPORT_CHECK).exists()  # the new export is not verified yet
    assert read_bundle(out).path == out
    assert _hidden(tmp_path) == []  # neither the partial folder nor the earlier one aside


class _CancelSeen(ExportJob):
    """An export job that says when it was asked to cancel."""

    cancel_seen = threading.Event()

    def cancel(self) -> None:
        super().cancel()
        self.cancel_seen.set()


def test_ctrl_c_while_the_pack_is_read_back_ends_with_the_pack_made(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "pack"
    plan = plan_export(LLAMA, out, ExportSettings(block=64))
    job = _CancelSeen(script_env(tmp_path, _copying(PACK)), plan)

    def on_change() -> None:
        # Ctrl+C once the exporter has ended; the job goes on once the command cancelled.
        if job.status().state == READING and not job.cancel_seen.is_set():
            _thread.interrupt_main()
            assert job.cancel_seen.wait(300)

    job.listen(on_change)
    assert run_export(job) == 0
    assert place_made_pack(job) == 0
    said = capsys.readouterr()
    assert "too late to cancel: the export had finished" in said.err
    assert "nothing was left" not in said.err and f"made {out}" in said.out
    assert job.status().state == DONE and read_bundle(out).path == out


@pytest.mark.parametrize(
    ("platform", "shim_name", "argument"),
    [("win32", "mnnconvert.cmd", ".\\mnnconvert.cmd"), ("linux", "mnnconvert", "./mnnconvert")],
)
def test_the_converter_is_named_so_the_platforms_shell_runs_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, platform: str, shim_name: str, argument: str
) -> None:
    # No Windows here: the command is built with sys.platform patched. llmexport checks
    # the converter with os.path.exists and runs it through the shell from the export's
    # folder; cmd.exe takes the "/" of "./mnnconvert.cmd" for a switch.
    monkeypatch.setattr(sys, "platform", platform)
    job = _job(tmp_path, "", tmp_path / "pack")
    folder = tmp_path / "partial"
    folder.mkdir()
    shim = write_mnnconvert_shim(Path("C:/Program Files/Python/python.exe"), folder)
    cmd = job.command(shim)
    assert shim.name == shim_name
    assert cmd[cmd.index("--mnnconvert") + 1] == argument
    assert cmd[cmd.index("--dst_path") + 1] == "."  # the shim's folder is the exporter's
    text = shim.read_bytes().decode()
    if platform == "win32":  # the interpreter quoted (a space), the arguments passed on
        assert text.startswith('@"C:/Program Files/Python/python.exe" -c ')
        assert text.endswith(" %*\r\n") and not text.endswith("\r\r\n")
    else:
        assert "exec 'C:/Program Files/Python/python.exe' -c " in text
