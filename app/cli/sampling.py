"""The sampler a command decodes with: the target's recipe (its config.json under
--recipe), changed by --temperature / --top-k / --top-p or replaced by --greedy, and
the seed that reproduces the draws."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path

from app.cli import arg_types
from app.core.infra.errors import BadValueError
from app.core.recipe import sampler_seed
from app.core.recipe.files import TARGET_CONFIG, target_run_recipe
from app.core.recipe.sampler_settings import SamplerSettings, sampler_settings, with_overrides

OVERRIDES = (("temperature", "--temperature"), ("top_k", "--top-k"), ("top_p", "--top-p"))


def add_seed_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--seed",
        type=arg_types.seed,
        metavar="S",
        help="seed of the sampler's draws: the same seed repeats the same text with "
        "--fixed drafting (adaptive lengths follow the machine's speed) or plain decoding "
        "(default: a fresh one, printed)",
    )


def add_sampler_args(p: argparse.ArgumentParser) -> None:
    """--temperature, --top-k, --top-p over the recipe's sampler, --greedy, --seed."""
    p.add_argument(
        "--temperature",
        type=arg_types.temperature,
        metavar="T",
        help="sampling temperature over the recipe's (0: greedy)",
    )
    p.add_argument(
        "--top-k",
        type=arg_types.top_k,
        metavar="K",
        help="draw only from the K most likely tokens (0: no limit)",
    )
    p.add_argument(
        "--top-p",
        type=arg_types.top_p,
        metavar="P",
        help="draw only from the most likely tokens that together reach P (0 to 1)",
    )
    p.add_argument(
        "--greedy",
        action="store_true",
        help="always the most likely token, whatever the recipe says (the exact comparison)",
    )
    add_seed_arg(p)


def usage_error(args: argparse.Namespace, problem: str) -> int:
    """One line in argparse's words; exit status 2, as for any bad argument."""
    print(f"draftdeck {args.command}: error: {problem}", file=sys.stderr)
    return 2


def conflicting_flags(args: argparse.Namespace) -> str | None:
    """Why the sampler flags cannot go together, or None."""
    given = [flag for name, flag in OVERRIDES if getattr(args, name) is not None]
    if args.greedy and given:
        return f"--greedy cannot be combined with {', '.join(given)}"
    return None


def recipe_sampler(
    target: Path, overrides: Mapping[str, object], recipe_file: str | None = None
) -> SamplerSettings:
    """The sampler the target's recipe describes (config.json under `overrides`, read
    from `recipe_file`). A sampler MNN would not know is a BadValueError naming the file
    that holds it: the override file when its own keys fail alone, else config.json."""
    try:
        return sampler_settings(target_run_recipe(target, overrides))
    except ValueError as exc:
        blamed = target / TARGET_CONFIG
        if recipe_file:
            try:
                sampler_settings(overrides)
            except ValueError:
                blamed = Path(recipe_file)
        raise BadValueError(blamed, f"the recipe's sampler cannot be used: {exc}") from None


def chosen_sampler(
    args: argparse.Namespace, target: Path, overrides: Mapping[str, object]
) -> SamplerSettings | None:
    """The sampler `generate` decodes with; None: greedy (the engine's exact argmax)."""
    if args.greedy:
        return None
    return with_overrides(
        recipe_sampler(target, overrides, args.recipe),
        temperature=args.temperature,
        top_k=args.top_k,
        top_p=args.top_p,
    )


def seed_for(args: argparse.Namespace, sampler: SamplerSettings | None) -> int | None:
    """--seed, else a fresh one chosen here so it can be told before the text starts;
    None when nothing is drawn."""
    return sampler_seed.seed_for(sampler, None if args.seed is None else int(args.seed))


def describe(sampler: SamplerSettings | None, seed: int | None) -> str:
    """`sampler: temperature 0.6, topK 20 · seed 123 (repeat with --seed 123)`."""
    label = "greedy" if sampler is None else sampler.describe()
    if seed is None:
        return f"sampler: {label}"
    return f"sampler: {label} · seed {seed} (repeat with --seed {seed})"
