"""What a person reads in the terminal: the run summary, help texts, closed pipes, did-you-mean."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from faceedit_bench.cli import build_parser, main
from faceedit_bench.report.summary import cost_line, fmt_p, format_summary
from faceedit_bench.run.cost_section import _free
from faceedit_bench.run.experiment import build_experiment, run_experiment
from tests.console_fit import too_wide

BIN = Path(sys.executable).parent / "faceedit-bench"
REST = re.compile(r"``|:(class|func|mod|data|meth|attr|ref):`")


@pytest.fixture
def report(plugins, compose, synthetic):
    return run_experiment(build_experiment(compose(*synthetic, "testset=pose", "run.max_faces=4"), plugins), plugins)


def test_summary_is_aligned_tables_without_python_reprs(report, tmp_path):
    text = format_summary(report, tmp_path, width=120)
    assert "{'" not in text and "':" not in text and "[]" not in text  # no dict or list reprs
    assert "Steps: ok 80;" in text and "excluded: none" in text
    lines = text.splitlines()
    header = next(line for line in lines if line.startswith("metric "))
    row = next(line for line in lines if line.startswith("drop_fss "))
    assert header.index("mean") + len("mean") == row.index("0.000") + len("0.000")  # right-aligned under mean
    assert any(line.startswith("gender=female") for line in lines)
    assert text.count(report["scales"]["fss"][:40]) == 1  # the similarity scale is said once
    assert "Skipped oer, sc: needs an MLLM judge" in text  # one line per reason, not one per metric
    assert "Cost: editor identity free" in text
    assert "95% CI" in header and "mean [95% CI]" in text


def test_interval_headers_state_the_runs_confidence_level(plugins, compose, synthetic, tmp_path):
    # intervals at run.confidence = 0.9 are headed "90% CI", never a fixed "95% CI" (issue 37 item 10)
    exp = build_experiment(compose(*synthetic, "testset=pose", "run.max_faces=2", "run.confidence=0.9"), plugins)
    report = run_experiment(exp, plugins)
    assert report["run"]["confidence"] == 0.9
    text = format_summary(report, tmp_path, width=120)
    assert "90% CI" in text and "mean [90% CI]" in text and "95% CI" not in text
    page = (exp.info.output_dir / "report.html").read_text()
    assert "90% CI" in page and "95% CI" not in page


def test_cost_says_free_only_for_what_costs_nothing_per_call():
    hosted_unpriced = SimpleNamespace(prices={}, limits=SimpleNamespace(provider_key="gemini:model"))
    local = SimpleNamespace(prices={}, limits=SimpleNamespace(provider_key="local:flux"))
    assert _free(SimpleNamespace()) and _free(local)  # no provider calls / a local model
    assert not _free(hosted_unpriced)  # unknown, never free
    report = {"components": {"editor": {"name": "nano_banana"}, "judge": {"name": "gemini"}},
              "cost": {"free": [], "by_component": {"editor": None, "judge": 0.0123},
                       "estimated_usd": 0.0123, "new_usd": 0.0}}
    assert cost_line(report) == ("Cost: editor nano_banana unknown (no price table); judge gemini 0.0123 USD "
                                 "(estimated total 0.0123 USD, 0.0000 USD new in this run)")


def test_small_p_values_are_bounded_not_rounded_to_zero():
    assert (fmt_p(0.0001), fmt_p(0.0412), fmt_p(None)) == ("< 0.001", "0.041", "n/a")


def _helps() -> dict[str, str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return {"": parser.format_help(), **{name: p.format_help() for name, p in sub.choices.items()}}


def _every_help(parser, name: str = "") -> dict[str, str]:
    """The help of the command and of every subcommand under it, however deep."""
    helps = {name: parser.format_help()}
    for action in parser._actions:
        for command, p in (action.choices or {}).items() if action.nargs == "A..." else ():
            helps.update(_every_help(p, f"{name} {command}".strip()))
    return helps


def test_every_help_fits_100_columns_on_a_wide_terminal(monkeypatch):
    """argparse wraps at the terminal's width, and a choice list in braces never: at 300 columns the help ran to
    330. Every command and subcommand (the plugins' too) stays within 100."""
    monkeypatch.setenv("COLUMNS", "300")
    helps = _every_help(build_parser())
    assert {"data check", "leaderboard", "questions generate", "arena"} <= set(helps)
    wide = {command: too_wide(text) for command, text in helps.items() if too_wide(text)}
    assert not wide, wide  # Hydra's help of `run` at 300 columns: test_run_command.test_hydra_arguments_pass_through
    monkeypatch.setenv("COLUMNS", "70")  # a narrower terminal: narrower help
    assert max(len(line) for line in _every_help(build_parser())["compare"].splitlines()) <= 70


def test_help_texts_have_no_rest_markup_and_every_command_says_what_it_does():
    helps = _helps()
    assert {"compare", "ls", "testset", "leaderboard"} <= set(helps)
    for command, text in helps.items():
        assert not REST.search(text), (command, REST.search(text).group(0))
    assert helps[""].startswith("usage: faceedit-bench")
    assert "faceedit-bench run editor=<name>" in helps[""] and "--shell-completion install=bash" in helps[""]
    assert "build the leaderboard pages" in helps["leaderboard"]


def test_closed_pipe_ends_quietly(tmp_path):
    """`faceedit-bench ... | head -1` with more output than a pipe holds: no traceback."""
    from faceedit_bench.testsets import frozen_content

    content = frozen_content("pose")
    content["sessions"] = [{**s, "session_id": f"{s['session_id']}-{i}"} for i in range(400)
                           for s in content["sessions"]]
    big = tmp_path / "big.json"
    big.write_text(json.dumps(content))
    out = subprocess.run(f"'{BIN}' testset show '{big}' | head -1", shell=True, capture_output=True, text=True,
                         timeout=120, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert out.stdout.startswith("Test set pose v1.0.0")
    assert "Traceback" not in out.stderr and "BrokenPipeError" not in out.stderr, out.stderr


def test_ls_suggests_the_group_meant(capsys):
    assert main(["ls", "edtor"]) == 2
    err = capsys.readouterr().err
    assert "unknown group 'edtor'. Did you mean 'editor'?" in err and "Groups: dataset, editor" in err


def test_testset_show_suggests_the_test_set_meant(capsys):
    assert main(["testset", "show", "multiaxis"]) == 2
    assert "Did you mean 'multi_axis'?" in capsys.readouterr().err


def test_misspelt_run_folder_or_key_gets_a_suggestion(tmp_path, capsys, monkeypatch):
    runs = tmp_path / "ws" / "runs"
    for name in ("identity-pose-sample-dlib-dba7e7704e05", "replay-pose-sample-dlib-70bbf21784c6"):
        (runs / name).mkdir(parents=True)
    monkeypatch.setenv("FACEEDIT_BENCH_HOME", str(tmp_path / "ws"))
    meant = runs / "identity-pose-sample-dlib-dba7e7704e05"
    assert main(["report", str(runs / "identity-pose-sample-dlb-dba7e7704e05")]) == 2  # a typo in the name
    err = capsys.readouterr().err
    assert f"Did you mean {meant}?" in err and "replay" not in err
    assert main(["compare", "dba7e7704e50", str(meant)]) == 2  # a mistyped run key, no folder at all
    assert f"Did you mean {meant}?" in capsys.readouterr().err
    assert main(["export-replay", str(runs / "dba7e77"), str(tmp_path / "out")]) == 2  # a key prefix
    assert f"Did you mean {meant}?" in capsys.readouterr().err
    assert main(["submit", "identity-pose-sample-dlib-dba7e7704e0"]) == 2
    assert "Did you mean" in capsys.readouterr().err
