"""Sign the built app with the release workflow's certificates (packaging/README.md).

`python scripts/tasks.py sign` runs this after `package`, on the OS that built the app;
the release workflow calls it only when the secrets exist, given through environment
variables:

- Windows: WINDOWS_CERTIFICATE (a base64 .pfx), WINDOWS_CERTIFICATE_PASSWORD.
- macOS: MACOS_CERTIFICATE (a base64 .p12 holding the Developer ID Application
  identity), MACOS_CERTIFICATE_PASSWORD, MACOS_SIGNING_IDENTITY ("Developer ID
  Application: NAME (TEAMID)"); notarization also when APPLE_ID, APPLE_TEAM_ID and
  APPLE_APP_PASSWORD (an app-specific password) are set.

Certificates go to a temporary folder (and keychain) that is removed afterwards.
"""

from __future__ import annotations

import base64
import glob
import os
import secrets
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

TIMESTAMP = "http://timestamp.digicert.com"


def need(name: str) -> str:
    value = os.environ.get(name, "")
    if not value:
        raise SystemExit(f"signing: {name} is not set")
    return value


def call(*command: str | Path, hide: Sequence[str] = ()) -> None:
    """Run a command, printing it with the values in `hide` (passwords) starred out."""
    args = [str(part) for part in command]
    print("+", " ".join("***" if arg in hide else arg for arg in args), flush=True)
    subprocess.run(args, check=True)


def signtool() -> str:
    """The newest signtool of the Windows SDK (the runner has it, but not on PATH)."""
    found = sorted(glob.glob(r"C:\Program Files (x86)\Windows Kits\10\bin\10.*\x64\signtool.exe"))
    if not found:
        raise SystemExit("signing: no signtool.exe in the Windows 10 SDK")
    return found[-1]


def sign_windows(app: Path, temp: Path) -> None:
    pfx = temp / "certificate.pfx"
    pfx.write_bytes(base64.b64decode(need("WINDOWS_CERTIFICATE")))
    files = [app / "draftdeck.exe", app / "draftdeck-cli.exe"]
    files += sorted(p for p in (app / "_internal").rglob("*") if p.suffix in (".dll", ".pyd"))
    tool = signtool()
    password = need("WINDOWS_CERTIFICATE_PASSWORD")
    base = [tool, "sign", "/fd", "SHA256", "/tr", TIMESTAMP, "/td", "SHA256", "/f", str(pfx)]
    for start in range(0, len(files), 50):  # a Windows command line is at most 32 767 chars
        call(*base, "/p", password, *files[start : start + 50], hide=[password])


def sign_macos(bundle: Path, temp: Path) -> None:
    keychain = str(temp / "signing.keychain-db")
    password = secrets.token_hex(16)
    p12 = temp / "certificate.p12"
    p12.write_bytes(base64.b64decode(need("MACOS_CERTIFICATE")))
    security = "/usr/bin/security"
    certificate_password = need("MACOS_CERTIFICATE_PASSWORD")
    hide = [password, certificate_password]
    call(security, "create-keychain", "-p", password, keychain, hide=hide)
    try:
        call(security, "set-keychain-settings", "-lut", "3600", keychain, hide=hide)
        call(security, "unlock-keychain", "-p", password, keychain, hide=hide)
        call(
            security,
            "import",
            p12,
            "-k",
            keychain,
            "-P",
            certificate_password,
            "-T",
            "/usr/bin/codesign",
            hide=hide,
        )
        call(
            security,
            "set-key-partition-list",
            "-S",
            "apple-tool:,apple:",
            "-s",
            "-k",
            password,
            keychain,
            hide=hide,
        )
        call(security, "list-keychains", "-d", "user", "-s", keychain, hide=hide)
        call(
            "/usr/bin/codesign",
            "--force",
            "--deep",
            "--options",
            "runtime",
            "--timestamp",
            "--keychain",
            keychain,
            "--sign",
            need("MACOS_SIGNING_IDENTITY"),
            bundle,
        )
        call("/usr/bin/codesign", "--verify", "--deep", "--strict", bundle)
        if all(
            os.environ.get(name) for name in ("APPLE_ID", "APPLE_TEAM_ID", "APPLE_APP_PASSWORD")
        ):
            notarize(bundle, temp)
        else:
            print("not notarized: APPLE_ID, APPLE_TEAM_ID or APPLE_APP_PASSWORD is not set")
    finally:
        subprocess.run([security, "delete-keychain", keychain], check=False)


def notarize(bundle: Path, temp: Path) -> None:
    upload = temp / "DraftDeck-notarize.zip"
    password = need("APPLE_APP_PASSWORD")
    call("/usr/bin/ditto", "-c", "-k", "--keepParent", bundle, upload)
    call(
        "/usr/bin/xcrun",
        "notarytool",
        "submit",
        upload,
        "--apple-id",
        need("APPLE_ID"),
        "--team-id",
        need("APPLE_TEAM_ID"),
        "--password",
        password,
        "--wait",
        hide=[password],
    )
    call("/usr/bin/xcrun", "stapler", "staple", bundle)


def sign_built_app(dist: Path) -> None:
    # RUNNER_TEMP is emptied after every job; the folder is removed here regardless.
    with tempfile.TemporaryDirectory(dir=os.environ.get("RUNNER_TEMP")) as temp:
        if sys.platform == "win32":
            sign_windows(dist / "DraftDeck", Path(temp))
        elif sys.platform == "darwin":
            sign_macos(dist / "DraftDeck.app", Path(temp))
        else:
            raise SystemExit("signing: Linux builds are not signed (SHA256SUMS covers them)")
