"""The status a process really ends with, from what it exits with or from what its parent sees.

Imports nothing of Blackbox.  A cassette's `exitCode` is this status (0–255 on POSIX), never
the Python value handed to `sys.exit`: `sys.exit(256)` ends the process with status 0, `sys.exit(-1)` with
255, `sys.exit(2**70)` with 255 (CPython cannot convert it to a C long and uses -1).
"""

from __future__ import annotations

import os

__all__ = ["of_returncode", "of_system_exit"]

_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1  # CPython reads the code as a C long (long long from 3.13)


def of_system_exit(code: object) -> int:
    """The exit status of a process that ends with `SystemExit(code)`: None → 0; an int (or bool) → its low
    8 bits on POSIX (the kernel keeps no more), its low 32 on Windows; an int beyond a C long → the status of
    -1; anything else (a message, printed to stderr) → 1."""
    if code is None:
        return 0
    if not isinstance(code, int):
        return 1
    value = int(code) if _LONG_MIN <= code <= _LONG_MAX else -1
    return value & 0xFFFFFFFF if os.name == "nt" else value & 0xFF


def of_returncode(returncode: int) -> int:
    """A child's status as a shell shows it: killed by signal n (`Popen.returncode` -n) → 128+n."""
    return 128 - returncode if returncode < 0 else returncode
