"""Console text at most :data:`MAX_WIDTH` columns wide, however wide the terminal (fewer on a narrower one):
help texts, progress lines, hints and summaries all read at one width."""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import sys
import textwrap
from collections.abc import Iterator

#: The widest a line the project prints is: longer lines are hard to read, and job logs and CI show about this.
MAX_WIDTH = 100
_KEY = re.compile(r"^\s*[\w.-]+: ")  # "editor: a, b, c": continued under the value


def width() -> int:
    """:data:`MAX_WIDTH`, or the terminal's width where it is narrower (``COLUMNS`` wins)."""
    return min(MAX_WIDTH, shutil.get_terminal_size((MAX_WIDTH, 24)).columns)


def fit_lines(text: str, columns: int | None = None) -> str:
    """Each line longer than ``columns`` wrapped at spaces, continued under its text (under the value of a
    ``key: value`` line). A word longer than a line (a path, a URL) stays whole on a line of its own."""
    columns = columns or width()
    out = []
    for line in text.split("\n"):
        if len(line) <= columns:
            out.append(line)
            continue
        key = _KEY.match(line)
        indent = " " * (key.end() if key else len(line) - len(line.lstrip()))
        out += textwrap.wrap(line, columns, subsequent_indent=indent, break_long_words=False,
                             break_on_hyphens=False) or [line]
    return "\n".join(out)


@contextlib.contextmanager
def fitted_stdout() -> Iterator[None]:
    """What the block prints to stdout, fitted (:func:`fit_lines`) and printed when it ends, even by
    ``sys.exit`` (Hydra's ``--help``)."""
    buffer = io.StringIO()
    try:
        with contextlib.redirect_stdout(buffer):
            yield
    finally:
        sys.stdout.write(fit_lines(buffer.getvalue()))
        sys.stdout.flush()
