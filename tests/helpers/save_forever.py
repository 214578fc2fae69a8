"""Child process for the crash-safety test: saves two recipes in turn until killed.

Each save also rewrites `<recipe>.bak` with the previous version, so a kill lands in
the backup's write as often as in the recipe's."""

import itertools
import sys
from pathlib import Path

from app.core.recipe.files import RecipeDocument

path = Path(sys.argv[1])
doc = RecipeDocument.load(path)
base = dict(doc.data)
print("ready", flush=True)
for i in itertools.count():
    data = dict(base)
    data["thread_num"] = 1 + i % 2
    data["padding"] = "x" * (1000 * (i % 2))  # the two versions differ in size too
    doc.save(data, overwrite_changes=True)
