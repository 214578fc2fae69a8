"""A cancel of the export check once the source has run is kept: while the pack's engine
worker starts (where killing it does nothing) the check stops before the pack runs, and
one heard as the check ends makes the dialog say "Verification cancelled.", not a
verdict, and the pack records it as not verified (interrupted). Real export of the tiny
HF Llama in the export environment (tests/helpers/export_env.py), real worker."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.core.pack.export_check import read_export_check
from app.core.packmaking import export_run
from app.core.packmaking.export_checks import ExportSettings, plan_export
from app.core.packmaking.export_process import ProcessCancelled, StreamedProcess
from app.core.packmaking.export_run import ExportJob
from app.engine.client.engine_client import EngineClient
from app.engine.client.export_verify import verify_export
from app.ui.base import background
from app.ui.packmaking.pack_verify import VerifyStep
from tests.helpers.export_env import export_env, hf_folder

pytestmark = pytest.mark.slow
EXPORT_MS = 900_000  # a hang guard on a loaded 2-core machine
PACK_RUN = "pack at memory"  # the line said just before a pack run


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    made = tmp_path_factory.mktemp("verify-cancel") / "llama-tiny-MNN"
    plan = plan_export(hf_folder("llama-tiny"), made, ExportSettings(block=64))
    job = ExportJob(export_env(), plan)
    assert job.run().state == export_run.DONE
    return job.place()


def test_a_cancel_after_the_source_stops_before_the_pack_runs(pack: Path) -> None:
    process = StreamedProcess()
    said: list[str] = []

    def say(line: str) -> None:
        said.append(line)
        if line.startswith(PACK_RUN):
            process.cancel()  # the source is done: no child left to kill

    with EngineClient() as client:
        with pytest.raises(ProcessCancelled):
            verify_export(client, export_env(), pack, hf_folder("llama-tiny"), say, process=process)
        assert client.pid is None  # the pack's worker never started
    assert said[-1].startswith(PACK_RUN)


def test_a_cancel_as_the_check_ends_is_said_not_a_verdict(qtbot: QtBot, pack: Path) -> None:
    step = VerifyStep()
    asked: list[str] = []

    def cancel_once_done(line: str) -> None:
        if line.startswith(PACK_RUN) and not asked:
            asked.append(line)
            # The check ends (verified, recorded) before the Cancel is heard: the GUI
            # thread waits here, so the answer is still queued behind this call.
            assert background.wait_for_background(EXPORT_MS)
            step.cancel()

    step.progress.connect(cancel_once_done)
    with qtbot.waitSignal(step.finished, timeout=EXPORT_MS) as heard:
        step.start(export_env(), pack, hf_folder("llama-tiny"))
    assert heard.args == [pack, "", "Verification cancelled.", False]
    # Recorded as such, over the verdict the check had written: never taken for "ok".
    check = read_export_check(pack)
    assert check is not None and not check.verified
    assert check.reasons[0].startswith("Interrupted: the check was stopped")
