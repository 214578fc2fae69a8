"""Child process for the concurrent-save tests: `draftdeck recipe set PACK note=TAG-i`
COUNT times, as the command line runs it (in this process, so a save costs a save and
not an interpreter start), once the test says go. Prints the errors of the saves that
failed as one JSON list."""

import contextlib
import io
import json
import sys

from app.cli.main import main

pack, tag, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
print("ready", flush=True)
sys.stdin.readline()  # all writers start together: no clock involved
errors = []
for i in range(count):
    said = io.StringIO()
    with contextlib.redirect_stderr(said), contextlib.redirect_stdout(io.StringIO()):
        code = main(["recipe", "set", pack, f"note={tag}-{i}"])
    if code != 0:
        errors.append(said.getvalue().strip())
print(json.dumps(errors), flush=True)
