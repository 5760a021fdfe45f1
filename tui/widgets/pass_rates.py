"""The sweep screen's pass-rate table: one row per variant (`blackbox.many.folder.summarize`'s rows), fitted to
the width: the variant's name takes the room the figures leave, and a terminal too narrow for every column
loses the least needed first (time, tokens, cost), never a row cut at the edge."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from textual.app import RenderResult
from textual.content import Content
from textual.geometry import Size
from textual.widget import Widget

from blackbox.format.inert import inert
from blackbox.many.folder import VariantSummary

from ..sweeping import money, seconds, tokens

__all__ = ["COLUMNS", "PassRates", "columns_for"]

MIN_NAME = 12  # the variant's column is never narrower while a figure could go instead


def _rate(row: VariantSummary) -> str:
    return f"{row.rate:.0%}" if row.runs else "—"


def _interval(row: VariantSummary) -> str:
    return f"{row.low:.0%}–{row.high:.0%}" if row.runs else "—"


def _changed(row: VariantSummary) -> str:
    return f"{row.outcomeChanged}" if row.runs else "—"


#: (header, width, the cell of a row); the order on screen.
COLUMNS: list[tuple[str, int, Callable[[VariantSummary], str]]] = [
    ("runs", 4, lambda r: str(r.runs)),
    ("passed", 6, lambda r: str(r.passed)),
    ("rate", 5, _rate),
    ("95% interval", 12, _interval),
    ("1st div", 7, lambda r: "—" if r.firstDivergence is None else str(r.firstDivergence)),
    ("outc.≠", 6, _changed),
    ("tokens", 11, lambda r: tokens(r.inputTokens, r.outputTokens)),
    ("time", 6, lambda r: seconds(r.seconds)),
    ("cost", 9, lambda r: money(r.cost)),
]
DROPPED_FIRST = ("time", "tokens", "cost", "1st div")  # when the name would be narrower than MIN_NAME


def columns_for(width: int, rows: Sequence[VariantSummary]) -> tuple[int, list[int]]:
    """The variant column's width and the indices of `COLUMNS` shown in `width` columns (cost only when some
    variant has one: the sweep was given prices)."""
    shown = [i for i, (name, _, _) in enumerate(COLUMNS) if name != "cost" or any(r.cost is not None for r in rows)]

    def room() -> int:
        return width - sum(COLUMNS[i][1] + 1 for i in shown)

    for name in DROPPED_FIRST:
        if room() >= MIN_NAME:
            break
        shown = [i for i in shown if COLUMNS[i][0] != name]
    return max(4, room()), shown


class PassRates(Widget):
    """Draws `rows` (set them, then `refresh`) with a header line; `None` rows: no manifest read yet."""

    DEFAULT_CSS = """
    PassRates {
        height: auto;
        max-height: 9;
        padding: 0 1;
        background: $surface;
        text-wrap: nowrap;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[VariantSummary] = []

    def show(self, rows: list[VariantSummary]) -> None:
        self.rows = rows
        self.refresh(layout=True)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return 1 + max(1, len(self.rows))

    def render(self) -> RenderResult:
        width = self.content_region.width or self.size.width
        name_width, shown = columns_for(width, self.rows)
        head = "variant"[:name_width].ljust(name_width) + "".join(
            " " + COLUMNS[i][0].rjust(COLUMNS[i][1]) for i in shown)
        lines = [Content.styled(head, "bold $text-muted")]
        if not self.rows:
            lines.append(Content.styled("no variants in the manifest", "$text-muted"))
        for row in self.rows:
            name = inert(row.variant)
            name = name if len(name) <= name_width else name[: name_width - 1] + "…"
            line = Content(name.ljust(name_width))
            for i in shown:
                header, cell_width, cell = COLUMNS[i]
                text = " " + cell(row).rjust(cell_width)
                line += Content.styled(text, "bold") if header == "rate" else Content(text)
            lines.append(line)
        return Content("\n").join(lines)
