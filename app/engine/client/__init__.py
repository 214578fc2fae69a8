"""The engine seen from the window's or the CLI's process: start the worker, talk to
it, and the bench and tune runs built on that."""
