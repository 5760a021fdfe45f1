"""A line-rendered list with a row cursor: only the visible rows are ever rendered.

The step list and the diff table have thousands of rows; a widget per row (ListView) or a fully built
DataTable would cost time and memory proportional to the file.  Subclasses say how many rows there are and
how to draw one row as segments; this class owns the cursor, the keys, the mouse and the scrolling.
"""

from __future__ import annotations

from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ..messages import RowMoved

__all__ = ["KEEP", "KEEP_STYLE", "LineTable"]

# A segment whose style carries this meta key keeps its colours on the cursor row (a search match).
KEEP = "line-table-keep"
KEEP_STYLE = Style(meta={KEEP: True})


class LineTable(ScrollView, can_focus=True):
    """A scrollable list of one-line rows with a highlighted cursor row."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor_up", "Up", show=False, id="table.up"),
        Binding("down,j", "cursor_down", "Down", show=False, id="table.down"),
        Binding("home,g", "cursor_first", "First", show=False, id="table.first"),
        Binding("end,G", "cursor_last", "Last", show=False, id="table.last"),
        Binding("pageup", "page_up_rows", "Page up", show=False, id="table.page_up"),
        Binding("pagedown", "page_down_rows", "Page down", show=False, id="table.page_down"),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {"line-table--cursor", "line-table--muted"}

    DEFAULT_CSS = """
    LineTable {
        background: $surface;
        overflow-x: hidden;
        scrollbar-gutter: stable;
        & > .line-table--cursor { background: $boost; text-style: bold; }
        &:focus > .line-table--cursor { background: $accent 30%; }
        & > .line-table--muted { color: $text-muted; }
    }
    """

    cursor: reactive[int] = reactive(0, always_update=True, init=False)

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._styles: dict[str, Style] = {}
        self.follow_end = False  # G was pressed: the cursor stays on the last row as rows are added

    # -- what subclasses provide ---------------------------------------------------------------------------

    @property
    def row_count(self) -> int:
        raise NotImplementedError

    def render_row(self, row: int, width: int) -> list[Segment]:
        """The segments of one row (without the cursor highlight)."""
        raise NotImplementedError

    # -- styles --------------------------------------------------------------------------------------------

    def style_of(self, component: str) -> Style:
        """A component class's colours on top of the widget's, cached until the theme changes."""
        style = self._styles.get(component)
        if style is None:
            style = self._styles[component] = self.rich_style + self.get_component_rich_style(component)
        return style

    def notify_style_update(self) -> None:
        self._styles.clear()
        super().notify_style_update()

    # -- rows ----------------------------------------------------------------------------------------------

    def rows_changed(self, cursor: int = 0) -> None:
        """Call after the number or content of rows changed."""
        self.virtual_size = Size(self.size.width, self.row_count)
        self.move_to(cursor)
        self.refresh()

    def rows_added(self) -> None:
        """Call after rows were added at the end (a file still being read): the cursor and the view stay
        where they are, unless the cursor was sent to the end (G), which it keeps following."""
        self.virtual_size = Size(self.size.width, self.row_count)
        if self.follow_end:
            self.move_to(self.row_count - 1, follow_end=True)
        self.refresh()

    def on_resize(self, _: events.Resize) -> None:
        """Keep the cursor row in view when the table shrinks (a header that grew a line above it)."""
        self.virtual_size = Size(self.size.width, self.row_count)
        if self.row_count:  # once the new size is laid out
            self.call_after_refresh(self.scroll_to_region, Region(0, self.cursor, 1, 1), animate=False, force=True)

    @property
    def content_width(self) -> int:
        """The width rows are drawn in (the widget less its scrollbar gutter)."""
        return self.scrollable_content_region.width

    def render_line(self, y: int) -> Strip:
        width = self.content_width
        row = y + int(self.scroll_y)
        if row >= self.row_count:
            return Strip.blank(width, self.rich_style)
        segments = self.render_row(row, width)
        if row == self.cursor:
            highlight = self.get_component_rich_style("line-table--cursor")
            segments = [Segment(text, style if style is not None and style.meta.get(KEEP) else
                                (style or Style()) + highlight) for text, style, _ in segments]
            pad = self.style_of("line-table--cursor")
        else:
            pad = self.rich_style
        return Strip(segments).crop_extend(0, width, pad)

    # -- the cursor ----------------------------------------------------------------------------------------

    def move_to(self, row: int, *, center: bool = False, follow_end: bool = False) -> None:
        """Put the cursor on `row` (clamped) and scroll it into view; `follow_end`: and keep it on the last
        row as rows are added."""
        self.follow_end = follow_end
        count = self.row_count
        row = max(0, min(row, count - 1)) if count else 0
        previous = self.cursor
        self.cursor = row
        self.refresh_line(previous)
        self.refresh_line(row)
        if center:
            self.scroll_to(y=max(0, row - self.size.height // 2), animate=False, immediate=True, force=True)
        else:
            self.scroll_to_region(Region(0, row, 1, 1), animate=False, force=True, immediate=True)

    def watch_cursor(self, row: int) -> None:
        self.post_message(RowMoved(self, row))

    def action_cursor_up(self) -> None:
        self.move_to(self.cursor - 1)

    def action_cursor_down(self) -> None:
        self.move_to(self.cursor + 1)

    def action_cursor_first(self) -> None:
        self.move_to(0)

    def action_cursor_last(self) -> None:
        self.move_to(self.row_count - 1, follow_end=True)

    def action_page_up_rows(self) -> None:
        self.move_to(self.cursor - max(1, self.size.height - 1))

    def action_page_down_rows(self) -> None:
        self.move_to(self.cursor + max(1, self.size.height - 1))

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is not None:
            self.move_to(offset.y + int(self.scroll_y))
