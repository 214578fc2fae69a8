"""Everything that imports MNN. Runs in a worker process; never imports Qt."""
