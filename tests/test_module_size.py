"""Small modules with one job: no module of the core is over 350 lines (issue 22 section 4). A module
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


# Packages whose __init__ is a facade or another helper's lane, not a room of the house.
NOT_ROOMS = {"api", "testing", "report/templates"}


def test_each_package_docstring_lists_its_modules():
    """A folder's file list reads as its table of contents: its __init__ docstring names every module and
    subpackage in it, so a module added without a line there fails here."""
    import ast

    unlisted = {}
    for init in sorted(CORE.rglob("__init__.py")):
        folder = init.parent
        room = folder.relative_to(CORE).as_posix()
        if room == "." or room in NOT_ROOMS or folder.name in ("conf", "__pycache__"):
            continue
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        names = [p.stem for p in folder.glob("*.py") if p.stem not in ("__init__", "__main__")]
        names += [p.name for p in folder.iterdir() if (p / "__init__.py").is_file()]
        missing = sorted(n for n in names if f"``{n}``" not in doc and f"{n}/" not in doc and f".{n}`" not in doc)
        if missing:
            unlisted[room] = missing
    assert not unlisted, f"modules missing from their package's docstring: {unlisted}"
