"""Which Hugging Face token a publish from the window uses, said without the token.

The window's Hub calls take the token saved in DraftDeck's settings first
(HubConfig.from_settings); without one the Hub client's own order applies: HF_TOKEN,
then the login `hf auth login` saved. The child process that publishes reads the token
itself; this only says which it will find.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from huggingface_hub import constants

from app.core.infra.settings import Settings

TOKEN_VARIABLES = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")  # the Hub client's, in its order


@dataclass(frozen=True)
class TokenSource:
    words: str  # where the token comes from, for the dialog
    found: bool
    env: dict[str, str] = field(default_factory=dict, repr=False)  # for the child process


def token_source(settings: Settings) -> TokenSource:
    if settings.hub_token:
        return TokenSource(
            "the token saved in DraftDeck's settings", True, {"HF_TOKEN": settings.hub_token}
        )
    for name in TOKEN_VARIABLES:
        if os.environ.get(name):
            return TokenSource(f"{name} (environment variable)", True)
    login = Path(constants.HF_TOKEN_PATH)  # only looked at: reading may refresh it online
    if login.is_file() and login.stat().st_size > 0:
        return TokenSource("your Hugging Face login (hf auth login)", True)
    return TokenSource(
        "none found: set HF_TOKEN or log in with `hf auth login`, then open this again", False
    )
