"""Opening a run's MLflow run on a thread, once the run's work is under way.

Importing MLflow and opening its store costs 2-5 s of CPU, and building a new store a few seconds
more: done before the first provider call, every run would start that much later. The tracker opens
it on a thread instead, which waits until the run's first new step is done (so the first calls have
left; a resumed run replays its stored steps first, and those make no call) or, at the latest,
``start_after_s`` after the run started. It waits because of the GIL: a
thread importing MLflow while the run prepares its first call would slow that preparation by as
much as it saves.

While it imports, the modules MLflow brings in (``requests``, ``pandas``, ...) sit half-initialised in
``sys.modules``. Another thread that imports one waits for it; code that only looks it up in
``sys.modules`` sees it incomplete. A provider SDK that does so must have the module imported before its
first call (the Gemini connection imports ``requests`` for this reason).

A launch with nothing new to log (:mod:`.logged`) calls the opening off before it starts.

A store that cannot be opened still stops the run: the tracker's next hook (a step done, the run's
end) raises the opening's error, and the run ends after the steps in flight, which the ledger keeps.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Opening(Generic[T]):
    """``open_run()`` called on a thread once :meth:`go` is called or ``start_after_s`` has passed."""

    def __init__(self, open_run: Callable[[], T], start_after_s: float) -> None:
        self._open_run, self._start_after_s = open_run, start_after_s
        self._go = threading.Event()
        self._done = threading.Event()
        self._value: T | None = None
        self._error: BaseException | None = None
        self._state = threading.Lock()
        self._started = self._cancelled = False
        # A daemon: a process that ends without the run's last hooks (os._exit, a crash) is not held open
        # by a store that takes long to answer. The store's own writes are transactions.
        self._thread = threading.Thread(target=self._run, name="faceedit-mlflow-open", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        self._go.wait(self._start_after_s)
        with self._state:
            self._started = not self._cancelled
        if not self._started:
            self._done.set()
            return
        try:
            self._value = self._open_run()
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread by the next hook
            self._error = exc
        finally:
            self._done.set()

    def go(self) -> None:
        """Open now (the work is under way, or the run is ending)."""
        self._go.set()

    def started(self) -> bool:
        """Whether the opening has begun (it then runs to its end)."""
        return self._started

    def cancel(self) -> bool:
        """Never open, if the opening has not started; False when it has (it then runs to its end)."""
        with self._state:
            if not self._started:
                self._cancelled = True
        self._go.set()
        return self._cancelled

    def failure(self) -> BaseException | None:
        """The opening's error if it has failed already; never waits."""
        return self._error if self._done.is_set() else None

    def result(self) -> T:
        """The opened run, waiting for it (starting it now if it has not started); raises its error."""
        self._go.set()
        self._done.wait()
        if self._error is not None:
            raise self._error
        assert self._value is not None
        return self._value
