"""``python -m faceedit_bench *args`` run by its entry function in the test's process: its exit code and what it
printed, as a :class:`subprocess.CompletedProcess`. The command's code (checks, Hydra, the run, the message of a
fatal error) is the same as in a new interpreter, which costs 1.5-3 s of CPU per command to start; a test whose
subject is the process itself (its imports, signals, what the interpreter prints at exit) starts a real one."""

from __future__ import annotations

import contextlib
import logging
import subprocess
import sys
from pathlib import Path

import pytest

import faceedit_bench
from faceedit_bench.plugin.manager import Plugins, using_plugins


def bench_in_process(monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str], cwd: Path, *args: str,
                     env: dict[str, str] | None = None, plugins: Plugins | None = None,
                     ) -> subprocess.CompletedProcess[str]:
    """The command in ``cwd`` with ``env`` added to the environment (FACEEDIT_BENCH_HOME: ``cwd/ws`` unless
    given), with ``plugins`` (the installed ones unless given; the ``plugins`` fixture adds the test plugin)."""
    from faceedit_bench.run import hydra_app

    with monkeypatch.context() as patch:
        patch.chdir(cwd)
        for key, value in {"FACEEDIT_BENCH_HOME": str(cwd / "ws"), **(env or {})}.items():
            patch.setenv(key, value)
        patch.setattr(sys, "argv", [str(Path(faceedit_bench.__file__).parent / "__main__.py"), *args])
        patch.setattr(logging, "raiseExceptions", logging.raiseExceptions)  # main() sets it for its process
        root = logging.getLogger()
        before = list(root.handlers)
        patch.setattr(root, "handlers", list(before))  # Hydra configures the root logger for its job
        patch.setattr(root, "level", root.level)
        capfd.readouterr()
        code: int | str | None = 0
        try:
            with using_plugins(plugins) if plugins is not None else contextlib.nullcontext():
                hydra_app.main()
        except SystemExit as exited:
            code = exited.code
        finally:
            for handler in root.handlers:
                if handler not in before:  # the job's console and log file, closed as a process's end would
                    handler.close()
        printed = capfd.readouterr()
    return subprocess.CompletedProcess(args, 0 if code is None else code, printed.out, printed.err)

