"""The pytest plugin (entry point `blackbox` → `blackbox.plugin.plugin`), split as pytest-recording splits its
own: the hooks, options and fixtures (`plugin`), one test's state (`per_test`), one cassette of a test
(`cassettes`), the network guard while a test replays (`network`), the run's summary (`summary`).  Importing
this package imports nothing; `network` needs no pytest (a child process calls its `guard_from_environment`)."""
