"""Running MNN's exporter (llmexport, in the export environment) on a checked plan, as a
cancellable job whose progress is the exporter's own output.

The export is written into `<out>.draftdeck-partial` beside the output folder and
renamed into place when it is complete and reads back as a pack, so a cancel, a crash or
a failed export never leaves a half-made pack where the user asked for one; only that
partial folder (DraftDeck's own) and an earlier export it replaces are ever removed.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from app.core.hub.hub_api import HubConfig, hub_errors
from app.core.hub.plan import check_repo_id
from app.core.infra.deletion import remove_tree
from app.core.infra.errors import FileError
from app.core.infra.job_queue import TrackedJob
from app.core.infra.jsonfile import atomic_write_bytes
from app.core.infra.words import Word
from app.core.pack.bundle import BundleInfo, read_bundle
from app.core.pack.files import DRAFT_RECIPE
from app.core.packmaking.export_checks import ExportPlan, ExportRefused, check_out_folder
from app.core.packmaking.export_env import (
    ExportEnv,
    mnnconvert_arg,
    pinned_requirements,
    write_mnnconvert_shim,
)
from app.core.packmaking.export_mark import EXPORT_MARK
from app.core.packmaking.export_process import ProcessCancelled, StreamedProcess


class ExportState(Word):
    QUEUED = "queued"
    EXPORTING = "exporting"
    READING = "reading the pack"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


# Module names for the states, as the dialog and tests import them.
QUEUED, EXPORTING, READING = ExportState.QUEUED, ExportState.EXPORTING, ExportState.READING
DONE, FAILED, CANCELLED = ExportState.DONE, ExportState.FAILED, ExportState.CANCELLED
FINISHED = (DONE, FAILED, CANCELLED)
PARTIAL_SUFFIX = ".draftdeck-partial"
OLD_SUFFIX = ".draftdeck-old"  # an earlier export, moved aside while the new one moves in
# What llmexport leaves beside the pack: its converter log, its onnx folder (removed by
# itself when it succeeds), the converter command DraftDeck gave it;
# export_args.json (the source's local path) and llm.mnn.json (a dump of the graph) are
# not read by MNN.
EXPORT_LEFTOVERS = (
    *(".export.log", "onnx", "mnnconvert", "mnnconvert.cmd"),
    *("export_args.json", "llm.mnn.json"),
)
NEEDED = ("config.json", "llm_config.json", "llm.mnn", "llm.mnn.weight")
# A made draft's recipe (config_cpu.json): the settings drafts ship with (the TokForge
# pack's), for measure-pack and Tune to improve on.
DRAFT_RECIPE_SETTINGS = {
    "backend_type": "cpu",
    "thread_num": 2,
    "precision": "low",
    "memory": "low",
    "sampler_type": "greedy",
}


@dataclass(frozen=True)
class ExportStatus:
    state: ExportState = QUEUED
    line: str = ""  # the exporter's latest output line
    lines: int = 0
    error: str = ""
    path: str = ""  # the finished pack


class ExportJob(TrackedJob[ExportStatus]):
    """Export `plan` with the exporter of `env`; the result is read back with
    read_bundle (`bundle()`), or the job fails saying why it does not read."""

    finished_states = FINISHED

    def __init__(self, env: ExportEnv, plan: ExportPlan) -> None:
        super().__init__(ExportStatus())
        self.env = env
        self.plan = plan
        self._process = StreamedProcess()

    @property
    def partial(self) -> Path:
        """Where the export is written until it is complete (hidden, beside `out`; a
        name without spaces or quotes, since llmexport hands paths to a shell)."""
        out = self.plan.out.absolute()
        return out.parent / f".{re.sub(r'[^A-Za-z0-9._-]', '_', out.name)}{PARTIAL_SUFFIX}"

    def bundle(self) -> BundleInfo:
        """The made pack, once the job is done."""
        return read_bundle(self.plan.out)

    def cancel(self) -> None:
        """Kill the exporter (its whole process group); the running job then removes the
        partial output and ends cancelled."""
        self._process.cancel()
        self._set_if((QUEUED,), state=CANCELLED)

    def pause(self) -> None:
        """An export cannot resume half-way: pausing (the app closing) cancels it."""
        self.cancel()

    def restart(self) -> None:
        self._process = StreamedProcess()
        self._set(state=QUEUED, line="", lines=0, error="", path="")

    def run(self) -> ExportStatus:
        if self.status().state == CANCELLED:
            return self.status()
        self._set(state=EXPORTING)
        try:
            self._export()
            self._set(state=READING, line="reading the pack back")
            check_out_folder(self.plan.out)  # nobody put files there meanwhile
            self._finish()
            info = read_bundle(self.plan.out)
        except ProcessCancelled:
            self._set(state=CANCELLED, line="")
        except ExportRefused as exc:
            self._set(state=FAILED, error=exc.message)
        except (OSError, FileError, ExportFailed) as exc:
            self._set(state=FAILED, error=str(exc))
        else:
            self._set(state=DONE, path=str(info.path), line=f"made {info.path}")
        finally:
            _remove_partial(self.partial)
        return self.status()

    def _export(self) -> None:
        partial = self.partial
        _remove_partial(partial)
        partial.mkdir(parents=True)
        (partial / PARTIAL_MARK).write_text("an export DraftDeck is making\n", encoding="utf-8")
        cmd = self.command(write_mnnconvert_shim(self.env.python, partial))
        started = time.monotonic()

        def on_line(line: str) -> None:
            self._set(line=line, lines=self.status().lines + 1)

        done = self._process.run(cmd, self.env.environment(), partial, on_line)
        missing = [name for name in NEEDED if not (partial / name).is_file()]
        if done.returncode != 0 or missing:
            tail = "\n".join(done.tail[-12:])
            what = f"exit code {done.returncode}" if done.returncode else f"no {missing[0]}"
            raise ExportFailed(f"the exporter failed ({what}):\n{tail}")
        self._tidy(partial, time.monotonic() - started)

    def command(self, shim: Path) -> list[str]:
        """The exporter's command line, run in the partial folder beside `shim` (the
        converter command written there)."""
        settings = self.plan.settings
        return [
            str(self.env.python),
            str(self.env.llmexport_dir() / "llmexport.py"),
            *("--path", str(self.plan.source.folder.absolute()), "--export", "mnn"),
            *("--quant_bit", str(settings.bits), "--quant_block", str(settings.block)),
            *("--dst_path", ".", "--mnnconvert", mnnconvert_arg(shim)),
        ]

    def _tidy(self, partial: Path, seconds: float) -> None:
        """Leave only the pack: the exporter's leftovers out, the role's recipe and the
        mark (what was made from what) in. The partial mark stays until `_finish` has
        put the pack in place, so a failure up to then still removes the partial folder."""
        for name in EXPORT_LEFTOVERS:
            path = partial / name
            if path.is_dir():
                remove_tree(path)
            else:
                path.unlink(missing_ok=True)
        if self.plan.settings.role == "draft":
            recipe = json.dumps(DRAFT_RECIPE_SETTINGS, indent=4).encode()
            atomic_write_bytes(partial / DRAFT_RECIPE, recipe + b"\n", shared=True)
        mark = {
            "source": str(self.plan.source.folder.absolute()),
            "settings": asdict(self.plan.settings),
            "adjusted": list(self.plan.adjusted),
            "exporter": next(r for r in pinned_requirements() if r.startswith("llmexport")),
            "seconds": round(seconds, 1),
            "files": sorted(p.name for p in partial.iterdir() if p.name != PARTIAL_MARK),
        }
        atomic_write_bytes(partial / EXPORT_MARK, json.dumps(mark, indent=2).encode(), shared=True)
        try:
            read_bundle(partial)
        except FileError as exc:
            raise ExportFailed(f"the exported files do not read as a pack: {exc}") from None

    def _finish(self) -> None:
        """Put the finished pack where it was asked for, replacing only an empty folder or
        an earlier export's own files (check_out_folder just said which). The earlier
        folder is moved aside and removed only once the new pack is in place: a failed
        rename leaves it where it was."""
        out = self.plan.out
        aside = self.partial.with_name(self.partial.name.replace(PARTIAL_SUFFIX, OLD_SUFFIX))
        if aside.is_dir():
            remove_tree(aside)  # a crash's leftover, replaced by this export anyway
        if out.is_dir():
            out.rename(aside)
        try:
            self.partial.rename(out)
        except OSError:
            if aside.is_dir():
                aside.rename(out)
            raise
        (out / PARTIAL_MARK).unlink()
        if aside.is_dir():
            remove_tree(aside)


class ExportFailed(Exception):
    """The exporter failed, or what it wrote does not read as a pack."""


PARTIAL_MARK = ".draftdeck-partial"  # in a partial folder from its first moment


def _remove_partial(partial: Path) -> None:
    if (partial / PARTIAL_MARK).is_file() or (partial.is_dir() and not any(partial.iterdir())):
        remove_tree(partial)


# What a model's Hub repo holds that an export reads (weights, configs, tokenizer).
MODEL_FILES = ("*.json", "*.safetensors", "tokenizer.model", "*.tiktoken", "*.txt", "*.py")


def source_folder(
    source: str, config: HubConfig | None = None, cache_dir: Path | None = None
) -> Path:
    """An HF model folder for `source`: the folder itself, or a Hub repo id downloaded
    (model files only) into the Hugging Face cache (`cache_dir`, default the Hub
    client's own)."""
    path = Path(source).expanduser()
    if path.is_dir():
        return path
    if path.exists() or source.count("/") != 1:
        raise ExportRefused(f"{source}: neither an HF model folder nor a Hub repo id (owner/name)")
    check_repo_id(source)
    config = config or HubConfig()
    with hub_errors(f"downloading {source}", config):
        got = config.api().snapshot_download(
            source, allow_patterns=list(MODEL_FILES), cache_dir=cache_dir
        )
    return Path(got)
