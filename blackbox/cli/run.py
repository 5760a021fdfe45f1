"""`blackbox record | replay | fork … -- <command…>`: run an agent under a session."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal, cast

import typer

from blackbox.cli._app import app
from blackbox.cli.cassettes import replay_summary
from blackbox.cli.render import EXIT_FAILURE, EXIT_USAGE, console, err_console, fail
from blackbox.cli.term import JSON_OUTPUT
from blackbox.demo.fork import (
    DEFAULT_FORK_INDEX,
    DEFAULT_MUTATION_STEP,
    DEFAULT_PAYLOAD,
    DEFAULT_TRACE,
    default_out,
    demo_fork,
    parse_payload_json,
)
from blackbox.errors import BlackboxError, BlackboxUnsupportedError, CassetteError, UsageError
from blackbox.fork.engine import thinking_refusal, uses_thinking
from blackbox.fork.plan import check_fork_point, check_out_path, load_script, parse_set_value, same_file
from blackbox.format.cassette import Cassette, load
from blackbox.format.inert import inert
from blackbox.format.outcome import outcome
from blackbox.format.verify import verify
from blackbox.format.writing import atomic_write, dumps
from blackbox.live.journal import journal_locked
from blackbox.live.launcher import check_out, run_agent
from blackbox.live.recorder import JOURNAL_SUFFIX, recovered_path
from blackbox.live.recorder import recover as recover_journal
from blackbox.live.report import SessionReport
from blackbox.live.settings import Match as MatchMode
from blackbox.live.settings import Pace as PaceMode
from blackbox.live.settings import Settings

_RUN = "Run an agent"
_ADD_SESSION = (
    "import blackbox\n"
    "bb = blackbox.session()\n"
    "client = anthropic.Anthropic(http_client=bb.http_client())   # or openai.OpenAI(...)\n"
    "tools = bb.tools({...}); ...; bb.finish()"
)

Command = Annotated[list[str] | None, typer.Argument(help="The agent command, after `--`.", show_default=False)]
Match = Annotated[
    str, typer.Option("--match", help="strict: requests must equal the recording; sequence: only the order of "
                      "calls and tools must.", case_sensitive=False)
]


PaceOption = Annotated[
    str, typer.Option("--pace", help="fast: replayed streams are sent at once; recorded: each stream is spread "
                                     "over the recorded call's duration (for agents whose UI or timeouts "
                                     "depend on it).")]


def _check_pace(pace: str) -> PaceMode:
    value = pace.lower()
    if value not in ("fast", "recorded"):
        fail(f"--pace must be fast or recorded, not {pace!r}", EXIT_USAGE)
    return cast(PaceMode, value)


def _check_match(match: str) -> MatchMode:
    value = match.lower()
    if value not in ("strict", "sequence"):
        fail(f"--match must be strict or sequence, not {match!r}", EXIT_USAGE)
    return cast(MatchMode, value)


def _launch(command: list[str], settings: Settings, *, placeholders: bool) -> tuple[int, SessionReport]:
    """Run the agent; without a session report say how to add one and fail."""
    try:
        result = run_agent(command, settings, placeholders=placeholders)
    except UsageError as exc:
        fail(str(exc), EXIT_USAGE)
    if result.report is None and result.exit_code != 0:
        why = f" — its last error line: {inert(result.last_error)}" if result.last_error else ""
        hint = ("; install the SDKs the examples use: pip install 'blackbox-agent[examples]'"
                if "ModuleNotFoundError" in result.last_error else "")
        err_console().print(f"error: the agent exited with status {result.exit_code} before starting a Blackbox "
                            f"session{why}{hint}", markup=False, highlight=False)
        raise typer.Exit(result.exit_code)
    if result.report is None:
        err_console().print(
            "error: the command ran no Blackbox session, so nothing was recorded or checked. "
            "Add one to the agent:\n" + _ADD_SESSION,
            markup=False, highlight=False,
        )
        raise typer.Exit(result.exit_code or EXIT_FAILURE)
    _check_settings(result.report, settings)
    return result.exit_code, result.report


_CHECKED: tuple[Literal["mode", "out", "cassette"], ...] = ("mode", "out", "cassette")


def _check_settings(report: SessionReport, settings: Settings) -> None:
    """A session that overrode what the CLI asked would make the one-line result a lie."""
    for key in _CHECKED:
        asked, used = getattr(settings, key), getattr(report.settings, key)
        if asked is None or used is None:
            continue
        same = Path(asked).resolve() == Path(used).resolve() if key != "mode" else asked == used
        if not same:
            fail(f"the agent's session used {key} {used!r} but the command asked for {asked!r}; remove "
                 f"the explicit {key}= argument from blackbox.live.session(...) so the CLI can set it")


def _report_error(report: SessionReport) -> str | None:
    """The session's error, inert; its own line breaks kept (a divergence lists recorded and actual below)."""
    return inert(str(report.error), keep_newlines=True) if report.error else None


def _say(text: str, *, err: bool = False) -> None:
    """One line of the launcher's result; paths and ids in it are already made inert."""
    (err_console() if err else console()).print(text, markup=False, highlight=False)


def _journal_note(report: SessionReport) -> None:
    """A run recorded in memory after its crash journal failed: say so, and that the cassette was written."""
    if report.journalError:
        written = "the cassette was written" if report.written else "the cassette was not written"
        _say(f"note: the journal could not be written: {inert(report.journalError)}; {written}", err=True)


def _steps(n: int) -> str:
    return "1 step" if n == 1 else f"{n} steps"


def _key_note(report: SessionReport) -> None:
    """A run that failed for want of a valid key says so, with the remedy, instead of a bare "1 step, error":
    a model call the provider refused (401/403), or no call at all while neither key variable is set."""
    if report.status == "success":
        return
    from blackbox.fork.whatif import key_problem
    from blackbox.format.secrets import KEY_VARIABLES

    names = " / ".join(KEY_VARIABLES)
    if report.authStatus is not None:
        _say(f"note: a model call was refused with HTTP {report.authStatus} (authentication): the API key is "
             f"missing or wrong; check {names} and record again", err=True)
    elif report.steps <= 1 and key_problem(None) is not None:
        _say(f"note: no model call was made and no API key is set ({names}); export the key of the API the "
             "agent calls and record again", err=True)


def _check_out(out: Path) -> None:
    try:
        check_out(str(out))
    except UsageError as exc:
        fail(str(exc), EXIT_USAGE)


@app.command(rich_help_panel=_RUN)
def record(
    out: Annotated[Path, typer.Option("--out", "-o", help="Where to write the cassette.", dir_okay=False)],
    command: Command = None,
    trace_id: Annotated[str | None, typer.Option("--id", help="Trace id (default: the --out name).")] = None,
) -> None:
    """Record an agent run into a cassette.

    [b]Example[/b]:

      blackbox record --out run.json -- python agent.py
    """
    if not command:
        fail("record needs the agent command after `--` (e.g. blackbox record --out run.json -- python "
             "agent.py); to see a recording without an agent, run `blackbox demo`", EXIT_USAGE)
    _check_out(out)
    settings = Settings(mode="record", out=str(out), trace_id=trace_id or None)
    code, report = _launch(command, settings, placeholders=False)
    steps, status = report.steps, inert(report.status)
    error = _report_error(report)
    if report.written:
        note = "" if report.finished else " (finish() was not called; the run was closed at exit)"
        _say(f"recorded {inert(str(out))}: {_steps(steps)}, {status}{note}")
        _journal_note(report)
        _key_note(report)
    else:
        _say(f"error: nothing was recorded: {error or 'the session wrote no cassette'}", err=True)
        _journal_note(report)
        _key_note(report)
        raise typer.Exit(code or EXIT_FAILURE)
    raise typer.Exit(code)


@app.command(rich_help_panel=_RUN)
def replay(
    cassette: Annotated[Path, typer.Argument(help="The recorded cassette.", dir_okay=False)],
    command: Command = None,
    match: Match = "strict",
    pace: PaceOption = "fast",
    json_out: Annotated[bool, typer.Option("--json", help="Without a command: print the check and the recorded "
                                           "steps as one JSON document.")] = False,
) -> None:
    """Replay an agent offline against a cassette, or show what it recorded when no command is given.

    [b]Examples[/b]:

      blackbox replay run.json -- python agent.py

      blackbox replay run.json --match sequence -- python agent.py

      blackbox replay run.json --pace recorded -- python agent.py

      blackbox replay run.json     (validate and print the recorded steps)

    Exit 0 replayed (or, without a command, verified); 1 diverged or not verified; 2 when the cassette is
    missing or not a cassette (the agent never starts); otherwise the agent's own exit code.
    """
    JSON_OUTPUT.begin(json_out)
    match_mode = _check_match(match)
    pace_mode = _check_pace(pace)
    if not command:
        replay_summary(cassette, json_out)
        return
    if json_out:
        fail("--json describes a cassette without a command; drop --json to replay the agent", EXIT_USAGE)
    try:
        load(cassette)
    except CassetteError as exc:  # nothing to replay against: the question cannot be asked (exit 2)
        fail(str(exc), EXIT_USAGE)
    settings = Settings(mode="replay", cassette=str(cassette), match=match_mode, pace=pace_mode)
    code, report = _launch(command, settings, placeholders=True)
    error = _report_error(report)
    shown = inert(str(cassette))
    if error or report.status == "diverged":
        _say(f"FAIL {shown}: {error or 'the replay diverged'}", err=True)
        raise typer.Exit(code or EXIT_FAILURE)
    if code != 0:
        _say(f"FAIL {shown}: the agent exited with code {code}", err=True)
        raise typer.Exit(code)
    steps = report.steps
    _say(f"PASS {shown}: {_steps(steps)} replayed from the cassette, no network calls")


_DEMO = "Built-in demo fork (no agent command)"
_WHATIF = "What-if without the agent (--model-only)"


@app.command(rich_help_panel=_RUN)
def fork(
    cassette: Annotated[Path | None, typer.Argument(help="The parent cassette.", dir_okay=False)] = None,
    command: Command = None,
    at: Annotated[int | None, typer.Option("--at", help="The tool_result step to fork at.")] = None,
    set_value: Annotated[
        str | None, typer.Option("--set", help="The new tool result: JSON (quote strings) or @file.")
    ] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Where to write the fork.", dir_okay=False)] = None,
    live: Annotated[bool, typer.Option("--live", help="Continue against the real API after the fork.")] = False,
    script: Annotated[
        Path | None, typer.Option("--script", help="Continue from a JSON array of model replies.", dir_okay=False)
    ] = None,
    match: Match = "strict",
    pace: PaceOption = "fast",
    trace: Annotated[
        Path | None, typer.Option(
            "--trace", help="Demo: the cassette to fork (default traces/example-trace.json).", rich_help_panel=_DEMO
        )
    ] = None,
    fork_index: Annotated[
        int | None, typer.Option(
            "--fork-index", help="Demo: where the fork continues (default 4).", rich_help_panel=_DEMO
        )
    ] = None,
    mutation_step: Annotated[
        int | None, typer.Option(
            "--mutation-step", help="Demo: the tool_result step to change (default 3).", rich_help_panel=_DEMO
        )
    ] = None,
    payload_json: Annotated[
        str | None, typer.Option(
            "--payload-json", help="Demo: the new tool result as JSON (default: no hotels).", rich_help_panel=_DEMO
        )
    ] = None,
    mode: Annotated[
        str, typer.Option(
            "--mode", help="Demo: change a tool result, or the prompt.", rich_help_panel=_DEMO
        )
    ] = "tool-result",
    prompt: Annotated[
        str | None, typer.Option(
            "--prompt", help="Demo: the new prompt (--mode prompt).", rich_help_panel=_DEMO
        )
    ] = None,
    model_only: Annotated[
        bool, typer.Option("--model-only", help="No agent: Blackbox continues the conversation itself "
                           "(--live sends it to the provider, --script answers it).", rich_help_panel=_WHATIF)
    ] = False,
    provider: Annotated[
        str | None, typer.Option("--provider", help="--model-only --live: the API to continue with, a provider "
                                 "name (anthropic, openai, responses, azure, …; default: from the recorded model).",
                                 rich_help_panel=_WHATIF)
    ] = None,
    model_name: Annotated[
        str | None, typer.Option("--model", help="--model-only --live: the model to ask when the cassette "
                                 "records none (an imported session).", rich_help_panel=_WHATIF)
    ] = None,
    tool_results: Annotated[
        Path | None, typer.Option("--tool-results", help="--model-only: results for tool calls the parent never "
                                  "made, as {\"tool\": result}.", dir_okay=False, rich_help_panel=_WHATIF)
    ] = None,
) -> None:
    """Fork a run at a tool result with a different value, and continue live or from scripted replies.

    [b]Examples[/b]:

      blackbox fork run.json --at 5 --set '{"temp": 35}' --out fork.json --script replies.json -- python agent.py

      blackbox fork run.json --at 5 --set @reading.json --out fork.json --live -- python agent.py

      blackbox fork run.json --at 5 --set '{"temp": 35}' --out fork.json --model-only --script replies.json

      blackbox fork --trace traces/example-trace.json --out traces/fork.json     (the built-in demo)
    """
    match_mode = _check_match(match)
    pace_mode = _check_pace(pace)
    if model_only:
        from blackbox.cli.whatif import run_model_only

        raise typer.Exit(run_model_only(cassette, at, set_value, out, live=live, script=script, provider=provider,
                                        tool_results=tool_results, model_name=model_name))
    if not command:
        _demo_fork(trace or cassette, out, fork_index, mutation_step, payload_json, mode, prompt)
        return
    if cassette is None or at is None or set_value is None or out is None:
        fail("fork needs a cassette, --at N, --set VALUE and --out FILE before `--`", EXIT_USAGE)
    if live == (script is not None):
        fail("choose one continuation: --live (the real API) or --script replies.json", EXIT_USAGE)
    settings = _fork_settings(cassette, at, set_value, out, script, match_mode, pace_mode)
    _check_out(out)
    code, report = _launch(command, settings, placeholders=script is not None)
    error = _report_error(report)
    shown = inert(str(out))
    if error or not report.written:
        kept = f"; the run so far was written to {shown}" if report.written else ""
        _say(f"error: the fork failed: {error or 'no cassette was written'}{kept}", err=True)
        _journal_note(report)
        raise typer.Exit(code or EXIT_FAILURE)
    steps, status = report.steps, inert(report.status)
    _say(f"forked {shown}: {_steps(steps)}, {status}; steps 0–{at - 1} are the parent's, step {at} is the new "
         "result")
    _journal_note(report)
    _say(f"next: blackbox diff {inert(str(cassette))} {shown}")
    raise typer.Exit(code)


def _fork_settings(cassette: Path, at: int, set_value: str, out: Path, script: Path | None,
                   match: MatchMode, pace: PaceMode) -> Settings:
    """Validate everything that can be checked before the agent starts."""
    try:
        parent = load(cassette)
        check_fork_point(parent, at)
        value = parse_set_value(set_value)
        check_out_path(out, cassette, script)
        if script is not None:
            load_script(script)
        elif uses_thinking(parent):
            raise thinking_refusal()
        else:
            _check_live_key(parent)
    except (UsageError, BlackboxUnsupportedError) as exc:
        fail(str(exc), EXIT_USAGE)
    except CassetteError as exc:  # no parent to fork: the question cannot be asked
        fail(str(exc), EXIT_USAGE)
    return Settings(mode="fork", cassette=str(cassette), out=str(out), fork_at=at, fork_set=value,
                    has_fork_set=True, continue_with="script" if script is not None else "live",
                    script=str(script) if script is not None else None, match=match, pace=pace)


def _check_live_key(parent: Cassette) -> None:
    """A live fork's agent sends its requests to the provider the run recorded: without that provider's key
    it would fail at its first request, and the fork would seem to blame the agent.  Say so before it runs."""
    from blackbox.fork.whatif import key_problem, recorded_model
    from blackbox.providers import for_model

    found = for_model(recorded_model(parent))
    problem = key_problem(found.name if found is not None else None)
    if problem is not None:
        raise UsageError(f"{problem}; export it, or continue from scripted replies (--script replies.json)")


def _demo_fork(trace: Path | None, out: Path | None, fork_index: int | None, mutation_step: int | None,
               payload_json: str | None, mode: str, prompt: str | None) -> None:
    """`blackbox fork` without a command forks the built-in demo's cassette offline, then says what it wrote.

    Defaults as in the original: --trace traces/example-trace.json, --out traces/<parent id>-fork.json,
    --fork-index 4, --mutation-step 3, --payload-json the no-hotels result, --mode tool-result.
    """
    parent_path = trace or DEFAULT_TRACE
    try:
        payload = DEFAULT_PAYLOAD if payload_json is None else parse_payload_json(payload_json)
        child = demo_fork(parent_path, out, fork_index=fork_index, mutation_step=mutation_step,
                          payload=payload, mode=mode, prompt=prompt)
    except UsageError as exc:
        fail(str(exc), EXIT_USAGE)
    except BlackboxError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write the fork: {exc.strerror or exc} ({exc.filename}); choose another --out")
    at = DEFAULT_FORK_INDEX if fork_index is None else fork_index
    written = out or default_out(child.parentId or "")
    changed = at if mode == "prompt" else DEFAULT_MUTATION_STEP if mutation_step is None else mutation_step
    lines = [
        ("Parent:", str(parent_path)),
        ("Mode:", mode),
        ("Fork index:", str(at)),
        ("Changed step:", str(changed)),
        ("Child:", f"{written} ({len(child.steps)} steps, id {child.id})"),
        ("Outcome:", outcome(child).describe()),
    ]
    out_console = console()
    for label, value in lines:
        out_console.print(f"{label:<14}{inert(value)}", markup=False, highlight=False)
    out_console.print(f"next: blackbox diff {inert(str(parent_path))} {inert(str(written))}", markup=False,
                      highlight=False)


@app.command(rich_help_panel=_RUN)
def recover(
    journal: Annotated[Path, typer.Argument(help="The journal a killed recording left (<out>.blackbox-journal).",
                                            dir_okay=False)],
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Where to write the cassette (default: beside the journal, "
                                  "<name>.recovered.json).", dir_okay=False)
    ] = None,
) -> None:
    """Turn the journal of a recording that was killed (even with kill -9) into a verified, incomplete cassette.

    A new `blackbox record` to the same file does this by itself before it starts.

    [b]Example[/b]:

      blackbox recover run.json.blackbox-journal
    """
    if journal_locked(journal):
        fail(f"{inert(str(journal))} is the journal of a recording that is still running; let it finish (or "
             "stop it), then recover")
    try:
        cassette = recover_journal(journal)
    except CassetteError as exc:
        fail(f"{exc}; give the .blackbox-journal file a recording left beside its --out")
    if not cassette.steps:
        fail(f"{inert(str(journal))} holds no complete step; nothing to recover")
    if out is not None and same_file(out, journal):
        fail("--out must differ from the journal; the journal is removed once the cassette is written", EXIT_USAGE)
    target = out or recovered_path(journal.with_name(journal.name.removesuffix(JOURNAL_SUFFIX)))
    report = verify(cassette)
    if not report.ok:
        failure = report.failure
        fail(f"the recovered run does not verify ({failure.name if failure else '?'}: "
             f"{failure.detail if failure else ''}); nothing was written")
    atomic_write(target, dumps(cassette))
    journal.unlink(missing_ok=True)
    _say(f"recovered {inert(str(target))}: {_steps(len(cassette.steps))}, {outcome(cassette).status}")
