"""`blackbox record | replay | fork … -- <command…>`: run an agent under a session (and `recover` a killed
recording)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Literal

import typer

from blackbox.cli._app import app
from blackbox.cli.cassettes import replay_summary
from blackbox.cli.demo_fork import DEMO_OPTIONS, demo_option
from blackbox.cli.fork_options import At, Live, Out, Parent, Script, SetValue
from blackbox.cli.intact import load_intact
from blackbox.cli.policy import PolicyOption, redactor_for
from blackbox.cli.render import EXIT_FAILURE, EXIT_USAGE, console, err_console, fail
from blackbox.cli.term import JSON_OUTPUT
from blackbox.errors import BlackboxUnsupportedError, CassetteError, UsageError
from blackbox.fork.agent_checks import check_agent_fork
from blackbox.fork.plan import check_fork_point, parse_set_value, same_file
from blackbox.format.inert import inert
from blackbox.format.outcome import outcome
from blackbox.format.verify import verify
from blackbox.format.writing import atomic_write, dumps
from blackbox.live.journal import journal_locked
from blackbox.live.launcher import check_out, run_agent
from blackbox.live.recorder import JOURNAL_SUFFIX, key_refusal, recovered_path
from blackbox.live.recorder import recover as recover_journal
from blackbox.live.report import SessionReport
from blackbox.live.settings import Match as MatchMode
from blackbox.live.settings import Pace as PaceMode
from blackbox.live.settings import Settings, match_mode, pace_mode

_RUN = "Run an agent"
_ADD_SESSION = (
    "import blackbox\n"
    "bb = blackbox.session()\n"
    "client = anthropic.Anthropic(http_client=bb.http_client())   # openai.OpenAI(http_client=...) alike\n"
    "# google-genai: genai.Client(http_options=bb.genai_http_options())\n"
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
    try:
        return pace_mode(pace, "--pace")
    except UsageError as exc:
        fail(str(exc), EXIT_USAGE)


def _check_match(match: str) -> MatchMode:
    try:
        return match_mode(match, "--match")
    except UsageError as exc:
        fail(str(exc), EXIT_USAGE)


def _launch(command: list[str], settings: Settings, *, placeholders: bool) -> tuple[int, SessionReport]:
    """Run the agent; without a session report say how to add one and fail."""
    from blackbox.live.redaction import active_redactor, policy_file

    try:  # the agent's session applies the policy the launcher found (checked here, before it starts)
        active_redactor(settings.policy)
        found = policy_file(settings.policy)
        settings.policy = str(found) if found is not None else None
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
    policy: PolicyOption = None,
) -> None:
    """Record an agent run into a cassette.

    [b]Example[/b]:

      blackbox record --out run.json -- python agent.py
    """
    if not command:
        fail("record needs the agent command after `--` (e.g. blackbox record --out run.json -- python "
             "agent.py); to see a recording without an agent, run `blackbox demo`", EXIT_USAGE)
    _check_out(out)
    settings = Settings(mode="record", out=str(out), trace_id=trace_id or None,
                        policy=str(policy) if policy is not None else None)
    code, report = _launch(command, settings, placeholders=False)
    steps, status = report.steps, inert(report.status)
    error = _report_error(report)
    if report.written:
        note = "" if report.finished else " (finish() was not called; the run was closed at exit)"
        _say(f"recorded {inert(str(out))}: {_steps(steps)}, {status}{note}")
        if error and report.status == "error":  # what Blackbox refused (a tool result it could not keep…)
            _say(f"error: {error}", err=True)
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
    policy: PolicyOption = None,
) -> None:
    """Replay an agent offline against a cassette, or show what it recorded when no command is given.

    [b]Examples[/b]:

      blackbox replay run.json -- python agent.py

      blackbox replay run.json --match sequence -- python agent.py

      blackbox replay run.json --pace recorded -- python agent.py

      blackbox replay run.json     (validate and print the recorded steps)

    Exit 0 replayed (or, without a command, verified); 1 diverged or not verified; 2 when the cassette is
    missing, not a cassette or tampered (the agent never starts); otherwise the agent's own exit code.
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
        load_intact(cassette, "replay against")
    except CassetteError as exc:  # nothing to replay against: the question cannot be asked (exit 2)
        fail(str(exc), EXIT_USAGE)
    settings = Settings(mode="replay", cassette=str(cassette), match=match_mode, pace=pace_mode,
                        policy=str(policy) if policy is not None else None)
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


#: `blackbox what-if`'s own options, which `fork` still accepts (hidden) with `--model-only`, its old form.
_WHATIF_ONLY = {"provider": "--provider", "model_name": "--model", "tool_results": "--tool-results"}


@app.command(rich_help_panel=_RUN)
def fork(
    cassette: Parent = None,
    command: Command = None,
    at: At = None,
    set_value: SetValue = None,
    out: Out = None,
    live: Live = False,
    script: Script = None,
    match: Match = "strict",
    pace: PaceOption = "fast",
    policy: PolicyOption = None,
    # The older forms, accepted and not shown: no agent command forks the demo (the TypeScript Blackbox's
    # `blackbox fork`), --model-only is `blackbox what-if`.
    trace: Annotated[Path | None, demo_option("trace", hidden=True)] = None,
    fork_index: Annotated[int | None, demo_option("fork_index", hidden=True)] = None,
    mutation_step: Annotated[int | None, demo_option("mutation_step", hidden=True)] = None,
    payload_json: Annotated[str | None, demo_option("payload_json", hidden=True)] = None,
    mode: Annotated[str | None, demo_option("mode", hidden=True)] = None,
    prompt: Annotated[str | None, demo_option("prompt", hidden=True)] = None,
    model_only: Annotated[bool, typer.Option("--model-only", hidden=True)] = False,
    provider: Annotated[str | None, typer.Option("--provider", hidden=True)] = None,
    model_name: Annotated[str | None, typer.Option("--model", hidden=True)] = None,
    tool_results: Annotated[Path | None, typer.Option("--tool-results", hidden=True, dir_okay=False)] = None,
) -> None:
    """Fork a run at a tool result with a different value, and continue live or from scripted replies.

    The agent runs again: replayed up to the fork point, the new value there, then the real API or replies.

    Without the agent: [b]blackbox what-if[/b].  The demo's fork: [b]blackbox demo fork[/b].

    [b]Examples[/b]:

      blackbox fork run.json --at 5 --set '{"temp": 35}' --out fork.json --script replies.json -- python agent.py

      blackbox fork run.json --at 5 --set @reading.json --out fork.json --live -- python agent.py
    """
    demo = {"trace": trace, "fork_index": fork_index, "mutation_step": mutation_step,
            "payload_json": payload_json, "mode": mode, "prompt": prompt}
    whatif = {"provider": provider, "model_name": model_name, "tool_results": tool_results}
    if model_only:
        _refuse(demo, "the what-if (fork --model-only)")
        if command:
            fail("the what-if (fork --model-only) runs no agent: drop the command after `--`", EXIT_USAGE)
        from blackbox.cli.whatif import run_model_only

        err_console().print("note: `blackbox fork --model-only` is now `blackbox what-if` (the same options); "
                            "this form keeps working", markup=False, highlight=False)
        raise typer.Exit(run_model_only(cassette, at, set_value, out, live=live, script=script, provider=provider,
                                        tool_results=tool_results, model_name=model_name, policy=policy))
    _refuse(whatif, "the agent's fork")
    if not command:
        if at is not None or set_value is not None or live or script is not None:
            fail("the agent's fork needs its command after `--` (blackbox fork run.json --at N --set VALUE --out "
                 "FILE --live -- python agent.py); without the agent: blackbox what-if", EXIT_USAGE)
        from blackbox.cli.demo_fork import run_demo_fork

        run_demo_fork(trace, out, fork_index, mutation_step, payload_json, mode or "tool-result", prompt,
                      policy=policy, cassette=cassette)
        return
    _refuse(demo, "the agent's fork")
    _fork_agent(cassette, command, at, set_value, out, live=live, script=script, match=match, pace=pace,
                policy=policy)


def _fork_agent(cassette: Path | None, command: list[str], at: int | None, set_value: str | None,
                out: Path | None, *, live: bool, script: Path | None, match: str, pace: str,
                policy: Path | None = None) -> None:
    """`blackbox fork … -- <agent>`: check what can be checked, run the agent in fork mode, say what it wrote."""
    match_mode = _check_match(match)
    pace_mode = _check_pace(pace)
    if cassette is None or at is None or set_value is None or out is None:
        fail("fork needs a cassette, --at N, --set VALUE and --out FILE before `--`", EXIT_USAGE)
    if live == (script is not None):
        fail("choose one continuation: --live (the real API) or --script replies.json", EXIT_USAGE)
    settings = _fork_settings(cassette, at, set_value, out, script, match_mode, pace_mode)
    settings.policy = str(policy) if policy is not None else None  # resolved and checked by _launch
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


#: Each option of another kind of fork, with the command it belongs to.
_OWNED = {**{name: (flag, "blackbox demo fork") for name, flag, _ in DEMO_OPTIONS},
          **{name: (flag, "blackbox what-if") for name, flag in _WHATIF_ONLY.items()}}


def _refuse(options: Mapping[str, object], here: str) -> None:
    """One line for an option of another kind of fork, naming the command it belongs to."""
    for name, value in options.items():
        if value is not None:
            flag, owner = _OWNED[name]
            fail(f"{flag} is not an option of {here}; it belongs to `{owner}`", EXIT_USAGE)


def _fork_settings(cassette: Path, at: int, set_value: str, out: Path, script: Path | None,
                   match: MatchMode, pace: PaceMode) -> Settings:
    """Validate everything that can be checked before the agent starts (the UI's fork form runs the same checks:
    `fork.agent_checks`)."""
    try:
        parent = load_intact(cassette, "fork")
        check_fork_point(parent, at)
        value = parse_set_value(set_value)
        check_agent_fork(parent, cassette, at, out, script)
    except (UsageError, BlackboxUnsupportedError) as exc:
        fail(str(exc), EXIT_USAGE)
    except CassetteError as exc:  # no parent to fork: the question cannot be asked
        fail(str(exc), EXIT_USAGE)
    return Settings(mode="fork", cassette=str(cassette), out=str(out), fork_at=at, fork_set=value,
                    has_fork_set=True, continue_with="script" if script is not None else "live",
                    script=str(script) if script is not None else None, match=match, pace=pace)


@app.command(rich_help_panel=_RUN)
def recover(
    journal: Annotated[Path, typer.Argument(help="The journal a killed recording left (<out>.blackbox-journal).",
                                            dir_okay=False)],
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Where to write the cassette (default: beside the journal, "
                                  "<name>.recovered.json).", dir_okay=False)
    ] = None,
    policy: PolicyOption = None,
) -> None:
    """Turn the journal of a recording that was killed (even with kill -9) into a verified, incomplete cassette.

    A new `blackbox record` to the same file does this by itself before it starts.

    [b]Example[/b]:

      blackbox recover run.json.blackbox-journal
    """
    if journal_locked(journal):
        fail(f"{inert(str(journal))} is the journal of a recording that is still running; let it finish (or "
             "stop it), then recover")
    redactor = redactor_for(policy)  # a journal left without the policy is redacted before it is written
    try:
        cassette = recover_journal(journal, redactor)
    except CassetteError as exc:  # no journal to recover from: the question cannot be asked
        fail(f"{exc}; give the .blackbox-journal file a recording left beside its --out", EXIT_USAGE)
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
    data = dumps(cassette)
    leak = key_refusal(cassette, data)
    if leak is not None:
        fail(f"the recovered run cannot be written: {leak}; remove it from the journal first; nothing was written")
    atomic_write(target, data)
    journal.unlink(missing_ok=True)
    _say(f"recovered {inert(str(target))}: {_steps(len(cassette.steps))}, {outcome(cassette).status}")
