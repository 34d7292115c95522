"""Tables for the terminal that fit its width: laid out with rich on purpose, never squeezed by it.

rich fits a table that is too wide by wrapping and cutting its cells ("aging_ac…", an interval over three
lines). Here a table never gets that far: its value columns are packed into as many tables as the width
needs, each repeating the row names, so a cell is printed whole on one line. Long headers are short names
explained by a legend under the table.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rich import box
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from faceedit_bench.report.fit import MAX_WIDTH, width

#: Where the width cannot be asked (a pipe, a log file), and the most on a wider terminal: what a job log and CI
#: read comfortably (:mod:`faceedit_bench.report.fit`).
DEFAULT_WIDTH = MAX_WIDTH
#: Narrower terminals get this width and wrap: below it no table of a run reads well.
MIN_WIDTH = 60


def console_width() -> int:
    """The terminal's width (``COLUMNS`` wins) up to :data:`DEFAULT_WIDTH`, which is also the width when output
    is not a terminal."""
    return max(MIN_WIDTH, width())


@dataclass(frozen=True)
class Column:
    header: str
    right: bool = False  # numbers: right-aligned under their header
    wrap: int | None = None  # a row name that may wrap over lines of at most this width; values never wrap


def plain_console(width: int, file: Any = None) -> Console:
    return Console(file=file or io.StringIO(), width=width, no_color=True, highlight=False, emoji=False,
                   markup=False, soft_wrap=False)


def render(parts: Iterable[Any], width: int) -> str:
    """Renderables (tables, text) as plain text at ``width`` columns."""
    buffer = io.StringIO()
    plain_console(width, buffer).print(Group(*parts))
    return "\n".join(line.rstrip() for line in buffer.getvalue().rstrip("\n").split("\n"))


def _table(keys: Sequence[Column], values: Sequence[Column], rows: Sequence[Sequence[str]],
           columns: Sequence[int]) -> Table:
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, header_style="")
    for column in [*keys, *(values[i] for i in columns)]:
        table.add_column(column.header, justify="right" if column.right else "left", no_wrap=column.wrap is None,
                         max_width=column.wrap, overflow="fold")
    for row in rows:
        table.add_row(*row[: len(keys)], *(row[len(keys) + i] for i in columns))
    return table


def _width(table: Table, console: Console) -> int:
    return console.measure(table).maximum


def fitted_tables(keys: Sequence[Column], values: Sequence[Column], rows: Sequence[Sequence[str]], width: int,
                  *, title: str | None = None, legend: str | None = None) -> list[Any]:
    """One table of ``keys`` + ``values`` if it fits in ``width`` columns, else several, each with the key
    columns and as many value columns (in order) as fit; ``legend`` (what short headers mean) follows."""
    console = plain_console(10_000)
    chunks: list[list[int]] = []
    for i in range(len(values)):
        if chunks and _width(_table(keys, values, rows, [*chunks[-1], i]), console) <= width:
            chunks[-1].append(i)
        else:
            chunks.append([i])
    chunks = chunks or [[]]
    out: list[Any] = []
    for n, chunk in enumerate(chunks):
        if out:
            out.append(Text(""))
        if title:  # above the table, wrapped at the width (a table's own title wraps at the table's)
            out.append(Text(title if len(chunks) == 1 else f"{title} ({n + 1} of {len(chunks)})"))
        out.append(_table(keys, values, rows, chunk))
    if legend:
        out.append(Text(legend))
    return out
