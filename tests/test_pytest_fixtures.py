"""The plugin's overridable fixtures, as pytest-recording has them: `blackbox_cassette_dir` (where a test's
default cassette lives) and `blackbox_config` (defaults for the marker's options), overridden in a conftest or a
module of a real inner pytest run against the fake API."""

from __future__ import annotations

import pytest

from blackbox import load, verify
from tests.fakeapi import FakeAPI
from tests.test_pytest_plugin import AGENT_TEST, CASSETTE, api, offline, record, run, says

pytest_plugins = ["pytester", "tests.conftest_fakeapi"]
__all__ = ["api"]  # the fake API with the weather brain, a fixture of the plugin tests

ELSEWHERE = '''
from pathlib import Path
import pytest

@pytest.fixture
def blackbox_cassette_dir():
    return Path(__file__).parent / "recorded"
'''

ASKED_DIFFERENTLY = AGENT_TEST.replace('anthropic_agent(client, blackbox.tools({"get_weather": get_weather, '
                                       '"book_hotel": book_hotel}), PROMPT)',
                                       'anthropic_agent(client, blackbox.tools({"get_weather": get_weather, '
                                       '"book_hotel": book_hotel}), PROMPT + " (asked differently)")')
SEQUENCE_CONFIG = '''

@pytest.fixture
def blackbox_config():
    return {"match": "sequence"}
'''


def test_a_conftest_moves_the_cassettes(pytester: pytest.Pytester, api: FakeAPI,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makeconftest(ELSEWHERE)
    pytester.makepyfile(test_agent=AGENT_TEST)
    record(pytester, api)
    moved = pytester.path / "recorded" / "test_weather.json"
    assert verify(load(moved)).ok and not (pytester.path / CASSETTE).exists()
    offline(api, monkeypatch)
    result = run(pytester)
    result.assert_outcomes(passed=1)
    says(result, "cassettes: 1 replayed, 0 recorded, 0 missing, 0 diverged")
    assert api.requests == []


def test_a_module_s_config_sets_the_match_mode(pytester: pytest.Pytester, api: FakeAPI,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    assert ASKED_DIFFERENTLY != AGENT_TEST
    pytester.makepyfile(test_agent=AGENT_TEST)
    record(pytester, api)
    offline(api, monkeypatch)
    pytester.makepyfile(test_agent=ASKED_DIFFERENTLY)
    strict = run(pytester)
    strict.assert_outcomes(failed=1)  # the prompt changed: strict replay diverges
    pytester.makepyfile(test_agent=ASKED_DIFFERENTLY + SEQUENCE_CONFIG)
    result = run(pytester)
    result.assert_outcomes(passed=1)
    says(result, "cassettes: 1 replayed, 0 recorded, 0 missing, 0 diverged")
    assert api.requests == []


@pytest.mark.parametrize(("config", "words"), [
    ('{"speed": 2}', "[blackbox] the blackbox_config fixture has unknown keys speed; use match, allow_hosts"),
    ('{"match": "loose"}', "[blackbox] the blackbox_config fixture's match='loose': use strict or sequence"),
    ('["match"]', "[blackbox] the blackbox_config fixture returned a list; return a dict"),
])
def test_a_bad_config_is_one_line(pytester: pytest.Pytester, api: FakeAPI, config: str, words: str) -> None:
    pytester.makepyfile(test_agent=AGENT_TEST + SEQUENCE_CONFIG.replace('{"match": "sequence"}', config))
    result = run(pytester)
    result.assert_outcomes(errors=1)
    says(result, words)
    assert "Traceback" not in "\n".join(result.outlines) and api.requests == []
