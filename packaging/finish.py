"""After PyInstaller: add the per-OS extras, archive the app, report its size.

    python packaging/finish.py [DIST]       (default dist)

Linux: install.sh, the .desktop entry and the icon go next to the executable, and the
folder is archived as DraftDeck-VERSION-linux-ARCH.tar.gz. Windows: a .zip. macOS: the
.app's LSMinimumSystemVersion is checked against its binaries (packaging/macho.py), and
the .app is archived as a .zip (sign and notarize before sharing: packaging/README.md).
The size report names what dominates the package.
"""

from __future__ import annotations

import platform
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app import __version__  # noqa: E402


def group(rel: Path) -> str:
    """The package or library family a file of the app belongs to."""
    parts = rel.parts[1:] if rel.parts[0] in ("_internal", "Contents") else rel.parts
    head = parts[0] if parts else rel.name
    if head.startswith("libQt6") or head == "PySide6":
        return "Qt (PySide6)"
    if head.startswith("_mnncengine") or head in ("MNN", "mnn.libs"):
        return "MNN"
    if head.startswith("libpython") or head.startswith("python3"):
        return "Python"
    return head.split(".so")[0] if len(parts) == 1 else head


def size_report(app: Path) -> str:
    sizes: Counter[str] = Counter()
    for path in app.rglob("*"):
        if path.is_file() and not path.is_symlink():
            sizes[group(path.relative_to(app))] += path.stat().st_size
    total = sum(sizes.values())
    lines = [f"{app}: {total / 1e6:.0f} MB on disk; largest parts:"]
    for name, size in sizes.most_common(10):
        lines.append(f"  {size / 1e6:7.1f} MB  {100 * size / total:4.1f} %  {name}")
    return "\n".join(lines)


def main() -> int:
    dist = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "dist"
    app = dist / "DraftDeck"
    if not app.is_dir():
        raise SystemExit(f"{app} not found: run PyInstaller first (make package)")
    machine = platform.machine().lower() or "unknown"
    if sys.platform.startswith("linux"):
        for extra in ("install.sh", "draftdeck.desktop"):
            shutil.copy2(ROOT / "packaging" / "linux" / extra, app / extra)
        shutil.copy2(ROOT / "build" / "icons" / "draftdeck-256.png", app / "draftdeck.png")
        base = dist / f"DraftDeck-{__version__}-linux-{machine}"
        archive = shutil.make_archive(str(base), "gztar", dist, "DraftDeck")
    elif sys.platform == "darwin":
        from macho import check_info_plist

        # The spec derived LSMinimumSystemVersion from the binaries; check the result.
        try:
            print(check_info_plist(dist / "DraftDeck.app", platform.machine()))
        except ValueError as exc:
            raise SystemExit(f"{exc}\n(packaging/draftdeck.spec sets it)") from None
        # ditto keeps the bundle's symlinks (Qt frameworks, Resources); a zipfile-made
        # archive would unpack into a broken, unsigned app.
        archive = str(dist / f"DraftDeck-{__version__}-macos-{machine}.zip")
        subprocess.run(
            ["ditto", "-c", "-k", "--keepParent", str(dist / "DraftDeck.app"), archive],
            check=True,
        )
    else:
        base = dist / f"DraftDeck-{__version__}-windows-{machine}"
        archive = shutil.make_archive(str(base), "zip", dist, "DraftDeck")
    print(size_report(app))
    print(f"archive: {archive} ({Path(archive).stat().st_size / 1e6:.0f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
