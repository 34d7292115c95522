"""Question-set files that cannot silently be wrong (issue 20.12), through the real CLI: refused without
their hash unless re-frozen on purpose, validated as a whole (the bad field's path in the message, exit 2,
never a traceback), size- and depth-capped, question ids that stay apart, and outputs no kill can half-write."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from faceedit_bench_creval import question_file

from faceedit_bench.testing import run_cli

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def frozen(tmp_path_factory) -> Path:
    """The pose test set's taxonomy question set, frozen by the CLI."""
    out = tmp_path_factory.mktemp("qs") / "pose_qa.json"
    assert run_cli(["questions", "generate", "--testset", "pose", "--taxonomy", "--out", str(out)]) == 0
    return out


def edited(frozen: Path, tmp_path: Path, change) -> Path:
    data = json.loads(frozen.read_text())
    change(data)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data))
    return path


def check(path: Path, capsys) -> tuple[int, str]:
    capsys.readouterr()
    code = run_cli(["questions", "check", str(path)])
    captured = capsys.readouterr()
    return code, captured.err + captured.out


def test_a_tampered_file_whose_hash_was_deleted_is_refused_until_refrozen(frozen, tmp_path, capsys):
    def tamper(data):
        data["items"][0]["questions"]["IF"][0]["answer"] = "No"
        del data["content_hash"]

    path = edited(frozen, tmp_path, tamper)
    code, said = check(path, capsys)
    assert code == 2 and "no content_hash" in said and "hash verified" not in said
    assert "faceedit-bench questions freeze" in said
    # the run is refused before anything is built
    assert run_cli(["questions", "show", str(path)]) == 2
    # re-freezing is an explicit act; then it loads under its new hash
    assert run_cli(["questions", "freeze", str(path)]) == 0
    refrozen = json.loads(path.read_text())
    assert refrozen["content_hash"] != json.loads(frozen.read_text())["content_hash"]
    assert run_cli(["questions", "show", str(path)]) == 0
    code, said = check(path, capsys)  # it loads; the check still sees it is not what the taxonomy writes
    assert code == 1 and "DIFFERS from the taxonomy generator" in said


def test_refreezing_a_changed_file_whose_stale_hash_is_still_there(frozen, tmp_path, capsys):
    path = edited(frozen, tmp_path, lambda d: d["items"][0].update(instruction="changed on purpose"))
    code, said = check(path, capsys)
    assert code == 2 and "changed after it was frozen" in said
    out = tmp_path / "refrozen.json"
    assert run_cli(["questions", "freeze", str(path), "--out", str(out)]) == 0
    assert run_cli(["questions", "show", str(out)]) == 0
    assert json.loads(path.read_text()) != json.loads(out.read_text())


HOSTILE = {
    "content_hash_a_number": (lambda d: d.update(content_hash=123), "content_hash:"),
    "excluded_strings": (lambda d: d.update(excluded=["x"]), "excluded[0]:"),
    "provenance_a_list": (lambda d: d.update(provenance=[1, 2]), "provenance:"),
    "category_a_list": (lambda d: d["items"][0].update(category=["Hair", "Pose"]), "items[0].category:"),
    "dimension_an_object": (lambda d: d["items"][1].update(dimension={"a": 1}), "items[1].dimension:"),
    "k_a_string": (lambda d: d["items"][0].update(k="1"), "items[0].k:"),
    "weight_out_of_range": (lambda d: d["items"][0]["questions"]["VC"][0].update(weight=4),
                            "items[0].questions.VC[0].weight:"),
    "choices_not_strings": (lambda d: d["items"][0]["questions"]["VQ"][1].update(choices=[1, 2]),
                            "items[0].questions.VQ[1].choices[0]:"),
    "answer_not_a_choice": (lambda d: d["items"][0]["questions"]["IF"][0].update(answer="Maybe"),
                            "items[0].questions.IF[0]: Q1: the expected answer 'Maybe'"),
    "items_an_object": (lambda d: d.update(items={"a": 1}), "items:"),
    "unknown_field": (lambda d: d["items"][0].update(colour="red"), "items[0].colour:"),
    "metric_missing": (lambda d: d["items"][0]["questions"].pop("VQ"), "items[0].questions.VQ:"),
    "source_image_not_a_hash": (lambda d: d["items"][0].update(source_image="face.png"), "items[0].source_image:"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_every_bad_field_is_a_clear_error_with_its_path(case, frozen, tmp_path, capsys):
    change, where = HOSTILE[case]
    code, said = check(edited(frozen, tmp_path, change), capsys)
    assert code == 2, said
    assert where in said and "Traceback" not in said


@pytest.mark.parametrize("ids", [("Q1", "q1"), ("Q1", "Q1b"), ("Q1", "Q1.1"), ("Q2", " Q2: Is it?")])
def test_question_ids_that_collide_once_normalised_are_refused(ids, frozen, tmp_path, capsys):
    def rename(data):
        for q, new in zip(data["items"][0]["questions"]["VC"], ids):
            q["question_id"] = new

    code, said = check(edited(frozen, tmp_path, rename), capsys)
    assert code == 2 and "items[0].questions.VC" in said and "would share one answer" in said


def test_a_file_nested_200000_deep_is_refused_not_a_recursion_error(frozen, tmp_path, capsys):
    data = frozen.read_text()
    path = tmp_path / "deep.json"
    path.write_text(data.replace('"provenance": {', '"provenance": {"x": ' + "[" * 200_000 + "]" * 200_000 + ", ", 1))
    code, said = check(path, capsys)
    assert code == 2 and "nested deeper than 64 levels" in said


def test_provenance_deeper_than_the_cap_but_readable_is_refused(frozen, tmp_path, capsys):
    deep: dict = {}
    node = deep
    for _ in range(question_file.MAX_DEPTH + 2):
        node["x"] = {}
        node = node["x"]
    code, said = check(edited(frozen, tmp_path, lambda d: d.update(provenance=deep)), capsys)
    assert code == 2 and "provenance: nests deeper than" in said


def test_a_file_over_the_size_cap_is_refused_before_it_is_read(tmp_path, capsys):
    path = tmp_path / "huge.json"
    with path.open("wb") as fh:  # sparse: no disk or memory is used for the test
        fh.truncate(question_file.MAX_FILE_BYTES + 1)
    code, said = check(path, capsys)
    assert code == 2 and "more than the 67,108,864 read at most" in said


def test_a_run_naming_a_bad_question_set_is_refused_before_any_call(plugins, compose, frozen, tmp_path,
                                                                     monkeypatch):
    from faceedit_bench.api import ConfigError
    from faceedit_bench.testing import build_run

    monkeypatch.setenv("CREVAL_FILES_KEY", "never-used")
    bad = edited(frozen, tmp_path, lambda d: d["items"][0].update(category=["Hair", "Pose"]))
    cfg = compose("dataset=synthetic", f"+dataset.params.root={tmp_path / 'faces'}", "embedder=pixel",
                  "tracking=none", "testset=pose", "judge=gemini", "judge.params.api_key_env=CREVAL_FILES_KEY",
                  "judge_metrics=[creval]", f"analysis.creval.questions=[{bad}]")
    with pytest.raises(ConfigError, match=r"items\[0\]\.category"):
        build_run(cfg, plugins)


# -- outputs a kill cannot half-write -----------------------------------------------------------

KILL_AT = {
    # the temporary file is half written when the process dies
    "while_writing": "import faceedit_bench.storage.atomic as a\n"
                     "real = a.PendingFile.__init__\n"
                     "def init(self, *args, **kw):\n"
                     "    real(self, *args, **kw)\n"
                     "    w = self.fh.write\n"
                     "    def half(data):\n"
                     "        w(data[: len(data) // 2]); self.fh.flush(); os.kill(os.getpid(), signal.SIGKILL)\n"
                     "    self.fh.write = half\n"
                     "a.PendingFile.__init__ = init\n",
    # the new file is complete under its temporary name when the process dies
    "before_the_rename": "real_replace = os.replace\n"
                         "def replace(src, dst):\n"
                         "    if str(dst).endswith('.json'): os.kill(os.getpid(), signal.SIGKILL)\n"
                         "    real_replace(src, dst)\n"
                         "os.replace = replace\n",
}


@pytest.mark.parametrize("when", sorted(KILL_AT))
@pytest.mark.parametrize("command", ["generate", "freeze"])
def test_a_kill_while_writing_a_question_set_leaves_the_old_file(when, command, frozen, tmp_path):
    out = tmp_path / "qa.json"
    out.write_text(frozen.read_text())
    old = out.read_bytes()
    argv = (["questions", "generate", "--testset", "multi_axis", "--taxonomy", "--out", str(out), "--force"]
            if command == "generate" else ["questions", "freeze", str(out)])
    # the console script's entry function, as the installed command runs it (not faceedit_bench.testing, whose
    # imports cost a fresh interpreter a second)
    code = ("import os, signal, sys\n" + KILL_AT[when] +
            "from importlib.metadata import entry_points\n"
            "(script,) = entry_points(group='console_scripts', name='faceedit-bench')\n"
            f"sys.exit(script.load()({argv!r}))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert out.read_bytes() == old  # the old file, whole
    assert run_cli(["questions", "check", str(out)]) == 0
