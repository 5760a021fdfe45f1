"""The pytest plugin's age limit, driven by `pytester`: a real SDK agent recorded against the fake API, its
cassette aged (its unhashed `made.at`, or `createdAt` when it has no `made`), then replayed offline under
`blackbox_max_age` — a warning by default, a failure with `fail`, nothing for a young cassette, one usage line for
a bad age."""

from __future__ import annotations

import msgspec
import pytest

from blackbox.format.cassette import load, save
from blackbox.format.verify import verify
from tests.fakeapi import FakeAPI
from tests.test_pytest_plugin import AGENT_TEST, CASSETTE, api, offline, record, run  # noqa: F401 (api: a fixture)

pytest_plugins = ["pytester", "tests.conftest_fakeapi"]

DAY = 86_400_000


def recorded_days_ago(pytester: pytest.Pytester, fake: FakeAPI, days: float, *, keep_made: bool = True) -> None:
    """Record the agent's cassette, then make it `days` old: `made.at` moved back (or, without `made`,
    `createdAt`), neither hashed, so it still verifies and replays."""
    pytester.makepyfile(test_agent=AGENT_TEST)
    record(pytester, fake)
    path = pytester.path / CASSETTE
    cassette = load(path)
    assert cassette.made is not None
    if keep_made:
        cassette.made = msgspec.structs.replace(cassette.made, at=int(cassette.made.at - days * DAY))
    else:
        cassette.made = None
        cassette.createdAt = int(cassette.createdAt - days * DAY)
    save(cassette, path)
    assert verify(load(path)).ok


def test_an_old_cassette_warns_by_default(pytester: pytest.Pytester, api: FakeAPI,  # noqa: F811
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    recorded_days_ago(pytester, api, 40)
    offline(api, monkeypatch)
    pytester.makeini("[pytest]\nblackbox_max_age = 30d\n")
    result = run(pytester, "-W", "default")
    result.assert_outcomes(passed=1)
    text = "\n".join(result.outlines)
    assert "StaleCassetteWarning" in text
    assert "test_weather.json is 40.0 days old (made.at), older than blackbox_max_age = 30d" in text
    assert "re-record it: pytest" in text and "--blackbox-record=all" in text
    assert api.requests == []  # still replayed offline


def test_fail_fails_the_test_naming_the_age(pytester: pytest.Pytester, api: FakeAPI,  # noqa: F811
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    recorded_days_ago(pytester, api, 10, keep_made=False)
    offline(api, monkeypatch)
    result = run(pytester, "--blackbox-max-age", "1w", "--blackbox-max-age-action", "fail")
    result.assert_outcomes(failed=1)
    text = "\n".join(result.outlines)
    assert "is 10.0 days old (createdAt), older than blackbox_max_age = 1w" in text
    assert "Traceback" not in text


def test_the_command_line_beats_the_ini_and_a_young_cassette_passes(
        pytester: pytest.Pytester, api: FakeAPI, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    recorded_days_ago(pytester, api, 3)
    offline(api, monkeypatch)
    pytester.makeini("[pytest]\nblackbox_max_age = 1d\nblackbox_max_age_action = fail\n")
    run(pytester, "--blackbox-max-age", "4d").assert_outcomes(passed=1)
    run(pytester).assert_outcomes(failed=1)  # the ini's 1d: three days is too old


@pytest.mark.parametrize(("args", "says"), [
    (("--blackbox-max-age", "soon"), "blackbox_max_age: 'soon' is not an age"),
    (("--blackbox-max-age", "0d"), "is not an age"),
    (("-o", "blackbox_max_age_action=explode", "--blackbox-max-age", "3d"), "blackbox_max_age_action"),
])
def test_a_bad_limit_is_one_usage_line(pytester: pytest.Pytester, args: tuple[str, ...], says: str) -> None:
    pytester.makepyfile(test_nothing="def test_nothing():\n    pass\n")
    result = run(pytester, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.errlines if line.strip()]
    assert len(errors) == 1 and says in errors[0]
