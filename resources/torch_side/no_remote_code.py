"""Turn transformers' trust in a model folder's own code off, whatever the caller asks.

Runs INSIDE the export environment (imported by run_llmexport.py and source_logits.py),
never in the app. MNN's exporter passes `trust_remote_code=True` to every
`from_pretrained`, which makes transformers import the `*.py` files a folder's
`auto_map` names, with the user's rights. DraftDeck refuses such a folder unless the
user trusts it; this is the second lock, for code that came into the folder after that
check: transformers is told the user said no (it then uses its own classes for a model
it knows, or stops saying the folder needs its code), and the one function that imports
a folder's module refuses outright.
"""

from __future__ import annotations

import sys
from typing import Any

REFUSAL = (
    "DraftDeck: this model folder's own code was not trusted, so it is not run "
    "(draftdeck export --trust-remote-code, or Yes in Make Pack, runs it)"
)


def forbid_remote_code() -> None:
    try:
        import transformers.dynamic_module_utils as dynamic
    except ImportError:  # no transformers: nothing here can load a folder's code through it
        return

    trusting = dynamic.resolve_trust_remote_code

    def never_trust(trust_remote_code: Any, *args: Any, **kwargs: Any) -> Any:
        return trusting(False, *args, **kwargs)

    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise ImportError(REFUSAL)

    # The auto classes import these names into their own modules: patched where defined
    # (for modules imported later) and in every transformers module that has them now.
    for name, replacement in (
        ("resolve_trust_remote_code", never_trust),
        ("get_class_from_dynamic_module", refuse),
        ("get_class_in_module", refuse),
    ):
        original = getattr(dynamic, name)
        for module in list(sys.modules.values()):
            ours = module is not None and module.__name__.startswith("transformers")
            if ours and getattr(module, name, None) is original:
                setattr(module, name, replacement)
