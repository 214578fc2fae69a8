"""The engine: a worker process that owns MNN (`worker`), the client that drives it
from the window or the CLI (`client`), and the messages between them (`protocol`)."""
