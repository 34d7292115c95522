"""The plugin set reaches code one way (issue 38): :func:`current_plugins`, the set of the enclosing
``using_plugins`` (a run's, a command's, a test's) or else the installed plugins. A test that builds its own set
gets it everywhere, ``load_testset`` included, and no library module fetches the process-wide set itself."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from faceedit_bench import hookimpl
from faceedit_bench.errors import FaceEditBenchError
from faceedit_bench.plugin.manager import current_plugins, get_plugins, load_plugins, using_plugins
from faceedit_bench.records import Session, Step, TestSet
from faceedit_bench.testsets import load_testset

ROOT = Path(__file__).resolve().parent.parent
#: Where the installed plugin set may be fetched: the accessor of the set in use, and nowhere else.
ENTRY = {"faceedit_bench/plugin/manager.py"}


def _frozen() -> TestSet:
    session = Session("s1", "only_in_my_set", (Step(1, "make the hair red"),))
    return TestSet(name="only_in_my_set", version="1", content_hash="0" * 64, taxonomy_version="",
                   sessions=(session,))


_frozen.check = lambda: True  # a frozen set: load_testset serves registered loaders that can check themselves


class MyTestSets:
    @staticmethod
    @hookimpl
    def faceedit_register_testsets(register):
        register("only_in_my_set", _frozen)


def test_a_test_built_plugin_set_is_the_one_load_testset_uses():
    mine = load_plugins(entry_points=False)
    mine.add(MyTestSets, name="my_testsets")
    with using_plugins(mine):
        assert current_plugins() is mine
        assert load_testset("only_in_my_set").name == "only_in_my_set"
    assert current_plugins() is get_plugins()  # the block's end restores the installed set
    with pytest.raises(FaceEditBenchError):  # the installed set has no such loader: read as a file, not there
        load_testset("only_in_my_set")


def test_no_library_module_fetches_the_process_wide_plugin_set():
    fetching = []
    paths = sorted((ROOT / "faceedit_bench").rglob("*.py")) + sorted((ROOT / "plugins").glob("*/faceedit_bench_*/**/*.py"))
    for path in paths:
        name = str(path.relative_to(ROOT))
        if name in ENTRY:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            called = getattr(node.func, "id", getattr(node.func, "attr", None)) if isinstance(node, ast.Call) else None
            if called == "get_plugins":
                fetching.append(f"{name}:{node.lineno}")
    assert not fetching, f"call current_plugins() (the set in use), not get_plugins(): {fetching}"
