"""``faceedit-bench questions``: write, show, check and answer CREval question sets (docs/creval.md).

* ``generate``: a judge writes the questions of CREval-Bench's items (``--bench``) or of a test set's
  single-step sessions on a dataset's faces (``--testset --dataset``), or the taxonomy writes those of a
  taxonomy-bound test set (``--testset --taxonomy``, the creval_face questions); frozen into a file.
* ``show``: a question set (a file, a CREval-Bench folder, or a builtin test set's taxonomy questions).
* ``check``: a file's content hash, and for taxonomy-written sets that they still match the generator.
* ``freeze``: re-freeze a file edited on purpose (a new content hash); a file without one is refused
  everywhere else.
* ``score``: answer a question set for a folder of edited images (CREval-Bench's own workflow: images
  edited elsewhere, named like the source images), and print the Table 2 layout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from faceedit_bench.api import FaceEditBenchError

DESCRIPTION = (__doc__ or "").replace("``", "")


def _judge(name: str | None, params: list[str]) -> tuple[Any, str]:
    from faceedit_bench.api import create_registered
    from faceedit_bench.api.sections import key_values
    from faceedit_bench_creval.generate import DEFAULT_GENERATOR

    judge_name, given = (name, key_values(params, "-p")) if name else (DEFAULT_GENERATOR[0], {**DEFAULT_GENERATOR[1],
                                                                                      **key_values(params, "-p")})
    return create_registered("judges", judge_name, given), judge_name


def _load_any(what: str) -> Any:
    """A question set from a file, a CREval-Bench folder, or a builtin test set (its taxonomy questions)."""
    from faceedit_bench.api.judging import Taxonomy, load_testset
    from faceedit_bench_creval.bench import read_bench
    from faceedit_bench_creval.binding import resolve_entry
    from faceedit_bench_creval.face import face_question_set
    from faceedit_bench_creval.questions import load_question_set

    if what in Taxonomy.TESTSETS:
        return face_question_set(load_testset(what))
    loader, path = resolve_entry(what)
    return load_question_set(path) if loader == "file" else read_bench(path)[1]


def _write(qset: Any, out: Path, force: bool) -> None:
    from faceedit_bench.api import atomic_open
    if out.exists() and not force:
        raise FaceEditBenchError(f"{out} exists; a frozen question set is never overwritten (use --force)")
    with atomic_open(out, "w", encoding="utf-8") as fh:
        fh.write(qset.to_json())
    print(f"wrote {len(qset.items)} items ({len(qset.excluded)} excluded) to {out}; content hash "
          f"{qset.content_hash}")


def _source_items(args: argparse.Namespace) -> tuple[list[Any], dict[str, Any]]:
    from faceedit_bench.api import create_registered
    from faceedit_bench.api.judging import load_testset
    from faceedit_bench.api.sections import key_values
    from faceedit_bench_creval.bench import read_bench
    from faceedit_bench_creval.generate import SourceItem

    if args.bench:
        items, _ = read_bench(args.bench)
        return ([SourceItem(i.item_id, i.item_id, 1, i.instruction, i.image, i.category, i.dimension, False)
                 for i in items], {"name": "creval_bench", "items": len(items)})
    testset = load_testset(args.testset if not Path(args.testset).suffix else Path(args.testset))
    if any(len(s.steps) != 1 for s in testset.sessions):
        raise FaceEditBenchError(f"test set {testset.name} has chained sessions: an MLLM writes questions about a "
                                 "source image, known only for single edits. Use --taxonomy (creval_face) instead.")
    if not args.dataset:
        raise FaceEditBenchError("--testset needs --dataset (the faces whose images the questions are about), "
                                 "e.g. --dataset fairface -d root=/data/fairface")
    dataset = create_registered("datasets", args.dataset, key_values(args.dataset_param, "--dataset-param"))
    faces = list(dataset.faces())[:args.max_faces] if args.max_faces else list(dataset.faces())
    items = [SourceItem(f"{face.face_id}|{s.session_id}", s.session_id, 1, s.steps[0].instruction, face.image,
                        *(s.steps[0].prompt_category.partition("/")[::2] if s.steps[0].prompt_category else (None, None)))
             for face in faces for s in testset.sessions]
    return items, {"name": testset.name, "version": testset.version, "content_hash": testset.content_hash,
                   "dataset": args.dataset, "faces": len(faces)}


def _generate(args: argparse.Namespace) -> int:
    from faceedit_bench.api.judging import load_testset
    from faceedit_bench_creval.face import face_question_set
    from faceedit_bench_creval.generate import generate_question_set

    if args.taxonomy:
        if not args.testset:
            raise FaceEditBenchError("--taxonomy writes a test set's creval_face questions: give --testset")
        _write(face_question_set(load_testset(args.testset)), args.out, args.force)
        return 0
    if bool(args.bench) == bool(args.testset):
        raise FaceEditBenchError("give either --bench <CREval-Bench folder> or --testset <name> --dataset <name>")
    items, source = _source_items(args)
    judge, judge_name = _judge(args.judge, args.param)
    qset, calls = generate_question_set(items, judge, judge_name, Path(args.workspace).expanduser(),
                                        name=args.name or f"{source['name']}-questions", source=source)
    print(f"{calls} judge calls")
    _write(qset, args.out, args.force)
    for e in qset.excluded:
        print(f"excluded {e['item_id']} ({e['metric']}: {e['outcome']}; {e['reason']})")
    below = qset.provenance.get("below_minimum") or {}
    for metric, n in (below.get("items") or {}).items():
        if n:
            print(f"{n} item(s) got fewer than {below['minimum']} {metric} questions: kept as written")
    return 0


def _show(args: argparse.Namespace) -> int:
    qset = _load_any(args.what)
    if args.json:
        print(qset.to_json(), end="")
        return 0
    print(json.dumps(qset.describe(), indent=1))
    for item in qset.items:
        if args.item and item.item_id != args.item:
            continue
        print(f"\n{item.item_id} (session {item.session_id}, step {item.k}): {item.instruction}")
        for metric, questions in item.questions.items():
            for q in questions:
                print(f"  {metric} {q.question_id} w{q.weight} [{q.answer}] {q.question}")
        if not args.item:
            print("  ... (--item <id> for one item, --json for all)")
            break
    return 0


def _check(args: argparse.Namespace) -> int:
    from faceedit_bench.api.judging import Taxonomy, load_testset
    from faceedit_bench_creval.binding import resolve_entry
    from faceedit_bench_creval.face import face_question_set

    stale = 0
    for what in args.what or list(Taxonomy.TESTSETS):
        qset = _load_any(what)  # a file whose content no longer matches its hash fails to load
        source = qset.provenance.get("source_testset") or {}
        if qset.provenance.get("generator") == "taxonomy" and source.get("name") in Taxonomy.TESTSETS:
            fresh = face_question_set(load_testset(source["name"]))
            same = fresh.content_hash == qset.content_hash
            stale += not same
            print(f"{what}: {qset.content_hash[:16]} {'matches' if same else 'DIFFERS from'} the taxonomy generator")
        elif resolve_entry(what)[0] == "file":
            print(f"{what}: {qset.content_hash[:16]} ({len(qset.items)} items) loads, hash verified")
        else:  # a published layout carries no hash of its own: this one is computed from what was read
            print(f"{what}: {qset.content_hash[:16]} ({len(qset.items)} items) loads, every file valid")
    return 1 if stale else 0


def _freeze(args: argparse.Namespace) -> int:
    from faceedit_bench.api import atomic_open
    from faceedit_bench_creval.questions import load_question_set

    qset = load_question_set(args.file, refreeze=True)  # every field but the old hash is still checked
    out = args.out or args.file
    with atomic_open(out, "w", encoding="utf-8") as fh:
        fh.write(qset.to_json())
    print(f"froze {len(qset.items)} items into {out}; content hash {qset.content_hash}. Runs that answer this set "
          "are new runs: its hash is part of the metric's identity.")
    return 0


def _score(args: argparse.Namespace) -> int:
    from faceedit_bench.api import atomic_open
    from faceedit_bench_creval.answer_folder import answer_folder, table_text
    from faceedit_bench_creval.answers_table import write_answer_table

    judge, judge_name = _judge(args.judge, args.param)
    section, items = asyncio.run(answer_folder(_load_any(args.questions), Path(args.originals), Path(args.edited),
                                               judge, judge_name, Path(args.workspace).expanduser(),
                                               on_failure=args.on_failure))
    print(table_text(section))
    if args.out:  # each file atomic; the section last, so a section on disk always has its answers beside
        answers = write_answer_table(args.out.with_name(f"{args.out.stem}_answers.csv"), items)
        with atomic_open(args.out, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(section, indent=1) + "\n")
        print(f"wrote {args.out} and {answers}")
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser("questions", help="write, show, check or answer CREval question sets (docs/creval.md)",
                       description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    qs = p.add_subparsers(dest="questions_command", required=True)
    g = qs.add_parser("generate", help="write and freeze a question set")
    g.add_argument("--bench", help="CREval-Bench folder whose items get questions")
    g.add_argument("--testset", help="builtin test set or test-set file")
    g.add_argument("--taxonomy", action="store_true", help="write the test set's questions from the taxonomy")
    g.add_argument("--dataset", help="dataset whose faces' images the questions are about (with --testset)")
    g.add_argument("-d", "--dataset-param", action="append", default=[], metavar="KEY=VALUE")
    g.add_argument("--max-faces", type=int, help="use the first N faces only")
    g.add_argument("--judge", help="registered judge (default: openai with Qwen2.5-VL-72B-Instruct on a local "
                                   "OpenAI-compatible server, as CREval does)")
    g.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE", help="judge parameter")
    g.add_argument("--out", type=Path, required=True)
    g.add_argument("--name")
    g.add_argument("--workspace", default=".faceedit_bench", help="where answers are cached (ledger)")
    g.add_argument("--force", action="store_true")
    g.set_defaults(func=_generate)
    s = qs.add_parser("show", help="show a question set (file, CREval-Bench folder or builtin test set)")
    s.add_argument("what")
    s.add_argument("--item", help="show this item's questions")
    s.add_argument("--json", action="store_true", help="the whole set as JSON")
    s.set_defaults(func=_show)
    c = qs.add_parser("check", help="verify question sets' hashes (default: the builtin test sets' taxonomy sets)")
    c.add_argument("what", nargs="*")
    c.set_defaults(func=_check)
    f = qs.add_parser("freeze", help="re-freeze a question-set file edited on purpose (writes its new content hash)")
    f.add_argument("file", type=Path)
    f.add_argument("--out", type=Path, help="write the frozen set here (default: over the file itself)")
    f.set_defaults(func=_freeze)
    a = qs.add_parser("score", help="answer a question set for a folder of edited images; print Table 2's layout")
    a.add_argument("questions", help="question-set file or CREval-Bench folder")
    a.add_argument("--originals", required=True, help="folder of the source images (<item>.<ext>)")
    a.add_argument("--edited", required=True, help="folder of the edited images (<item>.<ext>)")
    a.add_argument("--judge", required=True, help="registered judge, e.g. openai -p model=gpt-4o (the paper's)")
    a.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE")
    a.add_argument("--on-failure", choices=("zero", "exclude"), default="zero",
                   help="an item without an edited image or with a failed answer call: zero (CREval's rule, the "
                        "default) or exclude; the other rule's overall is printed beside")
    a.add_argument("--out", type=Path, help="write the creval section as JSON")
    a.add_argument("--workspace", default=".faceedit_bench")
    a.set_defaults(func=_score)
