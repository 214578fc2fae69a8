"""Downloads that a quit, a crash or a pause left unfinished: the staging folders
DraftDeck made in the library, found again so that a new run can list them (paused,
with Resume and Discard) and the catalog can say that a partial download exists.

Only folders DraftDeck made count: a `.download-<owner>__<name>` folder whose
`plan.json` is DraftDeck's and names that same repo. Anything else of that shape is
left alone, listed nowhere and never deleted.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.core.hub.install import PART, STAGING_PREFIX, staging_dir
from app.core.hub.plan import PlanFile, RepoPlan, check_repo_id, is_skipped
from app.core.infra.errors import FileError, HubError
from app.core.infra.jsonfile import read_json_object


@dataclass(frozen=True)
class Interrupted:
    plan: RepoPlan  # the revision and files the download was fetching
    done_bytes: int  # what is on disk of them (whole files and .part files)
    files_done: int  # files already fetched whole

    @property
    def include_all(self) -> bool:
        """Whether it fetched the files a pack does not need (the plan lists one)."""
        return any(is_skipped(f.path) for f in self.plan.files)


def present_bytes(files: Path, plan_file: PlanFile) -> int:
    """Bytes of this file a resume keeps: the whole file, or what its .part holds."""
    final = files / plan_file.path
    if final.is_file() and final.stat().st_size == plan_file.size:
        return plan_file.size
    part = final.with_name(final.name + PART)
    kept = part.stat().st_size if part.is_file() else 0
    return kept if kept <= plan_file.size else 0  # an oversized part is discarded


def read_staging(library: Path, folder: Path) -> Interrupted | None:
    """The unfinished download in `folder`, if DraftDeck made that folder."""
    try:
        plan = RepoPlan.from_json(read_json_object(folder / "plan.json"))
        check_repo_id(plan.repo_id)
    except (FileError, HubError, KeyError, TypeError, ValueError, AttributeError):
        return None  # no plan of ours: not a folder DraftDeck made
    if staging_dir(library, plan.repo_id).name != folder.name:
        return None
    files = folder / "files"
    try:
        kept = [present_bytes(files, f) for f in plan.files]
    except OSError:
        return None
    whole = sum(kept[i] == f.size for i, f in enumerate(plan.files))
    return Interrupted(plan, sum(kept), whole)


def find_interrupted(library: Path) -> list[Interrupted]:
    """Every unfinished download DraftDeck left in `library`, by folder name."""
    try:
        folders = sorted(p for p in library.iterdir() if p.name.startswith(STAGING_PREFIX))
    except OSError:
        return []  # no library yet
    found = [read_staging(library, folder) for folder in folders if folder.is_dir()]
    return [item for item in found if item is not None]
