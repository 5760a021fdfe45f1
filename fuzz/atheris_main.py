"""Run one target under atheris (coverage-guided): `python -m fuzz.atheris_main <target> [libFuzzer args…]`.

Blackbox's modules are instrumented as they are imported, so the fuzzer steers by their branch coverage.
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports(include=["blackbox", "fuzz"]):
    from fuzz.targets import TARGETS


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in TARGETS:
        sys.exit(f"usage: python -m fuzz.atheris_main <{'|'.join(TARGETS)}> [libFuzzer options] [corpus dirs]")
    target = TARGETS[sys.argv[1]]
    atheris.Setup([sys.argv[0], *sys.argv[2:]], target)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
