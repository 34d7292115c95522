"""``faceedit-bench run ...`` (issue 25, item 14): Hydra's app from the console script, its own arguments passed
through (-m, --cfg, --help), and tab completion in bash that asks Hydra about the line, as its bash script does
(COMP_LINE, COMP_POINT, COMP_WORDS, COMP_CWORD)."""

from __future__ import annotations

import functools
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from faceedit_bench.cli.run import without_run
from tests.console_fit import too_wide

BIN = Path(sys.executable).parent / "faceedit-bench"
FAST = ["tracking=none", "run.workers=1", "run.progress=false"]


def bench(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN), *args], capture_output=True, text=True, cwd=tmp_path, timeout=600,
                          env={**os.environ, "FACEEDIT_BENCH_HOME": str(tmp_path / "ws"), **env})


@functools.cache
def completion_script() -> str:
    """The bash completion the console script installs; asked once, it is the same for every line."""
    return subprocess.run([str(BIN), "run", "--shell-completion", "install=bash"], capture_output=True, text=True,
                          check=True).stdout


def complete(line: str) -> list[str]:
    """What bash offers for ``line`` (the cursor at its end) with the installed completion."""
    script = completion_script()
    words = line.split(" ")
    program = f"""{script}
COMP_LINE={shlex.quote(line)}
COMP_POINT=${{#COMP_LINE}}
COMP_WORDS=({" ".join(shlex.quote(w) for w in words)})
COMP_CWORD={len(words) - 1}
_faceedit_bench_completion
printf '%s\\n' "${{COMPREPLY[@]}}"
"""
    out = subprocess.run(["bash", "--norc", "-c", program], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PATH": f"{BIN.parent}{os.pathsep}{os.environ['PATH']}"})
    assert out.returncode == 0, out.stderr
    return [w for w in out.stdout.splitlines() if w]


@pytest.mark.slow
def test_bash_completes_groups_options_and_subcommands():
    assert "editor=" in complete("faceedit-bench run edi")
    assert complete("faceedit-bench run editor=nano") == ["editor=nano_banana"]
    assert {"experiment=paper_b", "experiment=paper_b_mitigation", "experiment=paper_b_winobias"} <= set(
        complete("faceedit-bench run experiment=paper_b"))
    assert "testset=pose" in complete("faceedit-bench run editor=identity testset=")
    assert complete("faceedit-bench da") == ["data"] and "run" in complete("faceedit-bench ")


def test_the_word_run_is_not_an_override_for_hydra():
    assert without_run("faceedit-bench run editor=") == "faceedit-bench editor="
    assert without_run("/venv/bin/faceedit-bench run ") == "/venv/bin/faceedit-bench "
    assert without_run("faceedit-bench run_it") == "faceedit-bench run_it"


@pytest.mark.slow
def test_hydra_arguments_pass_through(tmp_path):
    cfg = bench(tmp_path, "run", "--cfg", "job", "editor=identity", "testset=pose")
    assert cfg.returncode == 0, cfg.stderr
    assert "testset:" in cfg.stdout and "name: pose" in cfg.stdout
    helped = bench(tmp_path, "run", "--help", COLUMNS="300")  # a wide terminal: the help still fits 100 columns
    assert helped.returncode == 0 and "faceedit-bench run editor=<name>" in helped.stdout, helped.stderr
    assert "== Configuration groups ==" in helped.stdout and "editor: " in helped.stdout
    assert too_wide(helped.stdout) == []
    assert "experiment: creval, paper_b" in helped.stdout.replace("\n", " ") or "experiment" in helped.stdout
    wrong = bench(tmp_path, "run", "editor=nano_bananna")
    assert wrong.returncode == 2 and "Did you mean 'nano_banana'" in wrong.stderr
    odd = bench(tmp_path, "run", "--shell-completion", "install=fish")
    assert odd.returncode == 2 and "not provided" in odd.stderr


@pytest.mark.slow
def test_a_sweep_of_the_smoke_preset_prints_summaries_within_100_columns(tmp_path):
    """``-m`` through the console script; the smoke preset's console summary at a 100-column terminal."""
    out = bench(tmp_path, "run", "-m", "experiment=smoke", "testset=pose,hair", *FAST, COLUMNS="100")
    assert out.returncode == 0, out.stderr[-3000:]
    runs = sorted((tmp_path / "ws" / "runs").glob("*/report.json"))
    assert {json.loads(p.read_text())["testset"]["name"] for p in runs} == {"pose", "hair"}
    paths = ("Artifacts: ", "#0 ", "#1 ", "[")  # the run folders (whole, to copy), Hydra's own log lines
    assert [line for line in out.stdout.splitlines() if len(line) > 100 and not line.startswith(paths)] == []
    assert out.stdout.count("Run identity@") == 2 and "2 jobs of the sweep" in out.stdout


def test_ls_lists_the_experiment_presets_and_a_misspelt_one_is_refused_before_work(tmp_path, capsys):
    from faceedit_bench.cli import main

    assert main(["ls", "experiment"]) == 0
    from faceedit_bench.plugin.manager import get_plugins
    from faceedit_bench.run.group_options import yaml_options

    presets = {p.stem for p in (Path(__file__).resolve().parent.parent / "conf" / "experiment").glob("*.yaml")}
    presets |= yaml_options(get_plugins().searchpath(), "experiment")  # a protocol package's presets too
    listed = capsys.readouterr().out.split(":", 1)[1].replace("\n", " ")
    assert {name.strip() for name in listed.split(",")} == presets
    wrong = bench(tmp_path, "run", "experiment=paper_bb")
    assert wrong.returncode == 2 and "Did you mean 'paper_b'" in wrong.stderr
    assert not (tmp_path / "ws").exists()  # refused before anything was created
