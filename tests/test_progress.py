"""Progress per stage: ETAs measured after setup, plain lines off a terminal, every stage reaching its total."""

from __future__ import annotations

import io
import logging
from types import SimpleNamespace

import pytest

from faceedit_bench.run.progress import (
    ADMISSION,
    EDITING,
    JUDGING,
    SCORING,
    PlainProgress,
    RichProgress,
    StageProgress,
    open_progress,
    plan_stages,
)


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_eta_is_measured_after_setup():
    clock = FakeClock()
    progress = StageProgress({EDITING: 100}, clock=clock)
    clock.now = 100.0  # 100 s of setup (model load, store, first admission) before the first step finishes
    progress.advance(EDITING)
    assert progress.stages[EDITING].eta_s(clock.now) is None  # nothing measured yet: no made-up number
    for _ in range(9):  # then one step per second
        clock.now += 1.0
        progress.advance(EDITING)
    state = progress.stages[EDITING]
    assert state.rate(clock.now) == pytest.approx(1.0)
    assert state.eta_s(clock.now) == pytest.approx(90.0)  # counting setup would say 10 steps / 109 s: 981 s
    assert "ETA 1m30s" in progress.describe(EDITING)


def test_cached_units_count_as_done_but_not_in_the_rate():
    clock = FakeClock()
    progress = StageProgress({EDITING: 100}, clock=clock)
    progress.advance(EDITING, 50, cached=True)  # resumed from the ledger in no time
    clock.now = 10.0
    progress.advance(EDITING)  # first computed step: ends setup
    clock.now = 20.0
    progress.advance(EDITING, 5)  # 5 steps in 10 s
    state = progress.stages[EDITING]
    assert state.done == 56
    assert state.eta_s(clock.now) == pytest.approx(44 / 0.5)


def test_plain_lines_every_interval_and_when_a_stage_ends():
    clock, lines = FakeClock(), []
    progress = PlainProgress({ADMISSION: 2, EDITING: 8}, interval_s=30, write=lines.append, clock=clock)
    clock.now = 5
    progress.advance(EDITING)
    assert lines == []  # within the interval
    clock.now = 31
    progress.advance(EDITING)
    # 1 step in the 26 s after setup, 6 left
    assert lines == ["progress: admission 0/2 faces | editing 2/8 steps, 0.04/s, ETA 2m36s"]
    progress.advance(ADMISSION, 2)
    assert lines[-1].startswith("progress: admission 2/2 faces done | editing 2/8 steps")
    clock.now = 40
    progress.close()  # unfinished: where it stopped is said
    assert len(lines) == 3 and "editing 2/8 steps" in lines[-1]


def test_plain_lines_fit_100_columns_with_the_consoles_log_prefix():
    """Every stage with its rate and ETA: packed into lines that, after ``[20:26:09][INFO] ``, fit 100 columns."""
    clock, lines = FakeClock(), []
    progress = PlainProgress(plan_stages(400, [session(4)] * 10, judged=True), interval_s=30, write=lines.append,
                             clock=clock)
    for now in (1, 40):
        clock.now = now
        for stage in (ADMISSION, EDITING, SCORING, JUDGING):
            progress.advance(stage, 3)
    assert len(lines) > 1 and all(line.startswith("progress: ") for line in lines)
    assert max(len("[20:26:09][INFO] " + line) for line in lines) <= 100
    assert {s for line in lines for s in (ADMISSION, EDITING, SCORING, JUDGING) if s + " " in line} == {
        ADMISSION, EDITING, SCORING, JUDGING}


def test_unknown_total_counts_without_an_eta():
    clock = FakeClock()
    progress = StageProgress(plan_stages(None, [session(4)] * 5, judged=False), clock=clock)
    progress.advance(ADMISSION, 3)
    assert progress.describe(ADMISSION) == "admission 3 faces"
    assert JUDGING not in progress.stages
    progress.advance(JUDGING)  # a stage that is not shown is ignored


def session(steps: int, face_id: str | None = None) -> SimpleNamespace:
    return SimpleNamespace(steps=(None,) * steps, face_id=face_id)


def test_plan_stages_counts_every_stage():
    assert plan_stages(3, [session(4)] * 5, judged=True) == {ADMISSION: 3, EDITING: 60, SCORING: 15, JUDGING: 15}


def test_a_session_written_for_one_face_counts_once():
    """One edit per item (CREval-Bench: each item's instruction is a session of its own image): 6 items are
    6 steps, not 6 x 6; a run cut to 3 of the items reaches half of them."""
    items = [session(1, f"item{i}") for i in range(6)]
    assert plan_stages(6, items, judged=True) == {ADMISSION: 6, EDITING: 6, SCORING: 6, JUDGING: 6}
    assert plan_stages(3, items, judged=False) == {ADMISSION: 3, EDITING: 3, SCORING: 3}
    assert plan_stages(6, [*items, session(2)], judged=False)[EDITING] == 6 + 12  # plus a session for every face


def test_not_a_terminal_gives_plain_log_lines(caplog):
    stream = io.StringIO()  # not a TTY
    with caplog.at_level(logging.INFO, logger="faceedit_bench.progress"):
        with open_progress({EDITING: 2}, title="demo", stream=stream) as progress:
            assert isinstance(progress, PlainProgress)
            progress.advance(EDITING, 2)
    assert stream.getvalue() == ""  # no bar drawn into a pipe
    messages = [r.getMessage() for r in caplog.records]
    assert "demo: progress every 30 s (stdout is not a terminal)" in messages
    assert "progress: editing 2/2 steps done" in messages


def test_a_terminal_gets_rich_bars_with_every_stage():
    from rich.console import Console

    clock, out = FakeClock(), io.StringIO()
    progress = RichProgress({EDITING: 4, SCORING: 1}, title="demo", clock=clock,
                            console=Console(file=out, force_terminal=True, width=120))
    progress.start()
    progress.advance(EDITING, 4)
    progress.advance(SCORING, 1)
    progress.close()
    text = out.getvalue()
    assert "demo" in text and "editing" in text and "identity scoring" in text and "4/4" in text


def test_a_run_reports_every_stage_to_its_total(plugins, compose, synthetic, caplog):
    from faceedit_bench.run.experiment import build_experiment, run_experiment

    cfg = compose(*synthetic, "testset=pose", "run.max_faces=2", "run.progress=true")
    with caplog.at_level(logging.INFO, logger="faceedit_bench.progress"):
        run_experiment(build_experiment(cfg, plugins), plugins)
    finals = [r.getMessage() for r in caplog.records if r.getMessage().endswith("done")]
    assert finals[-1].endswith("identity scoring 10/10 sessions done")
    joined = "\n".join(r.getMessage() for r in caplog.records)
    assert "admission 2/2 faces done" in joined and "editing 40/40 steps done" in joined


def test_log_lines_print_above_the_bars_and_handlers_get_their_streams_back():
    import sys

    from rich.console import Console

    out = io.StringIO()
    handler = logging.StreamHandler(sys.stdout)  # what Hydra's console handler is
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        progress = RichProgress({EDITING: 2}, console=Console(file=out, force_terminal=True, width=100))
        progress.start()
        assert handler.stream is not out and handler.stream is sys.stdout  # rich's proxy while bars are shown
        logging.getLogger("faceedit_bench.run.engine").warning("excluding face f1: unreadable")
        progress.advance(EDITING, 2)
        progress.close()
        assert "excluding face f1: unreadable" in out.getvalue()
    finally:
        root.removeHandler(handler)
    assert handler.stream is sys.stdout
