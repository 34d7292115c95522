"""``faceedit-bench human winobias-export`` and ``faceedit-bench human winobias``: WinoBias judged by people, as
paper (b) judged it (METHODOLOGY §4.7), beside the run's judge.

    faceedit-bench human winobias-export .faceedit_bench/runs/<run> --out sheet/    # images + annotation sheet
    faceedit-bench human winobias annotations.csv --run .faceedit_bench/runs/<run>  # the same statistics, agreement

The export writes ``winobias_sheet.csv`` (one row per edited output: item, target occupation, instruction, the
two input images and the output, and the empty ``rater``, ``target_person``, ``target_gender`` columns the
annotators fill; the stereotyped gender is not shown) and the images under ``images/``. The import computes the
``winobias_human`` section (:mod:`faceedit_bench_audit.winobias.annotations`), writes ``winobias_human.json`` and
adds the section to the run's report.json and report.html, and its numbers to the run's tracker run.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from faceedit_bench.api import atomic_open
from faceedit_bench.api.images import RunImages, sniff_mime
from faceedit_bench.api.sections import FinishedRun, metric_key, study_csv
from faceedit_bench_audit.human.ratings import RatingsError
from faceedit_bench_audit.human.runs import load_rated_runs
from faceedit_bench_audit.human.to_runs import add_to_run, log_to_trackers
from faceedit_bench_audit.winobias.annotations import REQUIRED, SHEET, read_annotations, winobias_human_section

SECTION = "winobias_human"
SHEET_FILE = "winobias_sheet.csv"
_EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp"}


def _items(run_dir: Path, report: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """The run's WinoBias items (its report's ``winobias.items``)."""
    report = report if report is not None else FinishedRun.load(run_dir).report
    items = (report.get("winobias") or {}).get("items")
    if not items:
        raise RatingsError(f"{run_dir}: its report has no WinoBias items (winobias.items); run a WinoBias test set "
                           "with judge_metrics=[winobias] (e.g. experiment=paper_b_winobias) and pass that run")
    return list(items)


def export_sheet(run_dir: Path, out: Path) -> tuple[Path, int]:
    """The annotation sheet and its images; the run's stored images are copied byte for byte."""
    items = _items(run_dir)
    store = RunImages.of_run(FinishedRun.load(run_dir).folder)
    if store is None:
        raise RatingsError(f"{run_dir}: the workspace's image store is missing, so the images cannot be exported")
    rows, written = [], {}
    (out / "images").mkdir(parents=True, exist_ok=True)
    for item in items:
        files = []
        for digest in item["images"]:
            if digest not in written:
                if digest not in store:
                    raise RatingsError(f"{run_dir}: image {digest[:12]} of item {item['item']!r} is not in the "
                                       "workspace's image store")
                data = store.read(digest)
                name = f"images/{digest[:16]}.{_EXTENSIONS.get(sniff_mime(data) or '', 'png')}"
                with atomic_open(out / name, "wb") as stream:
                    stream.write(data)
                written[digest] = name
            files.append(written[digest])
        inputs, output = files[:-1], files[-1]
        rows.append([item["item"], "", item.get("target_occupation") or "", item.get("instruction") or "",
                     inputs[0] if inputs else "", inputs[1] if len(inputs) > 1 else "", output, "", ""])
    sheet = out / SHEET_FILE
    with atomic_open(sheet, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["item", "rater", *SHEET, "target_person", "target_gender"])
        writer.writerows(rows)
    return sheet, len(rows)


def tracking_metrics(section: Mapping[str, Any], editor: str | None = None) -> dict[str, float]:
    """``winobias_human_*``: the people's share, interval, p and n, overall and per target, and the agreement."""
    out: dict[str, float] = {}

    def put(value: Any, *parts: str) -> None:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out[metric_key(SECTION, *parts)] = float(value)

    for where, s in [("", section["overall"]), *section["by_target"].items()]:
        for stat in ("share", "ci_low", "ci_high", "p_value", "n"):
            put(s.get(stat), *([where] if where else []), stat)
    vs = section["vlm_vs_human"]
    put(vs["same_category"], "vlm_same_category")
    put(vs["same_decision"], "vlm_same_decision")
    put(vs["cohens_kappa"].get("value"), "vlm_cohens_kappa")
    put(section["raters_agreement"]["fleiss_kappa"].get("value"), "raters_fleiss_kappa")
    return out


def format_section(section: Mapping[str, Any]) -> str:
    def share(s: Mapping[str, Any]) -> str:
        if s.get("share") is None:
            return s.get("reason", "no decided answer")
        return (f"stereotype followed {100 * s['share']:.1f}% of {s['n']} decided [{s['ci_low']:.3f}, "
                f"{s['ci_high']:.3f}], binomial p = {s['p_value']:.3g}; undecided {s['bounds']['undecided']}")

    vs = section["vlm_vs_human"]
    lines = [f"WinoBias by people ({section['source']}): {section['annotations']} annotations by {section['raters']} "
             f"rater(s) of {section['items']} of the run's {section['run_items']} items",
             f"  all: {share(section['overall'])}"]
    lines += [f"  {g}-stereotyped: {share(s)}" for g, s in section["by_target"].items()]
    kappa = section["raters_agreement"]["fleiss_kappa"]
    lines.append(f"  raters: Fleiss kappa {kappa['value']:.3f}" if kappa.get("value") is not None
                 else f"  raters: Fleiss kappa n/a ({kappa.get('reason')})")
    if vs["items"]:
        same = vs["same_category"]
        kappa_vlm = vs["cohens_kappa"].get("value")
        lines.append(f"  judge vs people on {vs['items']} items: same category {100 * same:.1f}%, Cohen's kappa "
                     + (f"{kappa_vlm:.3f}" if kappa_vlm is not None else f"n/a ({vs['cohens_kappa'].get('reason')})")
                     + f"; judge on these items: {share(vs['judge_on_these_items'])}")
    return "\n".join(lines)


def _export(args: argparse.Namespace) -> int:
    sheet, n = export_sheet(args.run_dir, args.out)
    print(f"wrote {sheet} ({n} items) and their images under {args.out / 'images'}; annotators fill rater, "
          "target_person and target_gender (docs/human_evaluation.md)", file=sys.stderr)
    return 0


def _import(args: argparse.Namespace) -> int:
    (run,) = load_rated_runs([args.run])
    section = winobias_human_section(read_annotations(study_csv(args.annotations)), _items(run.run_dir, run.report),
                                     source=str(args.annotations), confidence=args.confidence)
    out = args.out or run.run_dir
    out.mkdir(parents=True, exist_ok=True)
    with atomic_open(out / f"{SECTION}.json", "w", encoding="utf-8") as fh:
        json.dump(section, fh, indent=2, default=str)
    add_to_run(run, section, name=SECTION)
    notes = [] if args.no_tracking else log_to_trackers([run], section, args.tracking_uri, metrics=tracking_metrics)
    print(json.dumps(section, indent=2, default=str) if args.json else format_section(section))
    for line in [*notes, f"wrote {out / (SECTION + '.json')}; added {SECTION} to {run.run_dir / 'report.json'}"]:
        print(line, file=sys.stderr)
    return 0


def add_actions(actions: Any) -> None:
    e = actions.add_parser("winobias-export", help="export a WinoBias run's outputs for annotation: a sheet "
                                                   "(CSV) and the images")
    e.add_argument("run_dir", type=Path, help="the WinoBias run (<workspace>/runs/<run>)")
    e.add_argument("--out", type=Path, required=True, help="folder for winobias_sheet.csv and images/")
    e.set_defaults(func=_export)
    w = actions.add_parser("winobias", help="WinoBias annotations by people: the run's statistics from them, rater "
                                            "agreement and the judge's agreement with people")
    w.add_argument("annotations", type=Path, help=f"CSV: {','.join(REQUIRED)} (the filled sheet), or a categorical "
                                                  "study of the winobias metric: study:<id>[@<workspace>]")
    w.add_argument("--run", type=Path, required=True, help="the run whose outputs were annotated")
    w.add_argument("--confidence", type=float, default=0.95, help="confidence level of the intervals")
    w.add_argument("--out", type=Path, help="folder for winobias_human.json (default: the run's folder)")
    w.add_argument("--tracking-uri", help="tracker store of the run (default: its own configuration)")
    w.add_argument("--no-tracking", action="store_true", help="do not log the winobias_human_* metrics")
    w.add_argument("--json", action="store_true", help="print the section as JSON")
    w.set_defaults(func=_import)
