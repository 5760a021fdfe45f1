"""Fuzz targets for every reader of untrusted bytes (see `fuzz/targets.py`, run by `scripts/fuzz.py`)."""
