"""Mistakes in the files and settings a user gives reach the user as one 'Error: ...' line
that says where and how to fix it, never as a traceback, through the real CLI (issue 10,
item 6): text in another encoding than UTF-8, annotations that select no face, and a
mandatory setting left unset. One case runs the command in a process of its own (its exit status and stderr);
the others run its entry function in the test's process (tests/cli_in_process.py): the same checks and message."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_in_process import bench_in_process

FAST = ["tracking=none", "run.max_faces=1", "run.max_sessions=1", "run.workers=1", "run.progress=false"]


def bench_process(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FACEEDIT_BENCH_HOME": str(tmp_path / "ws")}
    return subprocess.run([sys.executable, "-m", "faceedit_bench", *args, *FAST], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=300)


@pytest.fixture
def bench(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]):
    """The command run in this process (tests/cli_in_process.py)."""
    return lambda *args: bench_in_process(monkeypatch, capfd, tmp_path, *args, *FAST)


def fails_cleanly(out: subprocess.CompletedProcess[str], *expected: str) -> None:
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr + out.stdout, out.stderr
    assert out.stderr.startswith("Error: "), out.stderr
    for text in expected:
        assert text in out.stderr, out.stderr


def to_cp1252(path: Path, line: int, old: str, new: str) -> None:
    """Re-save ``path`` as Windows-1252 (what a spreadsheet often writes), with ``new`` (not
    ASCII) replacing ``old`` on the 1-based ``line``."""
    lines = path.read_text(encoding="utf-8").split("\n")
    assert old in lines[line - 1]
    lines[line - 1] = lines[line - 1].replace(old, new, 1)
    path.write_bytes("\n".join(lines).encode("cp1252"))


UTF8_HINT = ("is not UTF-8", "Re-save it as UTF-8")


def test_folder_manifest_in_cp1252(tmp_path, make_folder):
    root = make_folder([("a.png", "alice", "base", "female", "", ""), ("b.png", "zoe", "base", "", "", ""),
                        ("c.png", "zoe", "reference", "", "", "")])
    to_cp1252(root / "manifest.csv", 3, "zoe", "zoë")
    out = bench_process(tmp_path, "dataset=folder", f"dataset.params.root={root}")  # a process of its own
    fails_cleanly(out, f"{root / 'manifest.csv'}, line 3, column 9: byte 0xeb", *UTF8_HINT)


def test_fairface_labels_in_cp1252(bench, make_fairface):
    root = make_fairface()
    to_cp1252(root / "fairface_label_val.csv", 4, "Latino_Hispanic", "Latino_Hispanic\u00e9")
    fails_cleanly(bench("dataset=fairface", f"dataset.params.root={root}"),
                  "fairface_label_val.csv, line 4", *UTF8_HINT)


def test_celebset_csv_in_cp1252(bench, make_celebset_csv):
    root = make_celebset_csv([
        ("01/a.jpg", "Penelope Cruz", "1", "female", "light", "1974-04-28", "2000", "26", "young", "base"),
        ("01/b.jpg", "Penelope Cruz", "1", "female", "light", "1974-04-28", "2001", "27", "young", "reference"),
    ])
    to_cp1252(root / "celebset.csv", 3, "Penelope", "Pen\u00e9lope")
    fails_cleanly(bench("dataset=celebset", f"dataset.params.root={root}"),
                  "celebset.csv, line 3", *UTF8_HINT)


def test_celeba_annotations_in_cp1252(bench, make_celeba):
    root = make_celeba()
    to_cp1252(root / "Anno" / "identity_CelebA.txt", 2, "000002.jpg", "00000\u00e92.jpg")
    fails_cleanly(bench("dataset=celeba", f"dataset.params.root={root}"),
                  "identity_CelebA.txt, line 2", *UTF8_HINT)


def test_testset_json_in_cp1252(bench, tmp_path):
    from faceedit_bench.testsets import frozen_content

    content = frozen_content("pose")
    content["description"] = "caf\u00e9"
    path = tmp_path / "mine.json"
    path.write_bytes(json.dumps(content, indent=1, ensure_ascii=False).encode("cp1252"))
    line = json.dumps(content, indent=1, ensure_ascii=False).split("\n").index(
        next(x for x in json.dumps(content, indent=1, ensure_ascii=False).split("\n") if "caf" in x)) + 1
    fails_cleanly(bench("testset=file", f"testset.params.path={path}"), f"mine.json, line {line}",
                  *UTF8_HINT)


def test_human_labels_in_cp1252(bench, tmp_path, monkeypatch):
    path = tmp_path / "labels.csv"
    path.write_bytes("kind,image,attribute\nstate,a.png,caf\u00e9\n".encode("cp1252"))
    monkeypatch.setenv("GEMINI_API_KEY", "test-key")  # the judge is built, never called: the labels fail first
    fails_cleanly(bench("judge=gemini", "judge.params.base_url=http://127.0.0.1:9",
                        f"analysis.human_labels={path}"), "labels.csv, line 2", *UTF8_HINT)


def test_utf16_is_named(bench, make_folder):
    root = make_folder([("a.png", "alice", "base", "female", "", "")])
    manifest = root / "manifest.csv"
    manifest.write_bytes(manifest.read_text().encode("utf-16"))
    fails_cleanly(bench("dataset=folder", f"dataset.params.root={root}"), "line 1",
                  "it looks like UTF-16", *UTF8_HINT)


@pytest.mark.parametrize("rows", [[], [("r.png", "alice", "reference", "", "", "")]], ids=["header_only", "no_base"])
def test_manifest_without_base_rows_is_refused(bench, tmp_path, make_folder, rows):
    root = make_folder(rows)
    out = bench("dataset=folder", f"dataset.params.root={root}")
    fails_cleanly(out, f"{root / 'manifest.csv'} lists no base image", "0 faces", "Add a row per image")
    assert not (tmp_path / "ws" / "runs").exists()  # refused before any run started


def test_fairface_header_only_is_refused(bench, make_fairface):
    root = make_fairface({"val": ()})
    fails_cleanly(bench("dataset=fairface", f"dataset.params.root={root}"),
                  "fairface_label_val.csv lists no image", "0 faces")


def test_dataset_limit_zero_is_refused(bench, make_folder):
    root = make_folder([("a.png", "alice", "base", "female", "", "")])
    fails_cleanly(bench("dataset=folder", f"dataset.params.root={root}", "+dataset.params.limit=0"),
                  "dataset 'folder' selects 0 faces")


@pytest.mark.parametrize("args,key,example", [
    (["dataset=folder"], "dataset.params.root", "e.g. python -m faceedit_bench dataset=folder dataset.params.root=/data/myfaces"),
    (["dataset=celeba"], "dataset.params.root", "e.g. python -m faceedit_bench dataset=celeba dataset.params.root="),
    (["testset=file"], "testset.params.path", "e.g. python -m faceedit_bench testset=file testset.params.path=my_testset.json"),
])
def test_missing_mandatory_setting_names_key_and_example(bench, tmp_path, args, key, example):
    out = bench(*args)
    fails_cleanly(out, f"required setting not given: {key}", example)
    assert not (tmp_path / "ws" / "runs").exists()
