"""When a saved recipe key takes effect: at the next reply, or only at the next load.

The Chat keeps a pair loaded between replies, so a key that is read only while loading
must make the pair load again before the next reply, and a key read for each reply
must be read again for it. Who reads each key of `config_cpu.json` (the draft) and of
the target's `config.json` (MNN 3.6.1's llmconfig.hpp, and DraftDeck's engine):

| key                                        | read by                            | when       |
| ------------------------------------------ | ---------------------------------- | ---------- |
| max_all_tokens                             | the load plan's context window     | load       |
|                                            | (the loop stops there), MNN's KV   |            |
| draft_predict_length (target)              | the load plan's d; the verify      | load       |
|                                            | module MNN prepares for d+1 rows   |            |
| backend_type, thread_num, precision,       | MNN's runtime, built by load()     | load       |
| memory, power, dynamic_option,             |                                    |            |
| attention_mode, use_mmap, kvcache_*        |                                    |            |
| tokenizer_file, llm_model, llm_weight,     | MNN's load(); the engine's chat    | load       |
| llm_config, jinja, system_prompt           | format and tokenizer, read at load |            |
| speculative_type, reuse_kv                 | set by the engine at load          | load       |
| max_new_tokens                             | MNN's own generate() only, which   | load (*)   |
|                                            | the Chat never calls: a reply's    |            |
|                                            | length is the Chat's "tokens max"  |            |
| draft_config_path                          | the phone app only                 | load (*)   |
| any key not listed here                    | MNN may read it while loading      | load       |
| the sampler's keys (sampler_fields:        | the target's: read for each        | each reply |
| sampler_type, temperature, top_k, ...)     | Generate request; the draft's: not |            |
|                                            | read (the target's sampler draws   |            |
|                                            | the draft's proposals too)         |            |

(*) No effect on a Chat reply; reloading for it is harmless, and keeps the rule simple:
every key but the sampler's reloads the pair when its saved value changed.
"""

from __future__ import annotations

from collections.abc import Mapping

from app.core.recipe.sampler_fields import SAMPLER_FIELDS

PER_REPLY_KEYS = frozenset(f.key for f in SAMPLER_FIELDS)


def load_time_changes(loaded: Mapping[str, object], saved: Mapping[str, object]) -> list[str]:
    """The keys, in order, whose value in `saved` differs from `loaded` (added and
    removed ones too) and that take effect only when the pair loads again."""
    keys = [*loaded, *(k for k in saved if k not in loaded)]
    return [
        k
        for k in keys
        if k not in PER_REPLY_KEYS and (k in loaded, loaded.get(k)) != (k in saved, saved.get(k))
    ]
