"""Kill a piece of work at chosen instants (SIGKILL: no cleanup, no finally), then rerun it.

For first-time initialisation: a new workspace's first run (ledger, image store, run folder, MLflow
store), a shard, a portrait selection. An instant is the N-th write the work makes in the harness's folder
(where its workspace lies): an SQL statement on a SQLite database there (MLflow's migrations and the
ledger's), a file or folder created, renamed or removed there. The work kills itself just before the N-th,
so the instants are exact and the same on an idle or a loaded machine; a timer would hit other points
every time. Writes elsewhere are not the work's own and would make the count depend on what ran before
(Python's bytecode files, the caches in ``~/.cache`` that the first process to need them writes).

Run as a script, in a process of its own: everything is imported once, then each attempt runs in a
forked child (cheap, and nothing of one attempt is left in the next). It prints one JSON object:
``{"operations": <writes of an uninterrupted attempt>, "instants": [{"at": N, "killed": bool,
"rerun": {"ok": bool, "error": str, ...}}, ...]}``::

    python -m tests.kill_instants <scenario> <folder> [instants] [scenario arguments...]
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

Work = Callable[[], dict[str, Any]]
CHILD_TIMEOUT_S = 300
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT


class _Counter:
    """Counts writes in ``root`` (see the module docstring) and kills the process at the ``kill_at``-th."""

    def __init__(self, kill_at: int | None, root: Path) -> None:
        self.n, self.kill_at = 0, kill_at
        self.root = os.path.realpath(root)

    def inside(self, *paths: Any) -> bool:
        for path in paths:
            if isinstance(path, (str, bytes, os.PathLike)):
                name = os.fsdecode(path)
                name = name.removeprefix("file:").split("?", 1)[0]  # a SQLite URI
                if os.path.realpath(name).startswith(self.root + os.sep):
                    return True
        return False

    def tick(self, *_: Any) -> None:
        self.n += 1
        if self.n == self.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    def install(self) -> None:
        connect = sqlite3.connect

        def counted_connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
            connection = connect(*args, **kwargs)
            if self.inside(*args[:1], kwargs.get("database")):
                connection.set_trace_callback(self.tick)  # called before each statement runs
            return connection

        sqlite3.connect = sqlite3.dbapi2.connect = counted_connect  # SQLAlchemy connects through dbapi2
        for name in ("replace", "rename", "mkdir", "rmdir", "unlink", "remove"):
            setattr(os, name, self._wrap(getattr(os, name)))
        raw_open = os.open

        def counted_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            if flags & _WRITE_FLAGS and self.inside(path):
                self.tick()
            return raw_open(path, flags, *args, **kwargs)

        os.open = counted_open

    def _wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            if self.inside(*args[:2]):  # the path, or either path of a rename
                self.tick()
            return fn(*args, **kwargs)

        return counted


_counter: _Counter | None = None  # the running child's


def writes_so_far() -> int:
    """Writes the running attempt has made (0 outside an attempt): for a scenario to say where its parts lie."""
    return _counter.n if _counter is not None else 0


def in_child(work: Work, root: Path, *, kill_at: int | None = None, log: Path | None = None) -> dict[str, Any]:
    """Run ``work`` in a forked child (counting its writes in ``root``, killed at the ``kill_at``-th) and return
    ``{"killed": bool, "ok": bool, "error": str, "operations": int, **what work returned}``."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        signal.alarm(CHILD_TIMEOUT_S)  # a hung attempt ends (SIGALRM) and is reported, never waited on forever
        os.close(read)
        if log is not None:  # its output stays out of the harness's JSON
            fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
        global _counter
        counter = _counter = _Counter(kill_at, root)
        counter.install()
        try:
            result = {"ok": True, **work()}
        except BaseException as exc:  # reported to the harness, which decides
            result = {"ok": False, "error": "".join(traceback.format_exception(exc))[-4000:]}
        result["operations"] = counter.n
        with os.fdopen(write, "w") as out:
            out.write(json.dumps(result, default=str))
        os._exit(0)
    os.close(write)
    started = time.monotonic()
    with os.fdopen(read) as answer:
        text = answer.read()
    _, status = os.waitpid(pid, 0)
    seconds = round(time.monotonic() - started, 2)
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL:
        return {"killed": True, "ok": False, "error": "", "seconds": seconds}
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGALRM:
        return {"killed": False, "ok": False, "error": f"no end within {CHILD_TIMEOUT_S} s", "seconds": seconds}
    result = json.loads(text) if text else {"ok": False, "error": f"the child ended with status {status}"}
    return {"killed": False, "seconds": seconds, **result}


def spread(total: int, n: int) -> list[int]:
    """``n`` instants evenly over writes 1..``total`` (the first and the last included)."""
    if n == 1 or total <= 1:
        return [max(1, total)]
    return sorted({1 + round(i * (total - 1) / (n - 1)) for i in range(n)})


def kill_and_rerun(fresh: Callable[[int], tuple[Work, Work]], n: int, folder: Path) -> dict[str, Any]:
    """Calibrate on a fresh attempt, then for each of ``n`` instants: a fresh attempt killed there and
    its rerun. ``fresh(i)`` gives attempt ``i``'s (first work, rerun work) on a place of its own in ``folder``."""
    log = folder / "children.log"
    first, _ = fresh(0)
    calibration = in_child(first, folder, log=log)
    if not calibration["ok"]:
        return {"operations": 0, "calibration": calibration, "instants": []}
    instants = []
    # Writes timed by the clock (the ledger's commit windows, MLflow's own) make an attempt's count differ from
    # the calibration's by a few: the instants end 1% before the calibrated last write, which every attempt makes.
    total = calibration["operations"]
    # A scenario may name writes that matter most (e.g. between the two renames of a swap): killed there too.
    at_writes = sorted({*spread(total - total // 100, n), *calibration.get("also_kill_at", [])})
    for i, at in enumerate(at_writes, start=1):
        work, rerun = fresh(i)
        killed = in_child(work, folder, kill_at=at, log=log)
        instants.append({"at": at, "killed": killed["killed"], "rerun": in_child(rerun, folder, log=log)})
    return {"operations": calibration["operations"], "calibration": calibration, "instants": instants}


def main(argv: list[str]) -> None:
    from faceedit_bench.collector import collect_less_often
    from tests import kill_scenarios

    collect_less_often()  # each attempt is a command's work: at a command's pace

    scenario, folder, n, *args = argv
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with contextlib.redirect_stdout(sys.stderr):  # what the setup prints stays out of the answer
        fresh = getattr(kill_scenarios, scenario)(folder, *args)
    print(json.dumps(kill_and_rerun(fresh, int(n), folder)))


if __name__ == "__main__":
    # Through the module's own name: the scenarios' `writes_so_far` must see this run's counter, which a
    # second copy of this module (`__main__`) would not.
    from tests.kill_instants import main as harness

    harness(sys.argv[1:])
