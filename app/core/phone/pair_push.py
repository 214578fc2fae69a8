"""What a push does for the pair a pack belongs to, before and after its files go.

Before: which draft the target's copy on the phone will name (`draft_config_path`, see
pair_link), and whether the models the phone will run together fit in its RAM (see
phone_memory): a push that cannot fit is refused before anything is sent. After: whether
the link resolves on the phone, said when it does not (the draft is not there yet).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.core.infra.errors import PhoneError
from app.core.pack.files import CONFIG
from app.core.phone.adb import Phone
from app.core.phone.destinations import PARTIAL
from app.core.phone.pair_link import (
    DRAFT_LINK,
    check_link_target,
    draft_link,
    drafts,
    link_resolves,
    linked_draft_name,
    phone_link,
)
from app.core.phone.phone_memory import (
    TIGHT,
    TOO_BIG,
    EstimateModel,
    ModelNeed,
    PhoneFit,
    model_need,
    phone_fit,
    phone_ram,
)
from app.core.recipe.files import read_recipe

FindPack = Callable[[str], Path | None]  # a library pack by name


@dataclass(frozen=True)
class PairRequest:
    """What a push is asked to do for a pair (see PushJob)."""

    draft: Path | None = None  # the draft the target's config.json is to name
    partner: Path | None = None  # the target a draft is pushed with
    estimate: EstimateModel | None = None  # one model's memory need (no check without)
    find_pack: FindPack | None = None  # a library pack by name


@dataclass(frozen=True)
class PairPlan:
    link: str | None  # the draft_config_path written into the phone's config.json
    names: str | None  # the draft_config_path the phone's copy holds (written, or the pack's)
    draft_name: str  # the draft it names ("" for none)
    fit: PhoneFit | None  # None: not checked (no estimate given, or RAM unknown)
    notes: tuple[str, ...]  # said to the user before the push


def draft_lost(draft: str, why: str) -> PhoneError:
    """A target is not pushed when its draft, pushed just before, did not arrive."""
    return PhoneError(
        f"Not pushed: its draft {draft} did not arrive ({why}). Push the pair again.",
        "draft_failed",
    )


def plan_push(phone: Phone, pack: Path, root: str, dest: str, request: PairRequest) -> PairPlan:
    """The link and the memory check for pushing `pack` to `dest` in `root`. The
    request's `draft`: the draft the target is pushed with (or to link, already on the
    phone); `partner`: the target a draft is pushed with. PhoneError "too_big" when the
    phone's RAM cannot hold what it will run."""
    draft, partner, find_pack = request.draft, request.partner, request.find_pack
    recipe = read_recipe(pack / CONFIG)
    link: str | None = None
    draft_name = ""
    draft_pack = draft
    if draft is not None:
        check_link_target(draft)
        link, draft_name = draft_link(root, draft), draft.name
    elif partner is None and (pack / CONFIG).is_file():
        link = phone_link(phone, [dest, dest + PARTIAL])  # kept as the phone has it
        if link is not None:
            draft_name = linked_draft_name(link)
            draft_pack = find_pack(draft_name) if find_pack is not None else None
    own = recipe.get(DRAFT_LINK)
    names = link if link is not None else own if isinstance(own, str) and own else None
    if link is None and names is not None:
        draft_name = linked_draft_name(names)
    notes: list[str] = []
    if drafts(recipe) and names is None:
        notes.append(
            f"{pack.name}'s recipe drafts (speculative_type: draftmodel) but names no draft "
            "on the phone: push it with its draft to link them."
        )
    elif names is not None and not drafts(recipe):
        notes.append(
            f"{pack.name}'s config.json names the draft {draft_name} but does not turn "
            "drafting on (speculative_type is not draftmodel): the phone runs the target alone."
        )
    fit = _check_memory(phone, pack, draft_pack, partner, request.estimate)
    if fit is not None and fit.level == TOO_BIG:
        raise PhoneError(fit.message, "too_big")
    if fit is not None and fit.level == TIGHT:
        notes.append(fit.message)
    return PairPlan(link, names, draft_name, fit, tuple(notes))


def _check_memory(
    phone: Phone,
    pack: Path,
    draft: Path | None,
    partner: Path | None,
    estimate: EstimateModel | None,
) -> PhoneFit | None:
    if estimate is None:
        return None
    ram = phone_ram(phone)
    if not ram:
        return None
    needs: list[ModelNeed]
    if partner is not None:  # a draft, pushed with its target
        needs = [model_need(estimate, partner, "target"), model_need(estimate, pack, "draft")]
    elif draft is not None:
        needs = [model_need(estimate, pack, "target"), model_need(estimate, draft, "draft")]
    else:
        needs = [model_need(estimate, pack, "pack")]
    return phone_fit(needs, ram, phone.name)


def after_push(phone: Phone, plan: PairPlan) -> tuple[bool | None, tuple[str, ...]]:
    """Whether the draft_config_path the phone's config.json holds resolves there (None:
    it holds none), and what to say when it does not."""
    if plan.names is None:
        return None, ()
    if link_resolves(phone, plan.names):
        return True, ()
    if plan.link is None:  # the pack's own value (a card's "/path/to/config_cpu.json")
        return False, (
            f"The target's {DRAFT_LINK}, {plan.names}, is not a file on {phone.name}: push "
            "the target with its draft to link them.",
        )
    where = posixpath.dirname(plan.names)
    return False, (
        f"The draft {plan.draft_name} is not on {phone.name} at {where}: the target's "
        f"{DRAFT_LINK} points at {plan.names}. Push {plan.draft_name} there too.",
    )
