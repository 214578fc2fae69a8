"""The user guide's files: the Markdown pages under docs/guide, the screenshots they
show, and the other files they link to. The window's Help shows them (app/ui/shell/
user_guide.py), the packaged app ships exactly what the index reaches
(packaging/draftdeck.spec), and the self-test checks that nothing it reaches is missing.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

from app.core.infra.paths import install_root

INDEX = "README.md"
# [text](target) and ![alt](target): the target up to a space, `#` or `)`.
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s#]+)[^)]*\)")
_EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)  # https:, mailto:


def guide_folder() -> Path:
    return install_root() / "docs" / "guide"


def local_links(page: Path) -> list[Path]:
    """The files `page` links to or shows, resolved against its folder (web links left
    out)."""
    text = page.read_text(encoding="utf-8")
    targets = (unquote(t) for t in _LINK.findall(text) if not _EXTERNAL.match(t))
    return [(page.parent / t).resolve() for t in targets]


def reachable(index: Path) -> tuple[list[Path], list[Path]]:
    """Every file reachable from `index` through links between Markdown pages, in the
    order found, and those of them that do not exist."""
    seen: dict[Path, None] = {index.resolve(): None}
    queue = [index.resolve()]
    missing: list[Path] = []
    while queue:
        page = queue.pop(0)
        if not page.is_file():
            missing.append(page)
            continue
        if page.suffix != ".md":
            continue
        for target in local_links(page):
            if target not in seen:
                seen[target] = None
                queue.append(target)
    return list(seen), missing
