"""`python -m app` is the `draftdeck` command."""

import sys

from app.entry import main

sys.exit(main())
