"""No import cycles in the core or in a protocol package, function-level imports included.

A function-level import that closes a cycle hides it from import time but not from a reader: the two modules
can only be understood together, and neither can move alone. grimp records every import statement, at any
depth; only ``if TYPE_CHECKING:`` imports (never executed) are left out."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import grimp
import pytest

#: The protocol packages (papers (b) and (c)) moved out of the core keep the same rule.
PROTOCOL_PACKAGES = ("faceedit_bench_audit", "faceedit_bench_creval", "faceedit_bench_arena")

def cycles(package: str) -> list[list[str]]:
    """The strongly connected groups of more than one module of ``package`` (Tarjan, iterative)."""
    graph = grimp.build_graph(package, cache_dir=None, exclude_type_checking_imports=True)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_the_core_has_no_import_cycle():
    found = cycles("faceedit_bench")
    assert not found, "import cycles (function-level imports included): " + "; ".join(" <-> ".join(g) for g in found)


@pytest.mark.parametrize("package", PROTOCOL_PACKAGES)
def test_a_protocol_package_has_no_import_cycle(package):
    found = cycles(package)
    assert not found, "import cycles (function-level imports included): " + "; ".join(" <-> ".join(g) for g in found)


def test_a_cycle_closed_by_a_function_level_import_is_found(tmp_path: Path, monkeypatch):
    package = tmp_path / "cyclic_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from cyclic_pkg.b import B\n\nA = 1\n")
    (package / "b.py").write_text(textwrap.dedent("""\
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            from cyclic_pkg.c import C

        B = 2


        def later():
            from cyclic_pkg.a import A

            return A
        """))
    (package / "c.py").write_text("from cyclic_pkg.b import B\n\nC = 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert cycles("cyclic_pkg") == [["cyclic_pkg.a", "cyclic_pkg.b"]]  # b <-> c is TYPE_CHECKING only
    finally:
        for name in [m for m in sys.modules if m.startswith("cyclic_pkg")]:
            del sys.modules[name]
