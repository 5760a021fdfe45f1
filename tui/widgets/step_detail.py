"""The detail pane: the selected step as JSON, as a conversation (model requests) and its chain facts.

Only the visible tab is rendered; the others are rendered when they are opened, so moving through the
list stays quick even when payloads are large.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Static, TabbedContent, TabPane

from blackbox.format.cassette import Step
from blackbox.format.inert import inert

from ..mcp_view import mcp_content
from ..run import Run, format_time
from .conversation import ConversationView
from .payload_view import PayloadView

__all__ = ["StepDetail", "step_facts"]

TABS = ("tab-json", "tab-conversation", "tab-step")


def step_facts(run: Run, step: Step) -> Content:
    """id, time, hash, prevHash, and whether this step's link of the chain holds."""
    rows = [
        ("id", inert(step.id)),
        ("index", str(step.index)),
        ("type", inert(step.type)),
        ("time", f"{format_time(step.timestamp)}  ({step.timestamp} ms)"),
        ("hash", inert(step.hash)),
        ("prevHash", inert(step.prevHash) if step.prevHash else "null (first step)"),
    ]
    lines = [Content.assemble((f"{label:<9}", "$text-muted"), value) for label, value in rows]
    if run.chain_checked:
        broken = run.chain
        if broken is not None and broken.index == step.index:
            lines.append(Content.styled(f"chain    broken here: {inert(broken.reason)}", "bold $text-error"))
        elif broken is not None and step.index > broken.index:
            lines.append(Content.styled(f"chain    after the break at step {broken.index}", "$text-warning"))
        else:
            lines.append(Content.assemble(("chain    ", "$text-muted"), ("intact up to here", "$text-success")))
    return Content("\n").join(lines)


class StepDetail(Vertical):
    """Tabs for one step; `show` renders the active tab, other tabs render when activated."""

    DEFAULT_CSS = """
    StepDetail {
        & TabbedContent { height: 1fr; }
        & TabPane { padding: 0; }
        & #step-facts { padding: 0 1; background: $surface; }
    }
    """

    def __init__(self, run: Run, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.run = run
        self.step: Step | None = None
        self.needle = ""
        self._rendered: set[str] = set()

    def compose(self) -> ComposeResult:
        with TabbedContent(initial="tab-json"):
            with TabPane("JSON", id="tab-json"):
                yield PayloadView(id="payload")
            with TabPane("Conversation", id="tab-conversation"):
                yield ConversationView(id="conversation")
            with TabPane("Hash & time", id="tab-step"), VerticalScroll():
                yield Static(id="step-facts")

    @property
    def active_tab(self) -> str:
        return self.query_one(TabbedContent).active

    def show(self, step: Step | None, needle: str = "") -> None:
        """Show `step`; `needle` (the search text) is highlighted in its JSON and the view scrolled to it."""
        self.step = step
        self.needle = needle
        self._rendered.clear()
        self._render_tab(self.active_tab)

    def open_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab
        self._render_tab(tab)

    def refresh_facts(self) -> None:
        """Re-render the facts tab (the chain check finished)."""
        self._rendered.discard("tab-step")
        self._render_tab(self.active_tab)

    def toggle_fold(self) -> None:
        """Unfold (or fold again) long text: the conversation's long messages and the JSON's long strings."""
        self.query_one(ConversationView).toggle_fold()
        self.query_one(PayloadView).toggle_fold()

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id is not None:
            self._render_tab(event.pane.id)

    def _render_tab(self, tab: str) -> None:
        if tab in self._rendered:
            return
        self._rendered.add(tab)
        step = self.step
        if tab == "tab-json":
            self.query_one(PayloadView).show(step.payload if step else None, self.needle)
        elif tab == "tab-conversation":
            view = self.query_one(ConversationView)
            readable = (mcp_content(step) if step is not None and step.type == "tool_result"
                        and self.run.origin(step.index, step) is not None else None)
            if step is not None and step.type == "model_input":
                view.show(step)
            elif readable is not None:
                view.show_content(readable)
            else:
                view.show(None)
        elif tab == "tab-step":
            facts = step_facts(self.run, step) if step else Content("No step selected.")
            self.query_one("#step-facts", Static).update(facts)
