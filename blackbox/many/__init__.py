"""Many replays: sweeps of what-ifs with pass rates, model migration over a folder of runs, and drift."""
