"""Running MNN's exporter (llmexport, in the export environment) on a checked plan, as a
cancellable job whose progress is the exporter's own output.

The export is written into a hidden `.<out>.draftdeck-partial` folder beside the output
folder and stays there while the caller verifies it and records the check into it; only
`place()` moves it where the user asked for it. So a cancel, a crash or a kill never
leaves a half-made or half-checked pack where the user looks for one; a kill's partial
folder is removed at the next start (export_partials.py). Only that partial folder
(DraftDeck's own, marked) and an earlier export it replaces are ever removed.

The exporter runs through resources/torch_side/run_llmexport.py, which turns
transformers' trust in the model folder's own code off unless the plan trusts it
(llmexport itself always asks transformers to trust it).
"""

from __future__ import annotations

import json
import logging
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from app.core.hub.hub_api import HubConfig, hub_errors
from app.core.hub.plan import check_repo_id
from app.core.infra.deletion import remove_tree
from app.core.infra.errors import FileError
from app.core.infra.job_queue import TrackedJob
from app.core.infra.jsonfile import atomic_write_bytes
from app.core.infra.resources import resource
from app.core.infra.words import Word
from app.core.pack.bundle import BundleInfo, read_bundle
from app.core.pack.files import DRAFT_RECIPE
from app.core.packmaking.export_checks import (
    ExportPlan,
    ExportRefused,
    ExportSettings,
    check_out_folder,
    check_settings,
    read_config,
)
from app.core.packmaking.export_env import (
    ExportEnv,
    mnnconvert_arg,
    pinned_requirements,
    write_mnnconvert_shim,
)
from app.core.packmaking.export_mark import EXPORT_MARK
from app.core.packmaking.export_partials import PARTIAL_MARK, PartialRecord, remove_partial
from app.core.packmaking.export_process import ProcessCancelled, StreamedProcess
from app.core.packmaking.export_progress import (
    READING_LINE,
    ExportProgress,
    advance,
    failure_words,
)
from app.core.packmaking.export_space import disk_full_words, failed_on_full_disk, is_disk_full

log = logging.getLogger("draftdeck.packmaking.export")


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
LAUNCHER = ("torch_side", "run_llmexport.py")
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
    path: str = ""  # the made pack: its partial folder once done, `out` once placed
    progress: ExportProgress = field(default_factory=ExportProgress)  # from its lines


class ExportJob(TrackedJob[ExportStatus]):
    """Export `plan` with the exporter of `env` into the partial folder, read back with
    read_bundle, or fail saying why it does not read. Done, the pack waits there for
    `place()` (or `discard()`)."""

    finished_states = FINISHED

    def __init__(self, env: ExportEnv, plan: ExportPlan, records: Path | None = None) -> None:
        super().__init__(ExportStatus())
        self.env = env
        self.plan = plan
        self._process = StreamedProcess()
        self._record = PartialRecord(self.partial, records)  # records: tests' own folder

    @property
    def partial(self) -> Path:
        """Where the export is written until it is complete (hidden, beside `out`; a
        name without spaces or quotes, since llmexport hands paths to a shell)."""
        out = self.plan.out.absolute()
        return out.parent / f".{re.sub(r'[^A-Za-z0-9._-]', '_', out.name)}{PARTIAL_SUFFIX}"

    def bundle(self) -> BundleInfo:
        """The made pack, once the job is done (where it is now)."""
        return read_bundle(Path(self.status().path))

    def place(self) -> Path:
        """Move the made pack, with what was recorded into it since (its check, its card),
        to `plan.out`, replacing only an empty folder or an earlier export's own files.
        ExportRefused when others' files came there meanwhile, OSError when the move
        fails; either way the partial folder is removed."""
        try:
            check_out_folder(self.plan.out)  # nobody put files there meanwhile
            self._finish()
        except OSError as exc:
            raise OSError(self._os_words(exc)) from None
        finally:
            self.discard()
        self._set(path=str(self.plan.out), line=f"made {self.plan.out}")
        return self.plan.out

    def discard(self) -> None:
        """Remove the partial folder (if still there) and its record; nothing when this
        job never took the folder (another export was writing it)."""
        if self._record.held:
            remove_partial(self.partial)
            self._record.release()

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
        self._set(state=QUEUED, line="", lines=0, error="", path="", progress=ExportProgress())

    def run(self) -> ExportStatus:
        if self.status().state == CANCELLED:
            return self.status()
        self._set(state=EXPORTING)
        try:
            self._export()
            info = read_bundle(self.partial)
        except ProcessCancelled:
            self._set(state=CANCELLED, line="")
        except ExportRefused as exc:
            self._set(state=FAILED, error=exc.message)
        except OSError as exc:
            self._set(state=FAILED, error=self._os_words(exc))
        except (FileError, ExportFailed) as exc:
            self._set(state=FAILED, error=str(exc))
        else:
            progress = self.status().progress.finished()
            self._set(
                state=DONE,
                path=str(info.path),
                line="exported; not in place yet",
                progress=progress,
            )
        finally:
            if self.status().state != DONE:
                self.discard()
        return self.status()

    def _os_words(self, error: OSError) -> str:
        return disk_full_words(self.partial.parent) if is_disk_full(error) else str(error)

    def _export(self) -> None:
        partial = self.partial
        self._record.hold()  # before the folder exists: a kill from now on is cleaned up
        remove_partial(partial)
        partial.mkdir(parents=True)
        (partial / PARTIAL_MARK).write_text("an export DraftDeck is making\n", encoding="utf-8")
        cmd = self.command(write_mnnconvert_shim(self.env.python, partial))
        started = time.monotonic()

        def on_line(line: str) -> None:
            status = self.status()
            self._set(line=line, lines=status.lines + 1, progress=advance(status.progress, line))

        done = self._process.run(cmd, self.env.environment(), partial, on_line)
        missing = [name for name in NEEDED if not (partial / name).is_file()]
        if done.returncode != 0 or missing:
            if failed_on_full_disk(partial, done.tail):  # it says what broke next
                raise ExportFailed(disk_full_words(partial.parent))
            # The words on screen, the traceback in the log.
            log.warning("the exporter's last lines:\n%s", "\n".join(done.tail))
            progress = self.status().progress
            what = f"exit code {done.returncode}" if done.returncode else f"no {missing[0]}"
            raise ExportFailed(failure_words(done.tail, progress, what))
        progress = advance(self.status().progress, READING_LINE)
        self._set(state=READING, line=READING_LINE, progress=progress)
        self._tidy(partial, time.monotonic() - started)

    def command(self, shim: Path) -> list[str]:
        """The exporter's command line, run in the partial folder beside `shim` (the
        converter command written there): llmexport.py through the launcher that sets
        transformers' trust in the folder's code from the plan."""
        settings = self.plan.settings
        trust = "trust" if self.plan.trust_remote_code else "no-trust"
        return [
            str(self.env.python),
            str(resource(*LAUNCHER)),
            trust,
            str(self.env.llmexport_dir() / "llmexport.py"),
            *("--path", str(self.plan.source.folder.absolute()), "--export", "mnn"),
            *("--quant_bit", str(settings.bits), "--quant_block", str(settings.block)),
            *("--dst_path", ".", "--mnnconvert", mnnconvert_arg(shim)),
        ]

    def _tidy(self, partial: Path, seconds: float) -> None:
        """Leave only the pack: the exporter's leftovers out, the role's recipe and the
        mark (what was made from what) in. The partial mark stays until `_finish` has
        put the pack in place, so a failure or a kill up to then still removes the
        partial folder."""
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
            "trust_remote_code": self.plan.trust_remote_code,
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


# What a model's Hub repo holds that an export reads: its weights, its configs, and what
# transformers' tokenizer reads (tokenizer.json and tokenizer_config.json,
# special_tokens_map.json, added_tokens.json, vocab.json / merges.txt / vocab.txt,
# sentencepiece and tiktoken files, chat_template.jinja or chat_template.json: the
# template the pack's chat prompt is made from); its code (`*.py`) only when trusted.
MODEL_FILES = (
    *("*.json", "*.safetensors", "*.txt", "*.model", "*.tiktoken"),
    *("chat_template.jinja", "additional_chat_templates/*.jinja"),
)
CODE_FILES = ("*.py",)
CONFIG_FILE = "config.json"


def source_folder(
    source: str,
    config: HubConfig | None = None,
    cache_dir: Path | None = None,
    trust_remote_code: bool = False,
    settings: ExportSettings | None = None,
    adjust: bool = False,
) -> Path:
    """An HF model folder for `source`: the folder itself, or a Hub repo id downloaded
    (model files only, its code only when trusted) into the Hugging Face cache
    (`cache_dir`, default the Hub client's own). With `settings`, a repo's config.json
    is fetched alone first and the settings checked against its sizes
    (export_checks.check_settings): ExportRefused before any weight is downloaded."""
    path = Path(source).expanduser()
    if path.is_dir():
        return path
    if path.exists() or source.count("/") != 1:
        raise ExportRefused(f"{source}: neither an HF model folder nor a Hub repo id (owner/name)")
    check_repo_id(source)
    config = config or HubConfig()
    if settings is not None:
        with hub_errors(f"downloading {source}'s {CONFIG_FILE}", config):
            got = config.api().hf_hub_download(source, CONFIG_FILE, cache_dir=cache_dir)
        check_settings(read_config(Path(got).parent), settings, adjust)
    patterns = CODE_FILES if trust_remote_code else ()
    with hub_errors(f"downloading {source}", config):
        got = config.api().snapshot_download(
            source, allow_patterns=[*MODEL_FILES, *patterns], cache_dir=cache_dir
        )
    return Path(got)
