"""`python -m app` is the `draftdeck` command."""

import sys

from app.cli import main

sys.exit(main())
