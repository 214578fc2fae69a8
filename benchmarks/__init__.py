"""Performance scripts (see README.md); a package so they can share helpers."""
