"""Claims on shared work, at the ledger: a call claimed by one process is waited for by the others, taken over
when its owner dies (after one lease), answered through whichever ledger holds the answer (a shard's)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from faceedit_bench.records import Outcome
from faceedit_bench.storage import claims
from faceedit_bench.storage.ledger import EditRow, Ledger
from faceedit_bench.storage.shard_ledgers import ShardLedger

ROOT = Path(__file__).resolve().parent.parent


def put(ledger: Ledger, key: str, outcome: Outcome = Outcome.OK) -> None:
    ledger.put_edit(key, editor_fp="e", face_id="f", session_id="s", k=1, instruction="i", input_hash="h",
                    row=EditRow(key, outcome, "out", "", {}, 0.1))


def test_a_claimed_call_is_waited_for_and_its_answer_taken(tmp_path):
    a, b = Ledger(tmp_path / "ledger.sqlite"), Ledger(tmp_path / "ledger.sqlite")

    async def scenario() -> list[str]:
        order: list[str] = []
        assert await a.claim_edit("k") is None  # a makes it

        async def waiter() -> None:
            row = await b.claim_edit("k")
            order.append(f"b got {row.outcome.value}" if row else "b makes it")

        task = asyncio.ensure_future(waiter())
        await asyncio.sleep(3 * claims.POLL_S)
        order.append("a answers")
        put(a, "k", Outcome.API_ERROR)  # whatever the outcome: it is this run's answer
        await asyncio.wait_for(task, 60)
        return order

    try:
        assert asyncio.run(scenario()) == ["a answers", "b got api_error"]
    finally:
        a.close()
        b.close()


def test_an_answer_from_before_a_run_started_is_retried_and_a_released_claim_taken_at_once(tmp_path):
    old = Ledger(tmp_path / "ledger.sqlite")

    async def answer_old() -> None:
        assert await old.claim_edit("k") is None
        put(old, "k", Outcome.API_ERROR)

    asyncio.run(answer_old())
    old.close()
    a, b = Ledger(tmp_path / "ledger.sqlite"), Ledger(tmp_path / "ledger.sqlite")

    async def scenario() -> None:
        assert await a.claim_edit("k") is None  # the rerun retries the failure
        a.release("k")  # e.g. stopped by the budget: not made
        assert await asyncio.wait_for(b.claim_edit("k"), 60) is None  # b takes it without waiting for a lease

    try:
        asyncio.run(scenario())
    finally:
        a.close()
        b.close()


HOLDER = textwrap.dedent("""
    import asyncio, sys
    from faceedit_bench.storage.ledger import Ledger
    ledger = Ledger(sys.argv[1])
    assert asyncio.run(ledger.claim_edit("k")) is None
    print("claimed", flush=True)
    sys.stdin.read()  # held until killed
""")


def test_a_killed_owner_on_this_machine_frees_its_claims_at_once(tmp_path):
    env = {**os.environ, "FACEEDIT_BENCH_LEASE_S": "600",
           "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    path = tmp_path / "ledger.sqlite"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], env=env, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "claimed"
        waiter = Ledger(path)
        held = claims.look(waiter._claims_db, "me", "k", waiter.opened_at)
        assert held is not None and held.state is claims.State.HELD  # alive: waited for
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=60)
        (expires_at,) = waiter._db.execute("SELECT expires_at FROM claims WHERE key = 'k'").fetchone()
        assert asyncio.run(asyncio.wait_for(waiter.claim_edit("k"), 120)) is None  # taken over
        assert time.time() < expires_at  # at once: a rerun right after a kill waits for no lease
        waiter.close()
    finally:
        if holder.poll() is None:
            holder.kill()


def test_an_owner_elsewhere_that_stops_renewing_delays_the_others_by_one_lease(tmp_path):
    """An owner on another machine (a cluster's shard) cannot be checked: its lease decides."""
    waiter = Ledger(tmp_path / "ledger.sqlite")
    renewed = time.time()
    waiter._db.execute("INSERT INTO claims VALUES ('k', 'elsewhere:1:x', ?, ?, NULL, NULL)",
                       (renewed + 1.0, renewed))  # last renewed now, with a 1 s lease
    try:
        assert asyncio.run(asyncio.wait_for(waiter.claim_edit("k"), 120)) is None
        taken_at = time.time()
    finally:
        waiter.close()
    # Never before the lease ran out (ordering, not speed); the upper bound only catches a hang.
    assert renewed + 1.0 <= taken_at <= renewed + 1.0 + 60


def test_overlapping_shards_share_claims_through_the_workspace_ledger(tmp_path):
    base = tmp_path / "ledger.sqlite"
    one = ShardLedger(tmp_path / "shard-0-of-2" / "ledger.sqlite", base=base)
    two = ShardLedger(tmp_path / "shard-0-of-4" / "ledger.sqlite", base=base)

    async def scenario() -> EditRow | None:
        assert await one.claim_edit("k") is None
        put(one, "k")
        one.flush()
        return await asyncio.wait_for(two.claim_edit("k"), 60)  # read from the first shard's own ledger

    try:
        row = asyncio.run(scenario())
        assert row is not None and row.outcome is Outcome.OK and row.output_hash == "out"
        assert two.get_edit("k") is None  # not copied: the merge unions the shard ledgers
    finally:
        one.close()
        two.close()


def test_an_answer_is_committed_while_the_thread_that_recorded_it_stays_busy(tmp_path):
    """The writer thread commits on its own: a main thread (the event loop) busy with pure-Python work (MLflow's
    set-up, a report's statistics) does not hold an answer back. The loop only ends once another connection
    sees the row, so the test passes at any speed unless the commit waits for the busy thread."""
    import sqlite3
    import threading

    ledger = Ledger(tmp_path / "ledger.sqlite")
    seen = threading.Event()

    def watch() -> None:
        db = sqlite3.connect(tmp_path / "ledger.sqlite", timeout=60)
        while not seen.is_set():
            if db.execute("SELECT count(*) FROM edits").fetchone()[0]:
                seen.set()
            time.sleep(0.01)
        db.close()

    put(ledger, "k")
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    deadline = time.monotonic() + 120  # only catches a hang
    while not seen.is_set() and time.monotonic() < deadline:
        sum(i * i for i in range(10_000))  # holds the interpreter as Python code does
    try:
        assert seen.is_set(), "the answer waited for the busy thread"
    finally:
        seen.set()
        ledger.close()
