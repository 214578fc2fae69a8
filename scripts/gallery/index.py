"""build/screenshots/index.html: every shot, grouped by window size, named and linked."""

from __future__ import annotations

import html
from pathlib import Path


def write_index(out: Path, shots: list[Path]) -> Path:
    sections: dict[str, list[str]] = {}
    for shot in shots:
        rel = shot.relative_to(out).as_posix()
        name = html.escape(shot.stem)
        sections.setdefault(shot.parent.name, []).append(
            f'<figure><a href="{html.escape(rel)}"><img src="{html.escape(rel)}" '
            f'alt="{name}" loading="lazy"></a><figcaption>{name}</figcaption></figure>'
        )
    body = "".join(
        f"<h2>{html.escape(size)} px</h2><div class=grid>{''.join(figures)}</div>"
        for size, figures in sections.items()
    )
    page = out / "index.html"
    page.write_text(
        "<!doctype html><meta charset=utf-8><title>DraftDeck screenshots</title>"
        "<style>body{font-family:sans-serif;margin:1em}"
        ".grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(420px,1fr));gap:1em}"
        "img{width:100%;border:1px solid #999}figcaption{font-family:monospace}</style>"
        f"<h1>DraftDeck: every page, empty and busy</h1>{body}",
        encoding="utf-8",
    )
    return page
