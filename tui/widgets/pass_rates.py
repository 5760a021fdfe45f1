"""The sweep screen's pass-rate table: one row per variant (`blackbox.many.folder.summarize`'s rows, with the
report's label against the baseline), fitted to the width: the variant's name takes the room it needs (up to
`NAME_MAX`), the label what the figures leave; a terminal too narrow for every column loses the least needed
first (the label, time, tokens, cost), never a row cut at the edge."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from textual.content import Content
from textual.widgets import Static

from blackbox.format.inert import inert
from blackbox.many.folder import VariantSummary

from ..sweeping import money, seconds, tokens

__all__ = ["COLUMNS", "PassRates", "columns_for"]

MIN_NAME = 12  # the variant's column is never narrower while a figure could go instead
NAME_MAX = 24  # nor wider: the label needs the room more
MIN_LABEL = 16  # a label with less room than this is left out (the status line says it for the branch's variant)


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


def columns_for(width: int, rows: Sequence[VariantSummary]) -> tuple[int, list[int], int]:
    """The variant column's width, the indices of `COLUMNS` shown in `width` columns (cost only when some
    variant has one: the sweep was given prices) and the label's width (0: left out)."""
    shown = [i for i, (name, _, _) in enumerate(COLUMNS) if name != "cost" or any(r.cost is not None for r in rows)]

    def room() -> int:
        return width - sum(COLUMNS[i][1] + 1 for i in shown)

    for name in DROPPED_FIRST:
        if room() >= MIN_NAME:
            break
        shown = [i for i in shown if COLUMNS[i][0] != name]
    longest = max((len(inert(r.variant)) for r in rows), default=MIN_NAME)
    name_width = max(4, min(room(), max(MIN_NAME, min(NAME_MAX, longest))))
    label = room() - name_width - 2
    return (name_width, shown, label) if label >= MIN_LABEL else (max(4, room()), shown, 0)


class PassRates(Static):
    """Draws `rows` (given to `show`) under a header line, again when its width changes."""

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
        self.labels: dict[str, str] = {}

    def show(self, rows: list[VariantSummary], labels: dict[str, str]) -> None:
        """`labels`: each variant's label against the baseline, by name (inert)."""
        self.rows = rows
        self.labels = labels
        self._draw()

    def on_resize(self) -> None:
        self._draw()

    def _draw(self) -> None:
        width = self.content_region.width or self.app.size.width - 2
        name_width, shown, label_width = columns_for(width, self.rows)
        head = "variant"[:name_width].ljust(name_width) + "".join(
            " " + COLUMNS[i][0].rjust(COLUMNS[i][1]) for i in shown)
        if label_width:
            head += "  against the baseline"[: label_width + 2]
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
            if label_width:
                label = self.labels.get(row.variant, "")
                label = label if len(label) <= label_width else label[: label_width - 1] + "…"
                line += Content.styled("  " + label, "$text-muted")
            lines.append(line)
        self.update(Content("\n").join(lines))
