"""Small modules with one job: no module of the core is over 350 lines (STYLE.md, issue 22 section 4). A module
that grows past it holds two concepts: split it where they part, or move one to where it belongs."""

from __future__ import annotations

from pathlib import Path

CORE = Path(__file__).resolve().parent.parent / "faceedit_bench"
MAX_LINES = 350


def test_no_core_module_is_over_350_lines():
    sizes = {path.relative_to(CORE.parent).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
             for path in CORE.rglob("*.py")}
    over = {name: n for name, n in sorted(sizes.items()) if n > MAX_LINES}
    assert not over, f"modules over {MAX_LINES} lines: {over}"
