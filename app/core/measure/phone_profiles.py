"""Phone profiles: what a target step, a draft step and a verify cost on a phone.

A profile is a set of phone results (plain and speculative tok/s at a draft length)
that phone_model.fit_steps turns into step costs. For a phone the user recorded results
on (phone_results.py, by its adb model name), those results; else the published figures
shipped in resources/phone_profiles.json (each with its source and date). Results of
other models than the forecast pair's are scaled by the bytes of weights each model
reads per token (pack/weight_bytes.py): decoding on phones is memory-bound.

The chosen profile (the phone the Pair page, Tune and Chat forecast for) is kept in
DraftDeck's settings (`phone_profile`).
"""

from __future__ import annotations

import json
import logging
from functools import lru_cache
from pathlib import Path
from typing import Any

from app.core.infra.resources import read_text
from app.core.infra.settings import load_settings, save_settings
from app.core.measure.pair_acceptance import model_stamp, pair_key, read_tallies
from app.core.measure.phone_model import PhoneProfile, ProfileResult
from app.core.measure.phone_results import PackRef, PhoneResult, list_results, phones
from app.core.pack.weight_bytes import bytes_per_token

log = logging.getLogger("draftdeck.measure")

PROFILES_FILE = "phone_profiles.json"
# A recorded figure's 95 % margin when its spread is not known (one TokForge run).
RECORDED_MARGIN = 0.05
MAX_PROFILE_RESULTS = 32


def pack_ref(pack: Path) -> PackRef:
    """A pack as a recorded result names it."""
    resolved = Path(pack).resolve()
    stamp = model_stamp(resolved) if resolved.is_dir() else ""
    return PackRef(resolved.name, str(resolved), stamp, bytes_per_token(resolved))


@lru_cache(maxsize=1)
def published_profiles() -> tuple[PhoneProfile, ...]:
    """The profiles made of published figures, in the file's order (bad entries are
    left out and logged: a shipped file, checked by the tests)."""
    data = json.loads(read_text(PROFILES_FILE))
    models: dict[str, Any] = data.get("models", {})
    out = []
    for entry in data.get("profiles", []):
        try:
            out.append(_published(entry, models))
        except (KeyError, TypeError, ValueError) as exc:
            log.warning("%s: a profile cannot be used: %r", PROFILES_FILE, exc)
    return tuple(out)


def _published(entry: dict[str, Any], models: dict[str, Any]) -> PhoneProfile:
    results = []
    for r in entry["results"]:
        target, draft = models[r["target"]], models[r["draft"]]
        acceptance = r.get("acceptance")
        results.append(
            ProfileResult(
                float(r["plain_tok_s"]),
                float(r["spec_tok_s"]),
                int(r["draft_length"]),
                int(target["bytes"]),
                int(draft["bytes"]),
                None,
                (float(acceptance),) if acceptance is not None else None,
                f"{target['name']} + {draft['name']}, d={r['draft_length']}",
            )
        )
    first = entry["results"][0]
    return PhoneProfile(
        str(entry["name"]),
        tuple(results),
        recorded=False,
        margin=float(entry["margin"]),
        source=str(entry["source"]),
        target_name=str(models[first["target"]]["name"]),
        draft_name=str(models[first["draft"]]["name"]),
    )


def device_names() -> list[str]:
    """Recorded phones first (the latest first), then published profiles."""
    recorded = phones()
    return recorded + [p.name for p in published_profiles() if p.name not in recorded]


def named_device(name: str) -> str | None:
    """The profile a user means by `name` on the command line: its exact name, else the
    one name that starts with it (case aside), so "RedMagic 11 Pro" finds "RedMagic 11
    Pro (SM8850, published)"; None when no name, or more than one, fits."""
    names = device_names()
    if name in names:
        return name
    fitting = [n for n in names if n.casefold().startswith(name.casefold())]
    return fitting[0] if len(fitting) == 1 else None


def chosen_device() -> str | None:
    """The user's chosen phone profile (DraftDeck settings); None when none is chosen."""
    return load_settings().phone_profile or None


def choose_device(name: str | None) -> None:
    settings = load_settings()
    settings.phone_profile = name or ""
    save_settings(settings)


def _recorded_result(r: PhoneResult) -> ProfileResult:
    """A recorded result as a profile result: its pair's acceptance when it is measured
    here for the same models (else None: the card's is taken)."""
    key = rates = None
    target, draft = Path(r.target.path), Path(r.draft.path)
    same = (
        r.target.stamp
        and r.draft.stamp
        and target.is_dir()
        and draft.is_dir()
        and model_stamp(target) == r.target.stamp
        and model_stamp(draft) == r.draft.stamp
    )
    if same:
        key = pair_key(target, draft)
        tallies = read_tallies(target, draft)
        rates = tallies.rates if tallies is not None and tallies.rates else None
    return ProfileResult(
        r.plain_tok_s,
        r.spec_tok_s,
        r.draft_length,
        r.target.bytes,
        r.draft.bytes,
        key,
        rates,
        f"{r.target.name} + {r.draft.name}, d={r.draft_length}",
    )


def recorded_profile(phone: str, results: list[PhoneResult] | None = None) -> PhoneProfile | None:
    """The profile of the phone's latest MAX_PROFILE_RESULTS results (older ones stay
    listed; a phone's costs drift with its updates and a forecast stays quick)."""
    results = list_results(phone) if results is None else results
    results = results[-MAX_PROFILE_RESULTS:]
    if not results:
        return None
    latest = max(r.date for r in results)[:10]
    n = len(results)
    return PhoneProfile(
        phone,
        tuple(_recorded_result(r) for r in results),
        recorded=True,
        margin=RECORDED_MARGIN,
        source=f"{n} result{'s' if n != 1 else ''} recorded on {phone} (latest {latest})",
        target_name=results[-1].target.name,
        draft_name=results[-1].draft.name,
    )


def profile_for(device: str) -> PhoneProfile | None:
    """The profile named `device`: results recorded on that phone, else the published
    figures of that name; None when there are neither."""
    recorded = recorded_profile(device)
    if recorded is not None:
        return recorded
    for profile in published_profiles():
        if profile.name == device:
            return profile
    return None


def given_results_profile(
    target: Path, draft: Path, figures: list[tuple[float, float, int]], name: str = "the phone"
) -> PhoneProfile:
    """A profile from results given for this pair (the command line's --phone-result)."""
    ref_t, ref_d = pack_ref(target), pack_ref(draft)
    key = pair_key(target, draft)
    results = tuple(
        ProfileResult(plain, spec, d, ref_t.bytes, ref_d.bytes, key, None, f"d={d}")
        for plain, spec, d in figures
    )
    n = len(results)
    return PhoneProfile(
        name,
        results,
        recorded=True,
        margin=RECORDED_MARGIN,
        source=f"{n} result{'s' if n != 1 else ''} given for this pair on {name}",
        target_name=ref_t.name,
        draft_name=ref_d.name,
    )
