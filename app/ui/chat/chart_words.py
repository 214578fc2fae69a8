"""The Chat charts' words: short titles on the plots, the rest in tooltips (four plots
share about 400 px at 1024 px, and a clipped title helps nobody)."""

from __future__ import annotations

from app.ui.base.scheme import colours

ROLLING = 32  # rounds behind the rolling acceptance and mean accepted length
SPEED_WINDOW = 0.5  # seconds behind each decode-speed sample
TITLE_SIZE = "9pt"
SPEED_TIP = (
    f"Decode tokens per second over the last {SPEED_WINDOW:g} s (the prefill left out). "
    "A dot: a whole reply's figure. The dashed line: the last plain reply's speed."
)
ACCEPTANCE_TIP = f"Accepted draft tokens / drafted, over the last {ROLLING} rounds."
LENGTH_TIP = (
    f"Tokens each verification emits (accepted drafts + the target's own), over the "
    f"last {ROLLING} rounds: 1 for plain decoding, at most the draft length + 1. Dashed: "
    "tokens drafted per round, which adaptive drafting chooses (0 while it stands aside "
    "and decodes plain)."
)
LENGTH_TITLE = "Accepted length"
ASIDE_TIP = (
    "▼: adaptive drafting stepped aside here (drafting did not pay: the reply went on "
    "plain, trying drafting again now and then; the note under the reply gives the figures)"
)
DRAFTED_WORDS = "drafted"
SPEED_TITLE = "Decode speed"
REFERENCE_WORDS = "Plain"  # the mode: in a 1024 px window the title has ~200 px
POSITION_TIP = (
    "For each position in the draft: how often its token was accepted when every "
    "earlier one was, over the whole chat."
)


def speed_title(reference: bool) -> str:
    """The speed plot's title, with the dashed reference line's key when it is drawn."""
    if not reference:
        return SPEED_TITLE
    key = f"<span style='color:{colours().error}'>- - {REFERENCE_WORDS}</span>"
    return f"{SPEED_TITLE} &nbsp;{key}"
