"""Tab completion from a static index (issue 41, item 10): the script ``faceedit-bench completion bash`` writes
answers every TAB in bash alone; Python is never started (a stand-in ``faceedit-bench`` on the PATH records any
start), and an installed index older than a watched folder rebuilds itself once, in the background."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent / "faceedit-bench"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("completion") / "faceedit-bench"
    subprocess.run([str(BIN), "completion", "bash", "--out", str(out)], check=True, capture_output=True, text=True,
                   timeout=600)
    return out


def complete(script: Path, line: str, tmp_path: Path) -> tuple[list[str], bool]:
    """What bash offers for ``line`` (cursor at its end), and whether any program named faceedit-bench or
    python ran meanwhile (stand-ins on the PATH leave a mark)."""
    stand_ins = tmp_path / "bin"
    stand_ins.mkdir(exist_ok=True)
    mark = tmp_path / "started"
    for name in ("faceedit-bench", "python", "python3"):
        (stand_ins / name).write_text(f"#!/bin/sh\ntouch {shlex.quote(str(mark))}\n")
        (stand_ins / name).chmod(0o755)
    words = line.split(" ")
    program = f"""source {shlex.quote(str(script))}
COMP_LINE={shlex.quote(line)}
COMP_POINT=${{#COMP_LINE}}
COMP_WORDS=({" ".join(shlex.quote(w) for w in words)})
COMP_CWORD={len(words) - 1}
_faceedit_bench_completion
wait
printf '%s\\n' "${{COMPREPLY[@]}}"
"""
    out = subprocess.run(["bash", "--norc", "-c", program], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PATH": f"{stand_ins}{os.pathsep}/usr/bin{os.pathsep}/bin"})
    assert out.returncode == 0, out.stderr
    return [w for w in out.stdout.splitlines() if w], mark.exists()


def test_completion_answers_from_the_index_without_starting_python(installed, tmp_path):
    cases = {
        "faceedit-bench da": ["data"],
        "faceedit-bench pl": ["plan", "plugins"],
        "faceedit-bench run editor=nano": ["editor=nano_banana"],
        "faceedit-bench plan run.max_f": ["run.max_faces="],
        "faceedit-bench run run.allow_": ["run.allow_partial="],
        "faceedit-bench ls ed": ["editor"],
    }
    for line, expected in cases.items():
        offered, started = complete(installed, line, tmp_path)
        assert offered == expected, line
        assert not started, f"{line!r} started a program"
    offered, _ = complete(installed, "faceedit-bench run experiment=paper_b", tmp_path)
    assert {"experiment=paper_b", "experiment=paper_b_mitigation"} <= set(offered)
    assert "editor=" in complete(installed, "faceedit-bench run edi", tmp_path)[0]


def test_an_index_older_than_a_watched_folder_rebuilds_itself_once(installed, tmp_path):
    copy = tmp_path / "faceedit-bench-completion"
    text = installed.read_text().replace(str(installed.resolve()), str(copy))
    copy.write_text(text)
    watched = tmp_path / "plugins_folder"
    watched.mkdir()
    copy.write_text(text.replace("_FACEEDIT_BENCH_WATCH=(", f"_FACEEDIT_BENCH_WATCH=({shlex.quote(str(watched))} "))
    os.utime(copy, (1, 1))  # the index is older than the folder: a plugin was installed since
    complete(copy, "faceedit-bench ru", tmp_path)
    for _ in range(600):  # the rebuild runs in the background: wait for its mark (a bound that only catches a hang)
        if (tmp_path / "started").exists():
            break
        time.sleep(0.05)
    assert (tmp_path / "started").exists()  # the stand-in was asked to rebuild it
    os.utime(copy, None)
    (tmp_path / "started").unlink()
    offered, started = complete(copy, "faceedit-bench ru", tmp_path)
    assert offered == ["run", "runs"] and not started
