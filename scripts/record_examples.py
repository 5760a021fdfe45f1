"""Re-record the example cassettes (examples/*.json) against the tests' fake API, offline.

    python scripts/record_examples.py

The examples are real SDK agents; here their base URL points at a local fake API whose "model" is
tests/travel_brain.py, so the committed cassettes can be re-made on any machine without a key.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakeapi import FakeAPI  # noqa: E402
from tests.travel_brain import travel_brain  # noqa: E402

EXAMPLES = {"anthropic": "anthropic_agent", "openai": "openai_agent"}


def record(fake: FakeAPI, provider: str, name: str, out_dir: Path) -> int:
    """Run `blackbox record` on one example; returns its exit code."""
    fake.brain = travel_brain(provider)
    env = {
        **os.environ,
        "ANTHROPIC_BASE_URL": fake.url,
        "OPENAI_BASE_URL": fake.openai_url,
        "ANTHROPIC_API_KEY": "example-recording-key",
        "OPENAI_API_KEY": "example-recording-key",
    }
    out = out_dir / f"{name}.json"
    command = [sys.executable, "-m", "blackbox", "record", "--out", str(out), "--",
               sys.executable, str(ROOT / "examples" / f"{name}.py")]
    return subprocess.run(command, env=env, check=False).returncode


def main(out_dir: Path = ROOT / "examples") -> int:
    with FakeAPI() as fake:
        codes = [record(fake, provider, name, out_dir) for provider, name in EXAMPLES.items()]
    return max(codes)


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "examples"))
