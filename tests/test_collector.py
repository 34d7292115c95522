"""A command's process collects garbage less often (faceedit_bench/collector.py); a program that imports
faceedit_bench keeps its own collector settings."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points

from faceedit_bench.collector import FIRST_GENERATION

#: Prints the collector's first threshold at the start and as the process exits, after the command ran.
AT_EXIT = ("import atexit, gc, sys; start = gc.get_threshold()[0]; "
           "atexit.register(lambda: print('threshold', start, gc.get_threshold()[0], file=sys.stderr)); ")


def _thresholds(code: str) -> tuple[int, int]:
    """The first threshold before and after ``code`` ran in a fresh interpreter."""
    done = subprocess.run([sys.executable, "-c", AT_EXIT + code], capture_output=True, text=True, timeout=120)
    start, end = done.stderr.rsplit("threshold", 1)[1].split()[:2]
    return int(start), int(end)


def test_both_entry_points_collect_less_often():
    hydra = "import runpy; sys.argv = ['faceedit_bench', '--help']; runpy.run_module('faceedit_bench', run_name='__main__')"
    (script,) = entry_points(group="console_scripts", name="faceedit-bench")
    console = f"from {script.module} import {script.attr}; sys.argv = ['faceedit-bench', 'plugins']; {script.attr}()"
    assert _thresholds(hydra)[1] == FIRST_GENERATION
    assert _thresholds(console)[1] == FIRST_GENERATION


def test_importing_or_calling_main_with_its_arguments_leaves_the_collector_alone():
    code = "import faceedit_bench.cli, faceedit_bench.run.hydra_app; faceedit_bench.cli.main(['plugins'])"
    start, end = _thresholds(code)
    assert end == start < FIRST_GENERATION  # CPython's default


def test_a_collector_set_higher_or_switched_off_is_kept():
    code = "import gc; gc.set_threshold({}); from faceedit_bench.collector import collect_less_often; collect_less_often()"
    assert _thresholds(code.format(10 * FIRST_GENERATION))[1] == 10 * FIRST_GENERATION
    assert _thresholds(code.format(0))[1] == 0
