"""The browse screen sets redacted values apart: a mark a policy left is drawn in its own style."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from blackbox.format.cassette import load
from blackbox.format.writing import atomic_write, dumps
from blackbox.redaction import redact_cassette
from blackbox.redaction.apply import Redactor
from blackbox.redaction.policy import policy_from_table
from blackbox_tui.widgets.payload_view import REDACTED_STYLE
from tests.tui.conftest import INCIDENT, SIZE, make_app, settle

pytestmark = pytest.mark.anyio


async def test_redacted_values_are_marked_in_the_payload_view(tmp_path: Path) -> None:
    redactor = Redactor(policy_from_table({"detectors": [], "rules": [
        {"name": "telemetry", "action": "mask", "tool": "get_telemetry"}]}, "t"), b"k" * 16, "t")
    path = tmp_path / "redacted.json"
    atomic_write(path, dumps(redact_cassette(load(INCIDENT), redactor)))
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("j", "j", "j", "j", "j")
        await settle(pilot)
        content = app.screen.query_one("#payload-text", Static).render()
        plain = str(content)
        start = plain.index("[redacted:telemetry:")
        styled = [span for span in content.spans if span.start <= start < span.end and span.style == REDACTED_STYLE]
        assert styled, "the mark is drawn in the redacted style"
