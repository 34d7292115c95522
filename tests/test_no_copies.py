"""No function is copied between first-party plugins: shared code lives once, in the core,
and plugins reach it through faceedit_bench.api."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PLUGINS = Path(__file__).resolve().parents[1] / "plugins"
#: Bodies shorter than this (as ast.dump text) are too trivial to count as copies (``return self.x``).
TRIVIAL = 120


def function_bodies(source: str) -> dict[str, str]:
    """``{ast dump of the body without its docstring: function name}`` for every function in ``source``."""
    bodies = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                body = body[1:]  # the docstring may differ between copies
            if _delegates(body):
                continue  # one call of shared code is the reuse this test asks for, not a copy
            dump = ast.dump(ast.Module(body=body, type_ignores=[]))
            if len(dump) >= TRIVIAL:
                bodies[dump] = node.name
    return bodies


def _delegates(body: list[ast.stmt]) -> bool:
    """A body that only returns the result of calling a plain function (``return helper(self.x)``)."""
    return (len(body) == 1 and isinstance(body[0], ast.Return) and isinstance(body[0].value, ast.Call)
            and isinstance(body[0].value.func, ast.Name))


def copies_between_plugins(root: Path) -> list[list[str]]:
    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted(root.glob("*/faceedit_bench_*/**/*.py")):
        for body, name in function_bodies(path.read_text()).items():
            where[body].append(f"{path.relative_to(root)}:{name}")
    return [places for places in where.values() if len({p.split("/")[0] for p in places}) > 1]


def test_no_function_is_copied_between_plugins():
    assert copies_between_plugins(PLUGINS) == []


def test_a_copy_is_found(tmp_path):
    helper = '''def offline():\n    """Docstrings may differ."""\n    import os\n    return os.environ.get("X", "").lower() in ("1", "true")\n'''
    for plugin in ("a", "b"):
        package = tmp_path / plugin / f"faceedit_bench_{plugin}"
        package.mkdir(parents=True)
        (package / "loading.py").write_text(helper.replace("Docstrings", plugin))
    assert copies_between_plugins(tmp_path) == [["a/faceedit_bench_a/loading.py:offline",
                                                 "b/faceedit_bench_b/loading.py:offline"]]
