"""Render the application icon from resources/icons/draftdeck.svg into the formats each
OS wants: PNGs (Linux, 16-1024 px), an ICO (Windows) and an ICNS (macOS).

    python packaging/make_icons.py [OUT_DIR]     (default build/icons)

Qt renders the SVG; the ICO and ICNS containers are written here (both just hold PNGs),
so no extra image tools are needed on any OS.
"""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "resources" / "icons" / "draftdeck.svg"
PNG_SIZES = (16, 24, 32, 48, 64, 128, 256, 512, 1024)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
# ICNS entry types and the pixel size each holds: the 1x sizes, then the Retina (@2x)
# ones that iconutil writes for a full .iconset, so a Retina Mac never scales an icon up.
ICNS_TYPES = (
    (b"icp4", 16),
    (b"icp5", 32),
    (b"icp6", 64),
    (b"ic07", 128),
    (b"ic08", 256),
    (b"ic09", 512),
    (b"ic11", 32),  # 16x16@2x
    (b"ic12", 64),  # 32x32@2x
    (b"ic13", 256),  # 128x128@2x
    (b"ic14", 512),  # 256x256@2x
    (b"ic10", 1024),  # 512x512@2x
)


def render(size: int, path: Path) -> bytes:
    """Draw the icon at `size` pixels into the PNG file `path`; its bytes."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(SOURCE))
    if not renderer.isValid():
        raise SystemExit(f"{SOURCE}: not a valid SVG")
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    if not image.save(str(path)):
        raise SystemExit(f"could not write {path}")
    return path.read_bytes()


def ico(pngs: dict[int, bytes]) -> bytes:
    """ICO with PNG-compressed entries (Windows Vista and later)."""
    sizes = [s for s in ICO_SIZES if s in pngs]
    header = struct.pack("<HHH", 0, 1, len(sizes))
    offset = len(header) + 16 * len(sizes)
    entries, blobs = b"", b""
    for size in sizes:
        data = pngs[size]
        side = 0 if size >= 256 else size  # 0 means 256 in an ICO directory
        entries += struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(data), offset)
        blobs += data
        offset += len(data)
    return header + entries + blobs


def icns(pngs: dict[int, bytes]) -> bytes:
    body = b""
    for kind, size in ICNS_TYPES:
        data = pngs[size]
        body += kind + struct.pack(">I", len(data) + 8) + data
    return b"icns" + struct.pack(">I", len(body) + 8) + body


def main() -> int:
    from PySide6.QtGui import QGuiApplication

    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "icons"
    out.mkdir(parents=True, exist_ok=True)
    app = QGuiApplication.instance() or QGuiApplication([])
    pngs = {size: render(size, out / f"draftdeck-{size}.png") for size in PNG_SIZES}
    (out / "draftdeck.png").write_bytes(pngs[256])
    (out / "draftdeck.ico").write_bytes(ico(pngs))
    (out / "draftdeck.icns").write_bytes(icns(pngs))
    del app
    print(f"icons in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
