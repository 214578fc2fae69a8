"""The Tune form's plan follows the recipes as they are saved: what it measured at the
recipes' old value moves to their new one; what the user chose stays."""

from __future__ import annotations

from app.core.measure.tune_follow import follow_recipe
from app.core.measure.tune_plan import SweepPlan, plan_for

WAS = {
    "draft_length": 3,
    "draft_threads": 1,
    "draft_precision": "low",
    "draft_memory": "normal",
    "target_threads": 1,
    "adaptive": False,
}


def test_values_held_at_the_recipe_follow_it() -> None:
    quick = plan_for("quick", WAS)
    now = {**WAS, "draft_threads": 2, "draft_memory": "low", "target_threads": 2}
    followed = follow_recipe(quick, WAS, now)
    assert followed.draft_threads == (2,) and followed.target_threads == (2,)
    assert followed.draft_memories == ("low",)
    assert followed.draft_lengths == (1, 2, 3, 4)  # swept: not the recipe's to move
    assert followed.draft_precisions == ("low",) and followed.adaptive == quick.adaptive
    assert follow_recipe(quick, WAS, WAS) == quick


def test_what_the_user_chose_stays() -> None:
    chosen = SweepPlan(draft_lengths=(3,), draft_threads=(1, 2), target_threads=(4,), tokens=32)
    now = {**WAS, "draft_length": 2, "draft_threads": 2, "target_threads": 2}
    followed = follow_recipe(chosen, WAS, now)
    assert followed.draft_lengths == (2,)  # held at the recipe's 3: follows it
    assert followed.draft_threads == (1, 2)  # a range: the user's
    assert followed.target_threads == (4,)  # not the recipe's value: the user's
    assert followed.tokens == 32
