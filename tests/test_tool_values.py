"""What a wrapped tool stores and hands back when its framework passes context or its result is typed
(`blackbox.live.tool_values`): the framework's context is left out of the stored input (recognised by the real
frameworks' classes and markers), typed arguments are stored as their JSON, typed results are rebuilt through the
return annotation in replay, and a result replay could not hand back as it was fails the run in one line."""

from __future__ import annotations

import dataclasses
import enum
import sys
import textwrap
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from pydantic import BaseModel

import blackbox
from blackbox.errors import SessionError
from blackbox.format.cassette import load
from blackbox.live.tool_values import ToolShape
from tests.cli_helpers import run_cli


class Sky(enum.StrEnum):
    CLEAR = "clear"
    RAIN = "rain"


class Weather(BaseModel):
    city: str
    temp_c: float
    sky: Sky


@dataclasses.dataclass
class Booking:
    reference: str
    weather: Weather


class Account(TypedDict):
    user: str
    seats: int


def weather(city: str) -> Weather:
    return Weather(city=city, temp_c=21.0, sky=Sky.CLEAR)


def booking() -> Booking:
    return Booking("BK-1", weather("Paris"))


def account() -> Account:
    return {"user": "u-42", "seats": 5}


def sky() -> Sky:
    return Sky.RAIN


def pair() -> tuple[str, dict[str, int]]:
    return ("content", {"artifact": 1})


def forecasts() -> list[Weather]:
    return [weather("Paris"), weather("Rome")]


def celsius() -> float:
    return 21.0


TYPED = {"weather": lambda: weather("Paris"), "booking": booking, "account": account, "sky": sky, "pair": pair,
         "forecasts": forecasts, "celsius": celsius}
FUNCTIONS = {"weather": weather, "booking": booking, "account": account, "sky": sky, "pair": pair,
             "forecasts": forecasts, "celsius": celsius}


def test_typed_results_come_back_in_replay_as_the_tool_returned_them(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    bb = blackbox.session("record", out=out)
    tools = bb.tools(FUNCTIONS)
    recorded = {name: tools[name]("Paris") if name == "weather" else tools[name]() for name in FUNCTIONS}
    assert bb.finish().steps == 2 * len(FUNCTIONS)
    stored = {s.payload["toolName"]: s.payload["result"] for s in load(out).steps if s.type == "tool_result"}
    assert stored["weather"] == {"city": "Paris", "temp_c": 21, "sky": "clear"}  # its JSON form, as pydantic writes it
    assert stored["sky"] == "rain" and stored["pair"] == ["content", {"artifact": 1}]

    bb = blackbox.session("replay", cassette=out)
    tools = bb.tools(FUNCTIONS)
    replayed = {name: tools[name]("Paris") if name == "weather" else tools[name]() for name in FUNCTIONS}
    bb.finish()
    for name, value in recorded.items():  # the same value, type and text: every framework serialises it alike
        assert type(replayed[name]) is type(value) and replayed[name] == value, name
        assert repr(replayed[name]) == repr(value) and str(replayed[name]) == str(value), name


def test_a_forked_value_of_another_shape_is_handed_over_as_given(tmp_path: Path) -> None:
    out, fork = tmp_path / "run.json", tmp_path / "fork.json"
    bb = blackbox.session("record", out=out)
    bb.tool("weather", weather)("Paris")
    bb.finish()
    script = tmp_path / "replies.json"
    script.write_text('[{"type": "final_answer", "text": "Done."}]')
    for value, expected in (({"city": "Oslo", "temp_c": -3, "sky": "rain"}, Weather(city="Oslo", temp_c=-3,
                                                                                     sky=Sky.RAIN)),
                            ("station offline", "station offline")):
        bb = blackbox.session("fork", cassette=out, out=fork, fork_at=1, fork_set=value, continue_with="script",
                              script=script)
        assert bb.tool("weather", weather)("Paris") == expected
        bb.finish()


@pytest.mark.parametrize(("tool", "reason", "remedy"), [
    (lambda: Weather(city="x", temp_c=1, sky=Sky.CLEAR), "its return type is not annotated",
     "annotate its return type (-> Weather)"),
    (lambda: {"tags": {"a"}}, "its return type is not annotated", "annotate its return type (-> dict)"),
    (lambda: (1, 2), "its return type is not annotated", "annotate its return type (-> tuple)"),
])
def test_a_result_replay_could_not_hand_back_fails_the_run_in_one_line(tmp_path: Path, tool: Any, reason: str,
                                                                      remedy: str) -> None:
    bb = blackbox.session("record", out=tmp_path / "run.json")
    with pytest.raises(SessionError) as refused:
        bb.tool("lookup", tool)()
    message = str(refused.value)
    assert message.startswith("[blackbox] tool 'lookup' returned ") and reason in message and remedy in message
    assert "\n" not in message
    with pytest.raises(SessionError, match="tool 'lookup' returned"):
        bb.finish(result="the agent thought it went well")
    ending = load(tmp_path / "run.json").steps[-1].payload
    assert ending["status"] == "error"  # never "success" with a changed tool result


class Handle:
    """A class pydantic cannot rebuild from JSON."""

    def __init__(self, fd: int) -> None:
        self.fd = fd


def opened() -> Handle:
    return Handle(3)


def test_an_annotated_result_that_cannot_be_rebuilt_names_the_way_out(tmp_path: Path) -> None:
    bb = blackbox.session("record", out=tmp_path / "run.json")
    with pytest.raises(SessionError, match=r"tool 'opened' returned a Handle, which has no JSON form .*; return a "
                                           r"pydantic model, a dataclass or JSON values"):
        bb.tool("opened", opened)()


class Loose(BaseModel):
    value: Any


def loose() -> Loose:
    return Loose(value=Sky.RAIN)


def test_a_value_equal_but_not_the_same_after_its_json_is_refused(tmp_path: Path) -> None:
    """`Loose(value="rain") == Loose(value=Sky.RAIN)` (a StrEnum equals its value), but a framework that sends
    `str(result)` would tell the model `value='rain'` instead of `value=<Sky.RAIN: 'rain'>`."""
    bb = blackbox.session("record", out=tmp_path / "run.json")
    with pytest.raises(SessionError, match=r"tool 'loose' returned a Loose that replay could not hand back as it was "
                                           r"\(it does not come back from its JSON form through the return annotation"):
        bb.tool("loose", loose)()


def test_the_record_command_fails_with_the_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(textwrap.dedent("""
        import blackbox
        from pydantic import BaseModel

        class Weather(BaseModel):
            city: str

        def get_weather(city):
            return Weather(city=city)

        bb = blackbox.session()
        try:
            bb.tool("get_weather", get_weather)("Paris")
        except Exception as exc:  # a framework that tells the model the tool failed, and goes on
            pass
        bb.finish(result="done")
    """))
    code, out, err = run_cli(capsys, "record", "--out", tmp_path / "run.json", "--", sys.executable, agent)
    assert code != 0
    said = out + err
    assert "tool 'get_weather' returned a Weather that replay could not hand back as it was" in said
    assert "annotate its return type (-> Weather)" in said and "success" not in said


# -- the framework's context ------------------------------------------------------------------------------


def stored(fn: Any, *args: Any, **kwargs: Any) -> Any:
    return ToolShape(fn).model_input(args, kwargs)


def test_pydantic_ai_run_context_is_not_the_models_argument() -> None:
    from pydantic_ai import RunContext
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage

    def get_weather(ctx: RunContext[None], city: str) -> str:
        return city

    def unannotated(ctx, city):  # type: ignore[no-untyped-def]
        return city

    ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    assert stored(get_weather, ctx, "Paris") == {"city": "Paris"}
    assert stored(unannotated, ctx, city="Paris") == {"city": "Paris"}  # known by its class


def test_agents_sdk_context_wrappers_are_not_the_models_argument() -> None:
    from agents import RunContextWrapper
    from agents.tool_context import ToolContext

    def fetch_age(wrapper: RunContextWrapper[dict[str, str]], user: str) -> str:
        return user

    def with_tool_context(ctx: ToolContext[None]) -> str:
        return "x"

    assert stored(fetch_age, RunContextWrapper(context={"name": "John"}), "John") == {"user": "John"}
    assert stored(with_tool_context, object()) == {}


def test_langchain_injected_arguments_are_not_the_models_argument() -> None:
    from langchain.tools import InjectedState, InjectedToolCallId, ToolRuntime
    from langchain_core.runnables import RunnableConfig

    def lookup(name: str, state: Annotated[dict[str, Any], InjectedState],
               call_id: Annotated[str, InjectedToolCallId], config: RunnableConfig | None = None) -> str:
        return name

    def account(runtime: ToolRuntime) -> str:
        return "x"

    kwargs = {"name": "Alice", "state": {"messages": [object()]}, "call_id": "toolu_01", "config": {"tags": []}}
    assert stored(lookup, **kwargs) == {"name": "Alice"}
    assert stored(account, runtime=object()) == {}


def test_a_context_annotation_that_stays_a_string_is_still_recognised() -> None:
    namespace: dict[str, Any] = {}
    exec("def tool(ctx: 'RunContext[Deps]', city: str) -> str:\n    return city\n", namespace)
    assert stored(namespace["tool"], object(), "Paris") == {"city": "Paris"}


def test_typed_arguments_are_stored_as_the_models_json(tmp_path: Path) -> None:
    class Location(BaseModel):
        city: str
        country: str

    def temperature(location: Location, sky: Sky) -> str:
        return location.city

    out = tmp_path / "run.json"
    bb = blackbox.session("record", out=out)
    bb.tool("temperature", temperature)(Location(city="Paris", country="France"), Sky.CLEAR)
    bb.finish()
    call = next(s.payload for s in load(out).steps if s.type == "tool_call")
    assert call["toolInput"] == {"location": {"city": "Paris", "country": "France"}, "sky": "clear"}


def test_context_is_passed_through_untouched_and_the_signature_kept(tmp_path: Path) -> None:
    from agents import RunContextWrapper

    seen: list[Any] = []

    def fetch_age(wrapper: RunContextWrapper[dict[str, str]], user: str) -> str:
        """Fetch a user's age."""
        seen.append(wrapper)
        return f"{user} is 47"

    bb = blackbox.session("record", out=tmp_path / "run.json")
    wrapped = bb.tool("fetch_age", fetch_age)
    context = RunContextWrapper(context={"name": "John"})
    assert wrapped(context, "John") == "John is 47" and seen == [context] and seen[0] is context
    import inspect

    assert inspect.signature(wrapped) == inspect.signature(fetch_age) and wrapped.__doc__ == "Fetch a user's age."
    bb.finish()
