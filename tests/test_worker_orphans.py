"""After kill -9 of a run, its embedding workers and the resource tracker end too."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = textwrap.dedent("""
    import sys
    from hydra import compose, initialize_config_dir
    from faceedit_bench.run.experiment import build_experiment, run_experiment
    from faceedit_bench.run.hydra_app import conf_dir, register_configs
    from faceedit_bench.plugin.manager import load_plugins
    from tests import fake_plugin

    if __name__ == "__main__":  # spawned workers import this file as __mp_main__
        plugins = load_plugins()
        plugins.add(fake_plugin, name="fake")
        register_configs(plugins)
        with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
            cfg = compose(config_name="config", overrides=sys.argv[1:])
        run_experiment(build_experiment(cfg, plugins), plugins)
""")


def children(pid: int) -> dict[int, str]:
    """Live (not zombie) child processes of ``pid`` with their command lines, from /proc."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = dict(line.split(":\t", 1) for line in (entry / "status").read_text().splitlines()
                          if ":\t" in line)
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if int(status.get("PPid", "0")) == pid and not status.get("State", "").startswith("Z"):
            found[int(entry.name)] = cmdline
    return found


def alive(pid: int) -> bool:
    try:
        return not (Path("/proc") / str(pid) / "status").read_text().split("State:\t", 1)[1].startswith("Z")
    except (OSError, IndexError):
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_workers_and_resource_tracker_exit_when_the_run_is_killed(tmp_path):
    # Chunk 1 (4 faces x 5 sessions x 4 steps) is scored in the pool while chunk 2 is edited,
    # and the editor hangs in chunk 3: the run is busy, with its workers up, when it is killed.
    calls = tmp_path / "calls.txt"
    script = tmp_path / "run.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    proc = subprocess.Popen(
        [sys.executable, str(script), "dataset=synthetic", f"+dataset.params.root={tmp_path / 'faces'}",
         "+dataset.params.n=12", "embedder=pixel", "tracking=none", "run.workers=2", "run.progress=false",
         "testset=pose", "editor=scripted", "+editor.params.noise=10", f"+editor.params.calls_file={calls}",
         "+editor.params.hang_after=160", f"run.workspace={tmp_path / 'ws'}"],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    spawned: dict[int, str] = {}
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            spawned = children(proc.pid)
            workers = [p for p, cmd in spawned.items() if "spawn_main" in cmd]
            if len(workers) == 2 and any("resource_tracker" in cmd for cmd in spawned.values()):
                break
            time.sleep(0.2)
        else:
            raise AssertionError(f"the pool never started (exit {proc.poll()}): {proc.stderr.read()[-2000:] if proc.poll() is not None else spawned}")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 30  # the workers poll their parent every 0.5 s
        while time.monotonic() < deadline and any(alive(p) for p in spawned):
            time.sleep(0.2)
        left = {p: cmd for p, cmd in spawned.items() if alive(p)}
        assert not left, f"still running after the run was killed: {left}"
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in [p for p in spawned if alive(p)]:  # this test's own leftovers
            os.kill(pid, signal.SIGKILL)
