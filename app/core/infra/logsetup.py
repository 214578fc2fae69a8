"""Logging: one named logger per area (draftdeck.<area>), a rotating file in the log dir."""

from __future__ import annotations

import logging
import logging.handlers
from pathlib import Path

from app.core.infra.paths import app_dirs

_FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"


class _OurFileHandler(logging.handlers.RotatingFileHandler):
    """Marks the handler this module added, so a second setup replaces it."""


def setup_logging(level: int = logging.INFO, log_file: Path | None = None) -> Path | None:
    """Send draftdeck.* records to a rotating file; returns its path (None if unwritable)."""
    logger = logging.getLogger("draftdeck")
    logger.setLevel(level)
    for old in list(logger.handlers):
        if isinstance(old, _OurFileHandler):
            logger.removeHandler(old)
            old.close()
    path = log_file or app_dirs().log_file
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = _OurFileHandler(
            path, maxBytes=1_000_000, backupCount=3, encoding="utf-8", delay=True
        )
    except OSError:
        # A read-only home must not stop the app; warnings still reach stderr.
        return None
    handler.setFormatter(logging.Formatter(_FORMAT))
    logger.addHandler(handler)
    return path
