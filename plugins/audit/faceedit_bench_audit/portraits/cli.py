"""``faceedit-bench portraits select|show|check|approve``: paper (b)'s FairFace grid, made, shown and frozen."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from faceedit_bench.api import ConfigError
from faceedit_bench.api.sections import key_values


def add_parser(sub: Any) -> None:
    p = sub.add_parser("portraits", help="select paper (b)'s 84-cell FairFace portrait grid with automatic quality "
                                         "checks, draw its contact sheet, check or approve a frozen selection")
    actions = p.add_subparsers(dest="portraits_action", required=True)
    s = actions.add_parser("select", help="select one portrait per cell (seeded), check it, freeze the selection")
    s.add_argument("--root", type=Path, required=True, help="FairFace folder (label CSVs or HF parquet layout)")
    s.add_argument("--out", type=Path, required=True, help="new folder: manifest.json, the images, contact_sheet.png")
    s.add_argument("--split", default="train", choices=["train", "val"], help="FairFace split (paper (b): train)")
    s.add_argument("--padding", type=float, default=1.25, help="FairFace release, 0.25 or 1.25 (paper (b): 1.25)")
    s.add_argument("--layout", default="auto", choices=["auto", "csv", "hf"])
    s.add_argument("--cache-dir", default="~/.cache/faceedit_bench/fairface", help="where parquet images are copied")
    s.add_argument("--seed", type=int, default=42, help="order of the candidates within a cell (paper (b): 42)")
    s.add_argument("--per-cell", type=int, default=1, help="portraits per cell")
    s.add_argument("--max-checks", type=int, default=50, help="candidates checked per cell before it is missing")
    s.add_argument("--detector", default="dlib", help="registered embedder that can detect() faces with landmarks")
    s.add_argument("--param", "-p", action="append", default=[], metavar="KEY=VALUE",
                   help="detector parameter (YAML value), e.g. -p upsample=1; repeatable")
    s.add_argument("--criterion", "-c", action="append", default=[], metavar="KEY=VALUE",
                   help="check threshold, e.g. -c min_face_px=128 -c max_abs_yaw_deg=20; repeatable")
    s.add_argument("--version", default="1.0.0", help="version written into the manifest")
    s.add_argument("--force", action="store_true", help="replace an existing selection in --out")
    for name, text in (("show", "print the grid and redraw its contact sheet"),
                       ("check", "verify a frozen selection (hash, image files); exit 1 if it differs"),
                       ("approve", "record that a person approved the selection (after viewing the contact sheet)")):
        a = actions.add_parser(name, help=text)
        a.add_argument("folder", type=Path, help="the selection folder (manifest.json or {Race}_{Gender}_{Age}.jpg)")
        if name == "approve":
            a.add_argument("--by", required=True, help="who approves it")
        if name == "show":
            a.add_argument("--sheet", type=Path, help="where to draw the contact sheet (default: contact_sheet.png in "
                                                      "a selection this tool made, else <folder>_contact_sheet.png "
                                                      "beside a hand-made folder: never into it)")
    p.set_defaults(func=_command)


def sheet_path(folder: Path, asked: Path | None = None) -> Path:
    """Where ``portraits show`` draws the contact sheet: into a selection this tool made (its manifest lists
    its files, so readers skip the sheet), else beside the folder: a hand-made grid is read file by file, and
    a file the tool added there would be read as a portrait."""
    from faceedit_bench_audit.portraits import grid

    hand_made = not (folder / grid.MANIFEST).exists()
    if asked is None:
        return folder.parent / f"{folder.name}_{grid.SHEET}" if hand_made else folder / grid.SHEET
    if hand_made and asked.resolve().parent == folder.resolve():
        raise ConfigError(f"--sheet {asked} is inside the hand-made grid {folder}, where every image is read as a "
                          "portrait; put it beside the folder or elsewhere")
    return asked


def _command(args: argparse.Namespace) -> int:
    from faceedit_bench_audit.portraits import grid
    from faceedit_bench_audit.portraits.sheet import draw_sheet

    if args.portraits_action == "select":
        return _select(args)
    if args.portraits_action == "approve":
        from faceedit_bench_audit.portraits.select import approve

        manifest = approve(args.folder, args.by)
        print(f"approved {manifest['content_hash'][:12]} by {args.by}")
        return 0
    from faceedit_bench_audit.portraits.dataset import FairFaceGridDataset
    from faceedit_bench_audit.portraits.select import require_selection

    require_selection(args.folder)
    if args.portraits_action == "check" and (args.folder / grid.MANIFEST).exists():
        problems = grid.verify_manifest(args.folder, grid.read_manifest(args.folder, verify=False))
        for problem in problems:
            print(f"DIFFERS: {problem}")
        if problems:
            return 1
    dataset = FairFaceGridDataset(args.folder)
    d = dataset.describe()
    print(f"{args.folder}: {d['selection']} selection {d['content_hash'][:12]}, {d['cells_filled']} of "
          f"{d['cells_expected']} cells filled, {d['n_faces']} portraits"
          + (f", approved by {d['approved_by']}" if d.get("approved_by") else ""))
    for note in d["notes"]:
        print(f"NOTE: {note}")
    if args.portraits_action == "show":
        cells = {}
        for face in dataset.partners():
            cell = face.identity.split("/")[0]
            cells.setdefault(cell, {"cell": cell, "portraits": []})["portraits"].append(
                {"file": str(face.image.relative_to(args.folder.resolve()) if face.image.is_absolute()
                             and face.image.is_relative_to(args.folder.resolve()) else face.image.name)})
        entries = [{**c, **cells.get(c["cell"], {"portraits": []})} for c in grid.cells()]
        for race in grid.RACES:
            row = [e for e in entries if e["race"] == race]
            print(f"  {grid.RACES[race]:<15}" + " ".join("#" if e["portraits"] else "." for e in row))
        print(f"wrote {draw_sheet(args.folder, entries, sheet_path(args.folder, args.sheet))}")
    return 0


def _select(args: argparse.Namespace) -> int:
    from faceedit_bench_audit.portraits import grid
    from faceedit_bench_audit.portraits.quality import Criteria
    from faceedit_bench_audit.portraits.select import (
        check_replaceable,
        fairface_reader,
        load_detector,
        select_grid,
        selection_lock,
        write_selection,
    )
    from faceedit_bench_audit.portraits.sheet import draw_sheet

    # Everything that can be wrong is found before --out is touched: a typo never costs a selection.
    criteria = Criteria.from_mapping(key_values(args.criterion, "--criterion"))
    dataset = fairface_reader()(root=args.root, split=args.split, padding=args.padding, layout=args.layout,
                                cache_dir=args.cache_dir)
    detector = load_detector(args.detector, key_values(args.param, "--param"))

    def make(tmp: Path) -> dict[str, Any]:
        manifest = select_grid(dataset, detector, tmp, seed=args.seed, per_cell=args.per_cell,
                               max_checks=args.max_checks, criteria=criteria, version=args.version,
                               detector_name=args.detector, progress=lambda line: print(line, file=sys.stderr))
        draw_sheet(tmp, manifest["cells"], tmp / grid.SHEET)
        return manifest

    with selection_lock(args.out):
        check_replaceable(args.out, force=args.force)
        manifest = write_selection(args.out, make)  # the old selection stays until the new one is complete
    filled = sum(1 for c in manifest["cells"] if c["portraits"])
    print(f"selected {filled} of {len(manifest['cells'])} cells into {args.out} "
          f"(manifest {manifest['content_hash'][:12]}); rejections: "
          + (", ".join(f"{k} {v}" for k, v in manifest["rejections"].items()) or "none"))
    for note in manifest["notes"]:
        print(f"NOTE: {note}")
    print(f"Look at {args.out / grid.SHEET}, then: faceedit-bench portraits approve {args.out} --by <name>")
    return 0
