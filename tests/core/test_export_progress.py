"""The exporter's output read as stages (export_progress.py): recorded lines of a real
llmexport 0.0.5 export move stage k of n forward, never back, to the end once the pack
is read back; its ✅ and 💥 come out as ASCII words and tqdm's bar glyphs are dropped; a
failure is one sentence naming the stage and the error, not the traceback. An ExportJob
running a stand-in exporter that prints those lines reports the same."""

from __future__ import annotations

from pathlib import Path

from app.core.packmaking.export_checks import ExportSettings, plan_export
from app.core.packmaking.export_progress import (
    EXPORT_STAGES,
    ExportProgress,
    advance,
    failure_words,
    plain_line,
)
from app.core.packmaking.export_run import DONE, FAILED, ExportJob
from tests.helpers.export_env import HF_FIXTURES
from tests.helpers.paths import FIXTURES
from tests.helpers.script_exporter import script_env

# What `draftdeck export` of tests/fixtures/hf/llama-tiny printed (2026-12-04, through
# export_process.output_lines), each with the stage it is in and the stages done after it.
RECORDED = (
    ("load pretrained model", 1, 0.0),
    ("✅ Done load pretrained model /work/tests/fixtures/hf/llama-tiny", 1, 1.0),
    ("export onnx model to", 2, 1.0),
    ("✅ Done export onnx model to ./onnx/llm.onnx", 2, 2.0),
    ("✅ Done convert onnx model to ./llm.mnn", 3, 3.0),  # its start line can be missed
    ("quant model weight to", 4, 3.0),
    ("Load LayerNorm data: 0%| | 0/226 [00:00<?, ?it/s]", 4, 3.0),
    ("Quant weights: 57%|█████▋ | 129/226 [00:00<00:00, 1287.28it/s]", 4, 3.0 + 0.99 * 129 / 226),
    ("Quant weights: 100%|██████████| 226/226 [00:00<00:00, 979.53it/s]", 4, 3.99),
    ("✅ Done quant model weight to ./llm.mnn.weight", 4, 4.0),
    ("export tokenizer to", 5, 4.0),
    ("✅ Done export tokenizer to ./tokenizer.mtok", 5, 5.0),
    ("export config to", 6, 5.0),
    ("✅ Done export config to ./llm_config.json", 6, 6.0),
    ("reading the pack back", 7, 6.0),  # ExportJob's own step
)
TRACEBACK = (
    "Traceback (most recent call last):",
    '  File "llmexport.py", line 1016, in <module>',
    "    llm_exporter = LlmExporter(args)",
    '  File "utils/tokenizer.py", line 15, in __init__',
    "    self.stop_ids.append(self.tokenizer.eos_token_id)",
    "AttributeError: 'bool' object has no attribute 'eos_token_id'",
)


def test_recorded_exporter_lines_move_the_stages_forward() -> None:
    progress = ExportProgress()
    assert progress.words() == "" and progress.stages == len(EXPORT_STAGES) == 7
    for line, stage, done in RECORDED:
        progress = advance(progress, line)
        assert (progress.stage, round(progress.done, 3)) == (stage, round(done, 3)), line
    assert progress.words() == "stage 7 of 7, reading the pack back"
    assert progress.finished().done == progress.stages


def test_stages_never_go_back() -> None:
    progress = advance(advance(ExportProgress(), "quant model weight to"), "export config to")
    halfway = advance(progress, "x: 50/100 [00:00")
    assert halfway.done == 5 + 0.99 * 0.5
    # A later "load pretrained model" (a sub-model's) or a lower counter moves nothing.
    again = advance(advance(halfway, "load pretrained model"), "x: 10/100 [00:00")
    assert again == halfway and again.words() == "stage 6 of 7, writing llm_config.json"


def test_the_exporters_symbols_come_out_as_words() -> None:
    assert plain_line("✅ Done export config to ./llm_config.json") == (
        "OK Done export config to ./llm_config.json"
    )
    assert plain_line("💥 Failed") == "FAILED Failed"
    assert plain_line("⚠️ slow") == "WARNING slow" and plain_line("🚀 go") == "go"
    assert plain_line("Quant weights: 57%|█████▋    | 129/226 [00:00]") == (
        "Quant weights: 57% 129/226 [00:00]"
    )
    assert plain_line("检测到 calib_data") == "检测到 calib_data"  # text stays


def test_a_failure_is_one_sentence_naming_the_stage_and_the_error() -> None:
    progress = advance(ExportProgress(), "load pretrained model")
    words = failure_words(("💥 Failed", *TRACEBACK), progress, "exit code 1")
    assert words == (
        "the exporter failed while loading the model (exit code 1): "
        "AttributeError: 'bool' object has no attribute 'eos_token_id'"
    )
    assert failure_words(("✅ Done x", "Killed"), ExportProgress(), "no llm.mnn") == (
        "the exporter failed (no llm.mnn): Killed"
    )


def _printing(lines: list[str], then: str) -> str:
    """A stand-in exporter printing `lines` (stderr too, as the real one's traceback)."""
    return f"import shutil, sys\nfor line in {lines!r}: print(line, flush=True)\n{then}\n"


def test_an_export_job_reports_its_stages_from_the_exporters_lines(tmp_path: Path) -> None:
    lines = [line for line, _, _ in RECORDED[:-1]]
    copy = f"shutil.copytree({str(FIXTURES / 'era-3.3.0')!r}, '.', dirs_exist_ok=True)"
    plan = plan_export(HF_FIXTURES / "llama-tiny", tmp_path / "out", ExportSettings(block=64))
    job = ExportJob(script_env(tmp_path, _printing(lines, copy)), plan)
    seen: list[ExportProgress] = []
    job.listen(lambda: seen.append(job.status().progress))
    status = job.run()
    assert status.state == DONE, status.error
    assert status.progress == ExportProgress(7, 7, 7.0)  # the end, once the pack reads
    assert [p.done for p in seen] == sorted(p.done for p in seen)  # forward only
    assert {p.stage for p in seen} == set(range(8))  # 0: before the first line
    job.discard()


def test_an_exporter_traceback_is_said_in_words(tmp_path: Path) -> None:
    fail = f"sys.stderr.write({chr(10).join(TRACEBACK) + chr(10)!r}); sys.exit(1)"
    plan = plan_export(HF_FIXTURES / "llama-tiny", tmp_path / "out", ExportSettings(block=64))
    job = ExportJob(script_env(tmp_path, _printing(["load pretrained model"], fail)), plan)
    status = job.run()
    assert status.state == FAILED
    assert status.error == (
        "the exporter failed while loading the model (exit code 1): "
        "AttributeError: 'bool' object has no attribute 'eos_token_id'"
    )
