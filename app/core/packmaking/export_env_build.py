"""Creating the export environment (export_env.py) as a cancellable job: a venv, then one
`pip install` of the pinned requirements, whose output lines are the progress, then a
check that the exporter imports, then the stamp that makes it ready.

Run it on a lane of its own (`JobQueue(1, ...)`) or call `run()` on a thread of your own;
`cancel()` from any thread kills pip and removes the half-built folder.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.infra.job_queue import TrackedJob
from app.core.packmaking.export_env import ExportEnv, ExportEnvPlan

QUEUED, CREATING, INSTALLING, CHECKING = "queued", "creating", "installing", "checking"
DONE, FAILED, CANCELLED = "done", "failed", "cancelled"
FINISHED = (DONE, FAILED, CANCELLED)


@dataclass(frozen=True)
class EnvBuildStatus:
    state: str = QUEUED
    line: str = ""  # pip's (or the step's) latest output line
    lines: int = 0  # output lines so far (pip gives no total: a count shows it moves)
    error: str = ""  # why it failed, with pip's last lines


class ExportEnvJob(TrackedJob[EnvBuildStatus]):
    """Build the environment `plan` describes (nothing to do when it is ready)."""

    finished_states = FINISHED

    def __init__(self, plan: ExportEnvPlan) -> None:
        super().__init__(EnvBuildStatus())
        self.plan = plan

    def env(self) -> ExportEnv:
        """The environment, once the job is done."""
        raise NotImplementedError

    def cancel(self) -> None:
        """Stop pip (its whole process group) and remove what was built so far."""
        raise NotImplementedError

    def pause(self) -> None:
        """A build cannot resume half-way: pausing (the app closing) cancels it."""
        self.cancel()

    def restart(self) -> None:
        """Make a failed or cancelled build ready to run again (it starts over)."""
        raise NotImplementedError

    def run(self) -> EnvBuildStatus:
        raise NotImplementedError
