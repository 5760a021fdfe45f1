"""The format wing: the cassette and everything that reads it (canonical JSON and the hash chain, loading eager,
lazy and progressive, writing, verify, diff, the outcome, key scanning, inert text).

It imports nothing of the live wing, the fork family, the providers or the plugin (tests/test_import_contract.py),
so a cassette can be read, checked and compared without any of the machinery that records one.
"""
