"""Claims on shared work: before a process pays for an edit or a judge call, it claims the call's content key.

A claim is a row of the ``claims`` table in the workspace ledger: the key, its owner (one id per open ledger),
when its lease expires and when it was last renewed. The owner renews its leases while it works (its
ledger's writer thread, every :data:`LEASE_S` / 4) and marks the claim done, with the ledger file that holds
the answer, in the same transaction as the answer (a shard's ledger: right after it). Another process that
needs the same key:

- finds the claim done since it opened its ledger: takes the answer from that ledger, and pays nothing;
- finds it held under a live lease: waits, looking again every :data:`POLL_S`;
- finds it expired (its owner was killed), its owner a process of this machine that has ended, or the claim
  done before it started (a rerun that retries a failure): takes it over.

A process killed with SIGKILL therefore delays the others on its machine not at all (a rerun right after a
kill starts at once) and those elsewhere (a cluster's shards) by at most one lease period. The SQL here
runs on the connection it is given, inside the caller's transaction.
"""

from __future__ import annotations

import enum
import os
import socket
import sqlite3
import time
import uuid
from dataclasses import dataclass

#: A claim not renewed for this long is taken over: its owner died. FACEEDIT_BENCH_LEASE_S changes it (tests).
LEASE_S = float(os.environ.get("FACEEDIT_BENCH_LEASE_S", "20"))
#: A process waiting for another's claim looks again this often.
POLL_S = 0.25


def new_owner() -> str:
    """An owner's id: one per open ledger (a process, or one run of it)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


SCHEMA = """
CREATE TABLE IF NOT EXISTS claims (
    key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    expires_at REAL NOT NULL,
    heartbeat_at REAL NOT NULL,
    done_in TEXT,
    done_at REAL
);
"""


class State(enum.Enum):
    MINE = "mine"  # this process holds the claim: it pays for the call
    HELD = "held"  # another live process holds it: wait
    DONE = "done"  # another process answered it since this one started: read its answer


@dataclass(frozen=True)
class Status:
    state: State
    done_in: str | None = None  # the ledger file holding the answer (DONE)


def look(db: sqlite3.Connection, owner: str, key: str, since: float, now: float | None = None) -> Status | None:
    """The claim on ``key`` as seen now, or None when it is free to take (absent, expired, or done before
    ``since``: an answer this process saw, or could have seen, when it started)."""
    row = db.execute("SELECT owner, expires_at, done_in, done_at FROM claims WHERE key = ?", (key,)).fetchone()
    if row is None:
        return None
    holder, expires_at, done_in, done_at = row
    if done_in is not None:
        return Status(State.DONE, done_in) if done_at >= since else None
    if holder == owner:
        return Status(State.MINE)
    alive = expires_at > (now if now is not None else time.time()) and not _dead_here(holder)
    return Status(State.HELD) if alive else None


def _dead_here(owner: str) -> bool:
    """Whether ``owner`` was a process of this machine that has ended (killed: its claims are free at once)."""
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:  # another user's process: alive
        return False
    return False


def claim(db: sqlite3.Connection, owner: str, key: str, since: float) -> Status:
    """Claim ``key`` if it is free (inside the caller's write transaction); what it is now."""
    now = time.time()
    status = look(db, owner, key, since, now)
    if status is None:
        db.execute("INSERT OR REPLACE INTO claims VALUES (?,?,?,?,NULL,NULL)", (key, owner, now + LEASE_S, now))
        status = Status(State.MINE)
    return status


def mark_done(db: sqlite3.Connection, owner: str, keys: list[str], done_in: str) -> None:
    now = time.time()
    db.executemany("UPDATE claims SET done_in = ?, done_at = ? WHERE key = ? AND owner = ?",
                   [(done_in, now, key, owner) for key in keys])


def release(db: sqlite3.Connection, owner: str, keys: list[str] | None = None) -> None:
    """Give up claims without an answer (``keys``, or all the owner's): others take them over at once."""
    if keys is None:
        db.execute("DELETE FROM claims WHERE owner = ? AND done_in IS NULL", (owner,))
    else:
        db.executemany("DELETE FROM claims WHERE key = ? AND owner = ? AND done_in IS NULL",
                       [(k, owner) for k in keys])


def renew(db: sqlite3.Connection, owner: str) -> None:
    now = time.time()
    db.execute("UPDATE claims SET expires_at = ?, heartbeat_at = ? WHERE owner = ? AND done_in IS NULL",
               (now + LEASE_S, now, owner))
