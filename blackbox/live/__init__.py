"""The live wing: a session recording or replaying an agent (the SDK's transport, the call handler, the engines,
the recorder and its crash journal, the replayer, wrapped tools, the launcher, the session's settings and report).

It reaches providers only through the registry's `Provider` interface and names no API
(tests/test_import_contract.py).
"""
