"""Provider normalizers: pure translations between each SDK's wire format and Blackbox's neutral steps.

They do no I/O and keep no session state beyond the `CallIds` map handed to them, so the recorder, the
replayer and the tests can share them and a request is checked (and refused if unsupported) before it is sent.
"""
