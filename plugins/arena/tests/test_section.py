"""The arena section passes the section contract on a real arena part."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from faceedit_bench_arena.arena import ArenaSettings, rate_arena
from faceedit_bench_arena.pairwise_judge import position_bias
from faceedit_bench_arena.section import ARENA, record, tracking

from faceedit_bench.api.testing import SectionContract

sys.path.insert(0, str(Path(__file__).parent))
from test_verify import LOG_ROWS  # noqa: E402


@pytest.fixture
def section():
    return ARENA


@pytest.fixture
def report_part():
    settings = ArenaSettings(n_resamples=100, n_permutations=19, min_group_battles=2)
    editors = ["a", "b", "c"]
    part = {"editors": editors, "runs": [{"editor": e, "run_key": e, "folder": e} for e in editors],
            "testset_hash": "t", "template": {"name": "arena-pairwise"}, "policy": "loss",
            "settings": settings.__dict__, "editor": "b",
            "sampling": {"stop": "budget", "rounds": 1, "calls_planned": 56, "calls_made": 56, "budget_calls": 56},
            "counts": {"judged": 28, "decided": 28, "incomplete": 0, "position_inconsistent": 0, "one_sided": 1,
                       "both_failed": 0, "available": 40},
            "position_bias": position_bias([]),
            **rate_arena(editors, LOG_ROWS, settings)}
    return json.loads(json.dumps(part))


class TestArenaSection(SectionContract):
    pass


def test_tracking_and_record_are_this_runs_editor(report_part):
    metrics = tracking(report_part)
    mine = next(e for e in report_part["criteria"]["overall"]["ratings"]["editors"] if e["editor"] == "b")
    assert metrics["arena_rating"] == mine["rating"] and metrics["arena_rank"] == mine["rank"]
    assert record(report_part)["editor"] == "b" and record(report_part)["rating"] == mine["rating"]
