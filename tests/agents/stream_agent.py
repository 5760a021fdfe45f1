"""The streaming weather agent as a program, for the launcher: `python -m tests.agents.stream_agent <provider>`.

The fake API's address comes from FAKE_URL; Blackbox's mode and files from the BLACKBOX_* variables the
launcher sets."""

from __future__ import annotations

import os
import sys
from typing import Any

import blackbox
from tests.agents import weather


class Address:
    """The two base URLs `weather.client` reads, without a FakeAPI in this process."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.openai_url = url + "/v1"


def main() -> None:
    provider = sys.argv[1]
    bb = blackbox.session()
    where: Any = Address(os.environ.get("FAKE_URL", "http://127.0.0.1:9"))
    answer = weather.run(provider, bb, where, stream=True)
    print(answer)
    bb.finish(result=answer)


if __name__ == "__main__":
    main()
