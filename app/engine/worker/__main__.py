"""`python -m app.engine.worker` runs the engine worker process."""

import sys

from app.engine.worker.server import main

sys.exit(main())
