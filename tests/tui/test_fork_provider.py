"""The live what-if the fork form starts asks the API the run used (its calls' `origin`), as `blackbox what-if`
does: a Responses run with a GPT model stays on Responses instead of being guessed as Chat Completions."""

from __future__ import annotations

from pathlib import Path

import pytest

from blackbox.format.cassette import StepChain, save
from blackbox.format.origin import Origin
from blackbox_tui.fork_runners import provider_of, recorded_api
from blackbox_tui.run import Run


def run_from(path: Path, api: str | None, model: str = "gpt-5-mini") -> Run:
    chain = StepChain("origin-run")
    call = {"toolCallId": "call-0", "toolName": "get_weather", "toolInput": {"city": "Paris"}}
    chain.append("model_input", 1, {"messages": [{"role": "user", "content": "Weather in Paris?"}],
                                    "tools": [{"name": "get_weather", "description": ""}], "model": model})
    chain.append("model_output", 2, {"type": "tool_calls", "calls": [call]},
                 origin=Origin(api=api, model=model) if api is not None else None)
    chain.append("tool_call", 3, call)
    chain.append("tool_result", 4, {"toolCallId": "call-0", "toolName": "get_weather", "result": {"temp": 21}})
    save(chain.cassette(0), path)
    return Run.open(path)


@pytest.mark.parametrize(("api", "typed", "expected"), [
    ("responses", "", "responses"),              # the model recorded, the API it used
    ("responses", "gpt-5", "responses"),         # another model of the same family: still the API the run used
    ("responses", "claude-haiku-4-5", "anthropic"),  # another family: that family's API
    (None, "", "openai"),                        # no origin (an older run): the model's name decides
    ("azure", "", "azure"),                      # a deployment's name says nothing: the API the run used
])
def test_the_live_provider_is_the_api_the_run_used(tmp_path: Path, api: str | None, typed: str,
                                                   expected: str) -> None:
    run = run_from(tmp_path / "run.json", api)
    assert recorded_api(run) == api
    assert provider_of(typed or "gpt-5-mini", recorded_api(run)) == expected
