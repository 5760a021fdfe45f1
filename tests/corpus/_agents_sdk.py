"""How every Agents SDK agent of the corpus puts the SDK on Blackbox (a helper, not an agent: its name starts
with `_`): the SDK's default client on the session's transport (the README's one adaptation for the Agents
SDK), the Responses API named (the SDK's default, so no agent depends on what a later version picks), and
tracing off (its exporter would post to api.openai.com, outside the fake API)."""

from agents import set_default_openai_api, set_default_openai_client, set_tracing_disabled
from openai import AsyncOpenAI

import blackbox


def on_blackbox(bb: blackbox.Session) -> None:
    """Every agent the process makes from now on speaks through `bb`."""
    set_default_openai_client(AsyncOpenAI(http_client=bb.async_http_client()))
    set_default_openai_api("responses")
    set_tracing_disabled(True)
