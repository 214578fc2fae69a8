"""Measurement: acceptance and speed figures, bench results, tune sweeps and verdicts."""
