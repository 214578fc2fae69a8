"""Reading the exporter's output: which stage of an export is running (so a bar can show
stage k of n), its lines in plain text, and a failure in words instead of a traceback.

llmexport 0.0.5 wraps each step in a spinner that prints the step's text when it starts
and `✅ Done <text> <what it wrote>` when it ends (utils/spinner.py); the steps of a text
model's export come in this order (llmexport.py `export`). Recorded lines are in
tests/core/test_export_progress.py.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

READING_LINE = "reading the pack back"  # ExportJob's own step once the exporter is done


@dataclass(frozen=True)
class Stage:
    name: str  # for the status line
    starts: tuple[str, ...]  # the spinner texts that belong to it


EXPORT_STAGES = (
    Stage("loading the model", ("load pretrained model",)),
    # The embedding is exported first only when the weights are not tied.
    Stage("exporting the graph", ("export embedding to", "export onnx model to", "slim the")),
    Stage("converting it to MNN", ("convert onnx model to",)),
    Stage("quantizing the weights", ("quant model weight to",)),
    Stage("exporting the tokenizer", ("export tokenizer to",)),
    Stage("writing llm_config.json", ("export config to",)),
    Stage(READING_LINE, (READING_LINE,)),
)


@dataclass(frozen=True)
class ExportProgress:
    """Where an export is: stage `stage` of `stages` (1-based; 0 before the first),
    and how much is done, in stages (a running stage's own counter counts in part)."""

    stage: int = 0
    stages: int = len(EXPORT_STAGES)
    done: float = 0.0

    @property
    def name(self) -> str:
        return EXPORT_STAGES[self.stage - 1].name if self.stage else ""

    def words(self) -> str:
        return f"stage {self.stage} of {self.stages}, {self.name}" if self.stage else ""

    def finished(self) -> ExportProgress:
        return ExportProgress(self.stages, self.stages, float(self.stages))


_DONE = re.compile(r"^Done\s+")
_COUNTER = re.compile(r"(\d+)/(\d+)\s*\[")  # tqdm's "129/226 [00:00<...]"


def advance(progress: ExportProgress, line: str) -> ExportProgress:
    """`progress` after the exporter printed `line`; it never goes back."""
    text = plain_line(line).removeprefix("OK").strip()
    ended = bool(_DONE.match(text))
    text = _DONE.sub("", text)
    for index, stage in enumerate(EXPORT_STAGES, 1):
        if index >= progress.stage and any(text.startswith(s) for s in stage.starts):
            done = float(index if ended else index - 1)
            return ExportProgress(index, progress.stages, max(done, progress.done))
    counter = _COUNTER.search(line)
    if counter and progress.stage and int(counter[2]) > 0:
        part = min(int(counter[1]) / int(counter[2]), 1.0)
        done = progress.stage - 1 + part * 0.99  # the stage ends on its own Done line
        return ExportProgress(progress.stage, progress.stages, max(done, progress.done))
    return progress


# Symbols the exporter and its libraries print that a dialog's font may lack (a box
# instead): said in ASCII words. tqdm's bar glyphs go; its counts stay.
SYMBOL_WORDS = {
    "\u2705": "OK",  # ✅ (yaspin's ok)
    "\u2714": "OK",  # ✔
    "\u2713": "OK",  # ✓
    "\U0001f4a5": "FAILED",  # 💥 (yaspin's fail)
    "\u274c": "ERROR",  # ❌
    "\u2717": "x",  # ✗
    "\u26a0": "WARNING",  # ⚠
}
_TQDM_BAR = re.compile(r"\|[\u2580-\u259f ]*\|")
_OTHER_SYMBOLS = re.compile("[\U0001f000-\U0001faff\u2600-\u27bf\ufe0f\u200d]")


def plain_line(line: str) -> str:
    """`line` with known symbols as words and other emoji left out."""
    for symbol, words in SYMBOL_WORDS.items():
        line = line.replace(symbol, words)
    line = _TQDM_BAR.sub(" ", line)
    return re.sub(r"\s{2,}", " ", _OTHER_SYMBOLS.sub("", line)).strip()


_EXCEPTION = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit))(?::\s*(.*))?$")


def failure_words(tail: Sequence[str], progress: ExportProgress, what: str) -> str:
    """Why the exporter failed (`what`: its exit code, or the file it did not write), in
    one sentence: the stage and the error it raised (the last exception line of its
    traceback) or, without one, its last line."""
    where = f" while {progress.name}" if progress.stage else ""
    error = next((m for m in map(_EXCEPTION.match, reversed(tail)) if m), None)
    if error is not None:
        said = f"{error[1]}: {error[2]}" if error[2] else error[1]
    else:
        said = plain_line(tail[-1]) if tail else "no output"
    return f"the exporter failed{where} ({what}): {said}"
