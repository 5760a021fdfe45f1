"""`blackbox what-if` (and its older form `blackbox fork … --model-only`): the fork without the agent, Blackbox
continuing the conversation itself (`blackbox.fork.whatif`), from the command line."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from blackbox.cli._app import app
from blackbox.cli.fork_options import At, Live, Out, Parent, Script, SetValue
from blackbox.cli.intact import load_intact
from blackbox.cli.policy import PolicyOption, redactor_for
from blackbox.cli.render import EXIT_USAGE, console, err_console, fail
from blackbox.errors import BlackboxError, CassetteError, UsageError
from blackbox.fork.plan import check_out_path, load_script, parse_set_value
from blackbox.fork.whatif import NO_RESULT, LiveModel, ModelSource, ScriptedModel, choose_provider, what_if
from blackbox.format.canonical import decode_json
from blackbox.format.cassette import save
from blackbox.format.inert import inert
from blackbox.format.outcome import outcome
from blackbox.live.settings import default_trace_id
from blackbox.providers import PROVIDERS

__all__ = ["load_tool_results", "run_model_only", "what_if_command"]


#: The registered providers (`providers.PROVIDERS`), as `--provider` takes them.
_PROVIDER_NAMES = ", ".join(provider.name for provider in PROVIDERS)

@app.command("what-if", rich_help_panel="Run an agent")
def what_if_command(
    cassette: Parent = None,
    at: At = None,
    set_value: SetValue = None,
    out: Out = None,
    live: Live = False,
    script: Script = None,
    provider: Annotated[
        str | None, typer.Option("--provider", help="--live: the API to continue with, a provider name "
                                 f"({_PROVIDER_NAMES}; default: from the recorded model).")
    ] = None,
    model_name: Annotated[
        str | None, typer.Option("--model", help="--live: the model to ask when the cassette records none (an "
                                 "imported session).")
    ] = None,
    tool_results: Annotated[
        Path | None, typer.Option("--tool-results", help="Results for tool calls the parent never made, as "
                                  "{\"tool\": result}.", dir_okay=False)
    ] = None,
    policy: PolicyOption = None,
) -> None:
    """Fork a run at a tool result without the agent: Blackbox continues the conversation itself.

    The recorded history with the new value goes to the model: the provider's API (--live) or replies (--script).

    A tool call the parent made is answered with its recorded result.  To run the agent: [b]blackbox fork[/b].

    [b]Examples[/b]:

      blackbox what-if run.json --at 5 --set '{"temp": 35}' --out fork.json --script replies.json

      blackbox what-if session.json --at 12 --set '"2 passed"' --out fork.json --live --model claude-sonnet-4-5
    """
    raise typer.Exit(run_model_only(cassette, at, set_value, out, live=live, script=script, provider=provider,
                                    tool_results=tool_results, model_name=model_name, policy=policy))


def load_tool_results(path: Path) -> dict[str, list[Any]]:
    """`--tool-results FILE`: a JSON object mapping a tool name to the results to give, in order (one value
    is used for every call; `{"error": "…"}` is an error result)."""
    try:
        data = decode_json(path.read_bytes())
    except OSError as exc:
        raise UsageError(f"--tool-results {path}: cannot read it: {exc.strerror or exc}") from None
    except ValueError:
        raise UsageError(f"--tool-results {path} is not valid JSON; it must map tool names to results") from None
    if not isinstance(data, dict):
        raise UsageError(f'--tool-results {path} must be a JSON object, e.g. {{"search": {{"hits": []}}}}')
    return {name: value if isinstance(value, list) else [value] for name, value in data.items()}


def run_model_only(cassette: Path | None, at: int | None, set_value: str | None, out: Path | None, *,
                   live: bool, script: Path | None, provider: str | None, tool_results: Path | None,
                   model_name: str | None = None, policy: Path | None = None) -> int:
    """Fork without the agent: Blackbox sends the requests (live) or answers them (script); returns the exit code."""
    redactor = redactor_for(policy)  # a wrong policy is refused before anything is read
    if cassette is None or at is None or set_value is None or out is None:
        fail("what-if needs a cassette, --at N, --set VALUE and --out FILE", EXIT_USAGE)
    if live == (script is not None):
        fail("choose one continuation: --live (the provider's API) or --script replies.json", EXIT_USAGE)
    try:
        parent = load_intact(cassette, "fork")
        value = parse_set_value(set_value)
        check_out_path(out, cassette, script)
        model: ModelSource = ScriptedModel(load_script(script)) if script is not None else \
            LiveModel(choose_provider(parent, provider, model_name))
        given = load_tool_results(tool_results) if tool_results is not None else {}
    except UsageError as exc:
        fail(str(exc), EXIT_USAGE)
    except CassetteError as exc:  # no parent to fork: the question cannot be asked (as `blackbox fork`)
        fail(str(exc), EXIT_USAGE)

    def answer(call: dict[str, Any]) -> Any:
        queue = given.get(str(call.get("toolName")))
        if not queue:
            return NO_RESULT
        return queue.pop(0) if len(queue) > 1 else queue[0]

    try:
        fork, reason = what_if(parent, at, value, model, trace_id=default_trace_id(str(out)), tool_results=answer,
                               model_name=model_name, redactor=redactor)
        save(fork, out)
    except UsageError as exc:
        fail(str(exc), EXIT_USAGE)
    except BlackboxError as exc:
        fail(f"the what-if continuation stopped: {exc}; nothing was written")
    except OSError as exc:
        fail(f"cannot write the fork: {exc.strerror or exc} ({exc.filename}); choose another --out")
    result = outcome(fork)
    console().print(f"forked {out} without the agent: {len(fork.steps)} steps, {result.status} ({inert(reason)}); "
                    f"steps 0–{at - 1} are the parent's, step {at} is the new result", markup=False, highlight=False)
    if result.status == "incomplete":
        err_console().print("the fork is incomplete: give the missing tool results with --tool-results FILE",
                            markup=False, highlight=False)
    console().print(f"next: blackbox diff {cassette} {out}", markup=False, highlight=False)
    return 0
