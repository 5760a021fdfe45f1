"""A brain for the fake API that answers with controlled randomness, so a sweep's pass rates are known.

    fake.brain = chance_brain({"hot": 0.9, "cold": 0.1}, seed=7)

Each request's last tool result picks its pass rate; the answer is a final answer "pass" with that probability
and "fail" otherwise.  Every tool result value draws from its own RNG (seeded with `seed` and the value), in
the order its requests arrive: whatever the interleaving of concurrent branches, the number of passes among
a value's first n requests is fixed by the seed, so a test's expected counts cannot flake.  `served` counts
the requests answered per value; `hold` (an Event), when set for a value, makes its requests after the first
`free` wait for it (a test kills a sweep mid-way without a sleep).
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from typing import Any

from tests.fakeapi import Reply, anthropic_message, chat_completion, last_tool_results

__all__ = ["ChanceBrain", "chance_brain"]


class ChanceBrain:
    def __init__(self, rates: dict[str, float], seed: int, provider: str = "openai") -> None:
        self.rates, self.seed, self.provider = rates, seed, provider
        self.served: Counter[str] = Counter()
        self.hold: threading.Event | None = None
        self.free = 0
        self._rngs = {value: random.Random(f"{seed}:{value}") for value in rates}
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> dict[str, Any] | Reply:
        results = last_tool_results(body)
        value = results[-1] if results else ""
        if value not in self.rates:
            raise AssertionError(f"chance_brain: no pass rate for the tool result {value!r}")
        with self._lock:
            self.served[value] += 1
            count = sum(self.served.values())
            passed = self._rngs[value].random() < self.rates[value]
        if self.hold is not None and count > self.free:
            self.hold.wait()
        text = "pass" if passed else "fail"
        if self.provider == "anthropic":
            return anthropic_message(text=text, model=body.get("model") or "x")
        return chat_completion(content=text, model=body.get("model") or "x")

    def expected_passes(self, value: str, n: int) -> int:
        """How many of `value`'s first n requests this brain answers "pass" (the same draws, replayed)."""
        rng = random.Random(f"{self.seed}:{value}")
        return sum(rng.random() < self.rates[value] for _ in range(n))


def chance_brain(rates: dict[str, float], seed: int = 0, provider: str = "openai") -> ChanceBrain:
    return ChanceBrain(rates, seed, provider)
