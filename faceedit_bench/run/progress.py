"""Progress of a run, per stage (admission, editing, identity scoring, judging), with honest ETAs.

The engine only calls ``progress.advance(stage, n, cached=...)``. A stage's ETA is measured from
the work done after its first unit finished: the time before that (loading models, opening the
store, the first chunk's admission) is setup and would make the first minutes' rate meaningless.
Units taken from the ledger (``cached=True``: resumed steps, stored scores) count as done but not
in the rate, so a resumed run does not promise to finish in seconds.

On a terminal the stages are rich progress bars; otherwise (a pipe, a log file, a cluster job)
one plain line with every stage is logged every ``interval_s`` seconds and when a stage ends.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol, TextIO

log = logging.getLogger("faceedit_bench.progress")

ADMISSION = "admission"
EDITING = "editing"
SCORING = "identity scoring"
JUDGING = "judging"
#: What one unit of each stage is.
UNITS = {ADMISSION: "faces", EDITING: "steps", SCORING: "sessions", JUDGING: "sessions"}
#: The longest plain progress line: a log handler's prefix (the console's ``[20:26:09][INFO] ``) takes the rest
#: of the console's 100 columns.
LINE_COLUMNS = 100 - len("[20:26:09][INFO] ")


class Progress(Protocol):
    """What the engine reports to; a stage that is not shown (e.g. judging without a judge) is ignored."""

    def advance(self, stage: str, n: int = 1, *, cached: bool = False) -> None: ...


@dataclass
class StageClock:
    """Counts of one stage and the clock of its measured work."""

    total: int | None
    done: int = 0
    measured: int = 0  # units computed after the first one finished (the ones the rate is measured on)
    first_at: float | None = None  # when the stage's first unit finished: the end of setup
    last_at: float | None = None

    def advance(self, n: int, cached: bool, now: float) -> None:
        self.done += n
        if cached:
            return
        if self.first_at is None:
            self.first_at = now  # this batch's time includes setup: not measured
        else:
            self.measured += n
        self.last_at = now

    @property
    def finished(self) -> bool:
        return self.total is not None and self.done >= self.total

    def rate(self, now: float) -> float | None:
        """Units per second since setup ended; None before there is anything to measure."""
        if self.first_at is None or self.measured <= 0 or now <= self.first_at:
            return None
        return self.measured / (now - self.first_at)

    def eta_s(self, now: float) -> float | None:
        """Seconds left at the measured rate; 0 when done; None when unknown."""
        if self.total is None:
            return None
        left = max(0, self.total - self.done)
        if left == 0:
            return 0.0
        rate = self.rate(now)
        return left / rate if rate else None


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


class StageProgress:
    """The stages' counts and clocks (thread-safe); shown by a subclass."""

    def __init__(self, totals: Mapping[str, int | None], clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.stages = {stage: StageClock(total) for stage, total in totals.items()}
        self._lock = threading.Lock()

    def advance(self, stage: str, n: int = 1, *, cached: bool = False) -> None:
        if n <= 0 or stage not in self.stages:
            return
        with self._lock:
            state = self.stages[stage]
            was_finished = state.finished
            state.advance(n, cached, self.clock())
        self._changed(stage, finished_now=state.finished and not was_finished)

    def describe(self, stage: str) -> str:
        """``editing 120/400 steps, 2.1/s, ETA 2m13s`` (the rate and ETA once they are known)."""
        state, now = self.stages[stage], self.clock()
        count = f"{state.done}/{state.total}" if state.total is not None else str(state.done)
        text = f"{stage} {count} {UNITS.get(stage, 'units')}"
        if state.finished:
            return text + " done"
        rate = state.rate(now)
        if rate is not None:
            text += f", {rate:.2f}/s"
        eta = state.eta_s(now)
        if eta is not None:
            text += f", ETA {format_duration(eta)}"
        return text

    def lines(self, columns: int = LINE_COLUMNS) -> list[str]:
        """``progress: <stage> | <stage>``: every stage, in as many lines of at most ``columns`` as they need."""
        out: list[str] = []
        for text in map(self.describe, self.stages):
            if out and len(out[-1]) + 3 + len(text) <= columns:
                out[-1] += " | " + text
            else:
                out.append("progress: " + text)
        return out

    def _changed(self, stage: str, finished_now: bool) -> None:
        """Hook for the display."""

    def close(self) -> None:
        """Hook for the display."""


class PlainProgress(StageProgress):
    """One line with every stage every ``interval_s`` seconds and when a stage ends (no terminal)."""

    def __init__(self, totals: Mapping[str, int | None], *, interval_s: float = 30.0,
                 write: Callable[[str], None] | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(totals, clock)
        self.interval_s = interval_s
        self.write = write or log.info
        self._last_line = clock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def start(self) -> None:
        """Also write lines while nothing advances (a slow first model load, a long backoff)."""
        self._ticker = threading.Thread(target=self._tick_loop, name="faceedit-progress", daemon=True)
        self._ticker.start()

    def tick(self) -> None:
        """Write a line when ``interval_s`` has passed since the last one."""
        if self.clock() - self._last_line >= self.interval_s:
            self._emit()

    def _tick_loop(self) -> None:
        while not self._stop.wait(min(self.interval_s, 5.0)):
            self.tick()

    def _changed(self, stage: str, finished_now: bool) -> None:
        if finished_now:
            self._emit()
        else:
            self.tick()

    def _emit(self) -> None:
        self._last_line = self.clock()
        for line in self.lines():
            self.write(line)

    def close(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=5)
        if any(not s.finished for s in self.stages.values()):
            self._emit()  # where an interrupted or budget-stopped run ended


class RichProgress(StageProgress):
    """One rich progress bar per stage; the ETA column is this module's, not rich's own estimate
    (which would count setup and resumed work)."""

    def __init__(self, totals: Mapping[str, int | None], *, title: str = "", console: Any = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        super().__init__(totals, clock)
        owner = self

        class EtaColumn(TextColumn):
            def render(self, task: Any) -> Any:
                from rich.text import Text

                state, now = owner.stages[task.fields["stage"]], owner.clock()
                if state.finished:
                    return Text("done", style="green")
                rate, eta = state.rate(now), state.eta_s(now)
                rate_text = f"{rate:.2f} {UNITS.get(task.fields['stage'], 'units')}/s" if rate else "measuring"
                return Text(f"{rate_text}, ETA {format_duration(eta)}", style="cyan")

        self.display = Progress(
            TextColumn("{task.description:<17}"), BarColumn(), MofNCompleteColumn(),
            EtaColumn(""), TimeElapsedColumn(), console=console, transient=False,
        )
        if title:
            self.display.console.print(f"[bold]{title}[/bold]", highlight=False)
        self.tasks = {stage: self.display.add_task(stage, total=total, stage=stage)
                      for stage, total in totals.items()}

    def start(self) -> None:
        terminal = (sys.stdout, sys.stderr)
        self.display.start()  # from here sys.stdout and sys.stderr print above the bars
        # Log handlers (Hydra's console handler) hold the real streams: route them above the bars too.
        self._rerouted = []
        for handler in logging.getLogger().handlers:
            stream = getattr(handler, "stream", None)
            if isinstance(handler, logging.StreamHandler) and stream in terminal:
                self._rerouted.append((handler, stream))
                handler.setStream(sys.stdout if stream is terminal[0] else sys.stderr)

    def _changed(self, stage: str, finished_now: bool) -> None:
        self.display.update(self.tasks[stage], completed=self.stages[stage].done)

    def close(self) -> None:
        for handler, stream in getattr(self, "_rerouted", []):
            handler.setStream(stream)
        self.display.stop()


class NoProgress:
    def advance(self, stage: str, n: int = 1, *, cached: bool = False) -> None:
        return None


def plan_stages(faces: int | None, sessions: Sequence[Any], *, judged: bool) -> dict[str, int | None]:
    """Stage totals for ``faces`` faces (None when the dataset does not say how many). A session for every face
    counts once per face; a session written for one face (its ``face_id``: one edit per item of a benchmark of
    source images) counts once, in the share of those faces the run reaches (``run.max_faces`` may stop short)."""
    stages = [ADMISSION, EDITING, SCORING] + ([JUDGING] if judged else [])
    if faces is None:
        return dict.fromkeys(stages)
    shared = [s for s in sessions if getattr(s, "face_id", None) is None]
    bound = [s for s in sessions if getattr(s, "face_id", None) is not None]
    bound_faces = len({s.face_id for s in bound})
    reached = min(1.0, faces / bound_faces) if bound_faces else 0.0
    per_session = faces * len(shared) + round(reached * len(bound))
    steps = faces * sum(len(s.steps) for s in shared) + round(reached * sum(len(s.steps) for s in bound))
    totals = {ADMISSION: faces, EDITING: steps, SCORING: per_session, JUDGING: per_session}
    return {stage: totals[stage] for stage in stages}


def is_terminal(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


@contextmanager
def open_progress(totals: Mapping[str, int | None], *, enabled: bool = True, title: str = "",
                  interval_s: float = 30.0, stream: TextIO | None = None) -> Iterator[Progress]:
    """Rich bars when ``stream`` (stdout) is a terminal, plain log lines otherwise, nothing when disabled."""
    if not enabled:
        yield NoProgress()
        return
    stream = stream if stream is not None else sys.stdout
    progress: RichProgress | PlainProgress
    if is_terminal(stream):
        from rich.console import Console

        from faceedit_bench.report.fit import width

        progress = RichProgress(totals, title=title, console=Console(file=stream, width=width()))
    else:
        progress = PlainProgress(totals, interval_s=interval_s)
        log.info("%s: progress every %.0f s (stdout is not a terminal)", title or "run", interval_s)
    progress.start()
    try:
        yield progress
    finally:
        progress.close()


def expected_faces(n_faces: Any, limit: int | None) -> int | None:
    """For the progress bar's ETA: the dataset's own count when it states one."""
    if not isinstance(n_faces, int):
        return limit
    return min(n_faces, limit) if limit is not None else n_faces
