"""The check every preset's console summary passes: it reads at 100 columns (issue 25, item 8); and the one
every other console text passes (help, progress, hints: issue 40, item 8).

No line is longer, no cell is cut with an ellipsis, and every interval ``[low, high]`` sits on one line.
The one exception is the run folder's path (``Artifacts:``), a path to copy that is printed as it is; in other
text, a line that is one word (a link, a path), which no wrapping could shorten.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

WIDTH = 100


def assert_summary_fits(report: dict[str, Any], output_dir: Path, width: int = WIDTH) -> str:
    from faceedit_bench.report.summary import format_summary

    text = format_summary(report, output_dir, width=width)
    lines = text.splitlines()
    problems = []
    for n, line in enumerate(lines):
        if line.startswith("Artifacts: "):
            continue
        if len(line) > width:
            problems.append(f"line {n + 1} has {len(line)} columns")
        if "…" in line:
            problems.append(f"line {n + 1} cuts a cell: {line.strip()!r}")
        if line.count("[") != line.count("]"):
            problems.append(f"line {n + 1} breaks an interval: {line.strip()!r}")
    assert not problems, "\n".join(problems) + "\n\n" + text
    return text


def too_wide(text: str, width: int = WIDTH) -> list[str]:
    """The lines of ``text`` wider than ``width`` that are more than one word (a link or a path alone on its
    line cannot be wrapped), and the run folder's path."""
    return [line for line in text.splitlines() if len(line) > width and len(line.split()) > 1
            and not line.startswith("Artifacts: ")]
