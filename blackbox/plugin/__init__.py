"""The pytest plugin (entry point `blackbox` → `blackbox.plugin.plugin`): the hooks, options and fixtures
(`plugin`), one test's cassette (`cassettes`), the network guard while a test replays (`network`), the run's
summary (`summary`).  Importing this package imports nothing; pytest is imported by `plugin` alone."""
