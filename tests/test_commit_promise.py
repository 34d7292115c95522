"""An answered edit is in the ledger within the promised window of the provider's answer (docs/stopping.md, "What a
kill costs"), while MLflow imports and builds its store beside the calls: a hosted run on a fresh workspace is
SIGKILLed while the fake provider answers, and every edit the fake finished answering more than the promised window
before the kill instant must be in the ledger. The instants are the fake's own completion times and the kill's, on
one monotonic clock: nothing asserts how fast the run is, only the order of answer, window and kill."""

from __future__ import annotations

import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from faceedit_bench.keys import step_seed
from tests.fakes.gemini import gemini_server
from tests.test_kill_report import command

KEY = "test-commit-promise-key"
#: The window docs/stopping.md promises: an answer older than this at a SIGKILL is in the ledger.
PROMISE_S = 1.0
RUN_SEED = 7
#: The kill comes once the fake has answered this many edits, the first of them more than two windows before.
KILL_AFTER = 30
#: The fake answers this many edits, and holds the rest (of 160).
HELD_AFTER = 80


def committed_seeds(ledger: Path) -> set[int]:
    """The provider seeds of the edits the ledger holds (each step's seed is derived from its face's base image,
    the input of its session's step 1)."""
    db = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True, timeout=60)
    try:
        rows = db.execute("SELECT face_id, session_id, k, input_hash FROM edits").fetchall()
    finally:
        db.close()
    base = {(face, session): h for face, session, k, h in rows if k == 1}
    # A step's row is queued after its previous step's, and committed in that order: its step 1 is there too.
    return {step_seed(RUN_SEED, base[(face, session)], session, k) % 2**31 for face, session, k, _ in rows}


@pytest.mark.stress  # measured beside a CPU hog on every core (docs/stopping.md)
@pytest.mark.slow(seconds=30)
@pytest.mark.timeout(900)
def test_every_edit_answered_more_than_the_promised_window_before_a_kill_is_in_the_ledger(tmp_path):
    with gemini_server(api_key=KEY) as server:
        args, env = command(tmp_path, "killed", "dataset=synthetic", f"+dataset.params.root={tmp_path / 'faces'}",
                            "+dataset.params.n=20", "embedder=pixel", "tracking=mlflow", "run.progress=false",
                            "testset=hair", "run.max_sessions=2", f"run.seed={RUN_SEED}", "editor=nano_banana",
                            f"editor.params.base_url={server.url}", "editor.params.limits.requests_per_minute=60000",
                            "editor.params.limits.tokens_per_minute=null", f"run.workspace={tmp_path / 'ws'}")
        # Later calls are held, never answered: the run cannot end before the kill, however fast the machine.
        release = server.hold_after(HELD_AFTER)
        log = (tmp_path / "stderr.txt").open("w")
        proc = subprocess.Popen(args, env={**env, "GEMINI_API_KEY": KEY}, cwd=tmp_path, stdout=subprocess.DEVNULL,
                                stderr=log)
        try:
            deadline = time.monotonic() + 600  # only catches a hang
            while time.monotonic() < deadline and proc.poll() is None:
                answered = sorted(r.answered_at for r in list(server.requests) if r.answered_at is not None)
                if len(answered) >= KILL_AFTER and answered[0] < time.monotonic() - 2 * PROMISE_S:
                    break
                time.sleep(0.01)
            assert proc.poll() is None, (tmp_path / "stderr.txt").read_text()[-3000:]  # ended before the kill
            killed_at = time.monotonic()
            proc.kill()
        finally:
            proc.kill()
            proc.wait(timeout=60)
            log.close()
            release.set()
        answers = [(r.json()["generationConfig"]["seed"], r.answered_at) for r in list(server.requests)
                   if r.answered_at is not None and r.answered_at < killed_at - PROMISE_S]
    assert answers  # the kill waited for answers older than the window
    kept = committed_seeds(tmp_path / "ws" / "ledger.sqlite")
    lost = [round(killed_at - at, 3) for seed, at in answers if seed not in kept]
    assert not lost, f"answers lost although finished this many seconds before the kill: {lost}"
