"""The engine worker process: everything that imports MNN. Never imported by the
window or the command line, which start it as `python -m app.engine.worker`."""
