"""A Load request's load plan (app/core/measure/load_plan.py): the engine client asks it
before sending, so a pair the engine would refuse never reaches, nor starts, a worker;
the window's EngineBridge asks it to choose Plain for a blocked pair; the worker asks
it again as a guard before MNN is touched."""

from __future__ import annotations

import os
from pathlib import Path

from app.core.infra.errors import EngineError
from app.core.measure.load_plan import LoadPlan, Refusal, plan_paths
from app.engine.protocol import Load


def plan_request(request: Load) -> LoadPlan | Refusal:
    # Absolute at once: MNN runs from inside the pack folders (pack_folder.py), and
    # relative paths mean the working directory they were given in.
    return plan_paths(
        Path(os.path.abspath(request.target)),
        Path(os.path.abspath(request.draft)) if request.draft else None,
        request.target_config,
        request.draft_config,
        request.draft_length,
    )


def planned(request: Load) -> LoadPlan:
    """The request's plan; a refusal raises the EngineError the caller reports."""
    plan = plan_request(request)
    if isinstance(plan, Refusal):
        raise EngineError(plan.message, plan.code, list(plan.reasons))
    return plan
