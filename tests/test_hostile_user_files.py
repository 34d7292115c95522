"""Every reader of a user's files refuses a hostile file with one clear error: deep nesting, a huge field, wrong
types, truncation, a wrong encoding. The error is the reader's own (exit 2 in a command) and names the file;
a few commands are run end to end to show exit 2 and no traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from faceedit_bench.errors import FaceEditBenchError

DEEP = "[" * 100_000 + "]" * 100_000
HUGE_CELL = "x" * 200_000


def _testset(path: Path) -> None:
    from faceedit_bench.testsets import load_testset

    load_testset(str(path))


def _questions(path: Path) -> None:
    from faceedit_bench_creval.questions import load_question_set

    load_question_set(path)


def _report(path: Path) -> None:
    from faceedit_bench.report.compared_runs import load_run

    load_run(path)


def _votes(path: Path) -> None:
    from faceedit_bench_arena.human_votes import read_votes

    read_votes(path)


def _genai_bench(path: Path) -> None:
    from faceedit_bench_arena.human_votes import genai_bench_accuracy

    genai_bench_accuracy(path)


def _ratings(path: Path) -> None:
    from faceedit_bench_audit.human.ratings import read_ratings

    read_ratings(path)


def _annotations(path: Path) -> None:
    from faceedit_bench_audit.winobias.annotations import read_annotations

    read_annotations(path)


def _manifest(path: Path) -> None:
    from faceedit_bench.builtin.datasets.folder import FolderDataset

    FolderDataset(root=path.parent, manifest=path.name).describe()


def _portraits(path: Path) -> None:
    from faceedit_bench_audit.portraits.grid import read_manifest

    read_manifest(path.parent)


def _submission(path: Path) -> None:
    from faceedit_bench.leaderboard.limits import parse_json
    from faceedit_bench.leaderboard.schema import validate_submission

    validate_submission(parse_json(path.read_bytes(), what=str(path)))


#: reader, the file name it reads, a valid-looking start of its format (for truncation) and a wrong-typed body.
JSON_READERS: dict[str, tuple[Callable[[Path], None], str, str, str]] = {
    "test set": (_testset, "set.json", '{"name": "x", "version": "1", "sessions": [{"id": "s1"',
                 '{"name": 3, "version": [], "sessions": "many"}'),
    "question set": (_questions, "questions.json", '{"format": "faceedit_bench question set", "items": [',
                     '{"format": 7, "items": {"a": 1}}'),
    "run report given to compare": (_report, "report.json", '{"schema": "faceedit_bench/run_report", "metrics',
                                    '{"schema": "faceedit_bench/run_report", "metrics": [1, 2], "run": "x"}'),
    "portrait manifest": (_portraits, "manifest.json", '{"format": "faceedit_bench portrait grid", "cells": [',
                          '{"format": 3, "cells": "none"}'),
    "submission": (_submission, "submission.json", '{"schema": "faceedit_bench/submission/1.0", "entries": [',
                   '{"schema": 1, "report": "none"}'),
}

CSV_READERS: dict[str, tuple[Callable[[Path], None], str, str]] = {
    "votes": (_votes, "votes.csv", "model_a,model_b,vote,voter_id\n"),
    "human ratings": (_ratings, "ratings.csv", "item,rater,axis,score\n"),
    "WinoBias annotations": (_annotations, "annotations.csv", "item,rater,target_person,target_gender\n"),
    "folder manifest": (_manifest, "manifest.csv", "file,identity,role,gender,skin_tone,age\n"),
}


def _refused(reader: Callable[[Path], None], path: Path) -> str:
    with pytest.raises(FaceEditBenchError) as caught:
        reader(path)
    message = str(caught.value)
    assert path.name in message, message
    assert "Traceback" not in message and len(message.splitlines()[0]) < 600
    return message


@pytest.mark.parametrize("kind", sorted(JSON_READERS))
@pytest.mark.parametrize("hostile", ["deep", "huge", "types", "truncated", "latin1", "binary", "nan"])
def test_every_json_reader_refuses_a_hostile_file(tmp_path, kind, hostile):
    reader, name, start, wrong_types = JSON_READERS[kind]
    body = {"deep": DEEP.encode(),
            "huge": json.dumps({"name": HUGE_CELL * 5, "sessions": HUGE_CELL}).encode(),
            "types": wrong_types.encode(),
            "truncated": start.encode(),
            "latin1": '{"name": "Jos\u00e9"}'.encode("latin-1"),
            "binary": bytes(range(256)) * 4,
            "nan": b'{"name": NaN, "sessions": [Infinity]}'}[hostile]
    path = tmp_path / name
    path.write_bytes(body)
    message = _refused(reader, path)
    if hostile == "deep":
        assert "nested deeper" in message, message
    if hostile == "truncated":
        assert "line 1" in message or "not a" in message, message


@pytest.mark.parametrize("kind", sorted(CSV_READERS))
@pytest.mark.parametrize("hostile", ["huge cell", "open quote", "latin1", "binary", "wrong cells", "no header"])
def test_every_csv_reader_refuses_a_hostile_file(tmp_path, kind, hostile):
    reader, name, header = CSV_READERS[kind]
    columns = header.strip().split(",")
    row = ",".join("a" for _ in columns)
    body = {"huge cell": (header + f'"{HUGE_CELL}"' + ",a" * (len(columns) - 1) + "\n").encode(),
            "open quote": (header + '"' + row + "\n" + row * 3).encode(),
            "latin1": (header + ",".join("Jos\u00e9" for _ in columns) + "\n").encode("latin-1"),
            "binary": bytes(range(256)) * 4,
            "wrong cells": (header + row + ",extra,cells\n").encode(),
            "no header": b"just,some,words\n"}[hostile]
    path = tmp_path / name
    path.write_bytes(body)
    message = _refused(reader, path)
    if hostile == "huge cell":
        assert "characters" in message and "line 2" in message, message
    if hostile == "latin1":
        assert "is not UTF-8" in message and "line 2" in message, message


def test_a_file_over_the_size_cap_is_refused_before_it_is_read(tmp_path):
    from faceedit_bench.storage.user_files import read_json

    path = tmp_path / "big.json"
    path.write_bytes(b"[" + b"1," * 1000 + b"1]")
    with pytest.raises(FaceEditBenchError, match=r"big.json: the list is 2,003 bytes, more than the 1,000"):
        read_json(path, what="list", max_bytes=1000)


def test_a_yaml_alias_bomb_costs_only_its_distinct_containers(tmp_path):
    from faceedit_bench.storage.user_files import read_yaml

    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 12)]
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(lines) + "\n")
    data = read_yaml(path, what="config")  # 9**12 leaves if walked naively; returns at once
    assert len(data) == 12


@pytest.mark.parametrize("name", ["../outside.png", "/etc/hostname", "sub/../../outside.png"])
def test_a_manifest_may_not_name_files_outside_its_folder(tmp_path, name):
    import numpy as np

    from faceedit_bench.builtin.datasets.folder import FolderDataset
    from faceedit_bench.errors import DatasetError
    from faceedit_bench.storage.images import encode_png

    (tmp_path / "outside.png").write_bytes(encode_png(np.zeros((8, 8, 3), np.uint8)))
    root = tmp_path / "data"
    (root / "sub").mkdir(parents=True)
    (root / "manifest.csv").write_text(f"file,identity,role,gender,skin_tone,age\n{name},a,base,,,\n")
    with pytest.raises(DatasetError, match=r"manifest.csv, line 2: image .* is outside the dataset folder .*"
                                           r"dataset.params.allow_outside_root=true"):
        FolderDataset(root=root).describe()
    if name != "/etc/hostname":
        faces = list(FolderDataset(root=root, allow_outside_root=True).faces())
        assert faces[0].image.resolve() == (tmp_path / "outside.png").resolve()


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "faceedit_bench.cli", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def test_commands_refuse_hostile_files_with_exit_2_and_no_traceback(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text(DEEP)
    wrong = tmp_path / "report.json"
    wrong.write_text(json.dumps({"schema": "faceedit_bench/run_report", "metrics": [1, 2]}))
    for args, expected in [(("testset", "show", str(deep)), "nested deeper"),
                           (("compare", str(wrong), str(wrong)), "at metrics")]:
        done = _cli(*args, cwd=tmp_path)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr and expected in done.stderr, (args, done.stderr)
