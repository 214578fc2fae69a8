"""Running MNN's exporter (llmexport, in the export environment) on a checked plan, as a
cancellable job whose progress is the exporter's own output.

The export is written into `<out>.draftdeck-partial` beside the output folder and
renamed into place when it is complete and reads back as a pack, so a cancel, a crash or
a failed export never leaves a half-made pack where the user asked for one; only that
partial folder (DraftDeck's own) is ever removed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.core.hub.hub_api import HubConfig
from app.core.infra.job_queue import TrackedJob
from app.core.pack.bundle import BundleInfo
from app.core.packmaking.export_checks import ExportPlan
from app.core.packmaking.export_env import ExportEnv

QUEUED, EXPORTING, READING = "queued", "exporting", "reading the pack"
DONE, FAILED, CANCELLED = "done", "failed", "cancelled"
FINISHED = (DONE, FAILED, CANCELLED)
PARTIAL_SUFFIX = ".draftdeck-partial"


@dataclass(frozen=True)
class ExportStatus:
    state: str = QUEUED
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

    def bundle(self) -> BundleInfo:
        """The made pack, once the job is done."""
        raise NotImplementedError

    def cancel(self) -> None:
        """Kill the exporter (its whole process group) and remove the partial output."""
        raise NotImplementedError

    def pause(self) -> None:
        """An export cannot resume half-way: pausing (the app closing) cancels it."""
        self.cancel()

    def restart(self) -> None:
        raise NotImplementedError

    def run(self) -> ExportStatus:
        raise NotImplementedError


def source_folder(source: str, config: HubConfig | None = None) -> Path:
    """An HF model folder for `source`: the folder itself, or a Hub repo id downloaded
    (model files only) into the Hugging Face cache."""
    raise NotImplementedError
