"""`python -m app.engine` runs the engine worker process."""

import sys

from app.engine.worker import main

sys.exit(main())
