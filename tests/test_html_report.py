"""The HTML run report: one self-contained page with every section the report has, all strings escaped."""

from __future__ import annotations

import base64
import copy
import csv
import io
import re
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from faceedit_bench.report import contact_sheet, html_images, html_plots
from faceedit_bench.report import html as html_report
from faceedit_bench.report.contact_sheet import contact_sheet_name
from faceedit_bench.report.contact_sheet import render as render_sheet
from faceedit_bench.report.html import render_html_report
from faceedit_bench.report.html_file import store_for_run_dir, write_html_report
from faceedit_bench.storage.store import ImageStore
from faceedit_bench.taxonomy import Taxonomy
from tests.schema_support import builtin_report_schema

HOSTILE = "<script>alert(1)</script>"
KEY = "ab" * 32
TESTSET_HASH = "cd" * 32
PNG_URI = re.compile(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"')
SHEET_URI = re.compile(r'<img class="sheet"[^>]* src="data:image/(?:webp|jpeg);base64,([A-Za-z0-9+/=]+)"')


def _summary(n: int, mean: float, sd: float, lo: float, hi: float) -> dict[str, Any]:
    return {"n": n, "mean": mean, "sd": sd, "ci_low": lo, "ci_high": hi}


def v10_report(editor: str = "sepia", **overrides: Any) -> dict[str, Any]:
    """A minimal v1.0 report (no judge): valid against faceedit_bench/schemas/run_report.schema.json."""
    report = {
        "schema": "faceedit_bench/run_report", "schema_version": "1.0", "faceedit_bench_version": "0.1.0",
        "run": {"key": KEY, "name": f"{editor}@pose/sample/dlib", "experiment": "faceedit/pose",
                "created_at": "2026-01-02T03:04:05Z", "wall_time_s": 12.5, "computed": {"embeddings": 16}},
        "components": {
            "editor": {"name": editor, "provider": "fake", "provider_version": "0.1.0",
                       "description": {"name": editor, "version": "7"}},
            "embedder": {"name": "dlib", "provider": "dlib", "provider_version": "0.1.0",
                         "description": {"name": "dlib", "version": "20.0.1+e31262d78cc0",
                                         "similarity": "1 - L2 distance"}},
            "dataset": {"name": "sample", "provider": "builtin", "provider_version": "0.1.0",
                        "description": {"name": "sample", "root": "/data/sample", "n_faces": 4}},
            "testset": {"name": "pose", "provider": "builtin", "provider_version": "0.1.0",
                        "description": {"name": "pose", "version": "1.0.0", "content_hash": TESTSET_HASH}},
            "tracking": {"name": "none", "provider": "builtin", "provider_version": "0.1.0", "description": {}},
        },
        "testset": {"name": "pose", "version": "1.0.0", "content_hash": TESTSET_HASH, "taxonomy_version": "1.0.0",
                    "reconstruction": True, "sessions": 5},
        "scales": {"fss": "1 - L2 distance between dlib descriptors", "embedder_version": "20.0.1+e31262d78cc0"},
        "counts": {"faces": {"seen": 4, "excluded": {"no_face_in_base": 1}},
                   "sessions": {"planned": 15, "included": 12, "excluded": {"step_refused": 3}},
                   "steps": {"ok": 51, "refused": 3, "skipped": 6}, "edited_images_without_face": 2},
        "metrics": {"drop_fss": {"higher_is_better": False, "unit": "%", "description": "Mean percent drop.",
                                 "undefined_sessions": 0, **_summary(12, 12.3456, 4.0, 9.8765, 14.8147)}},
        "trajectory": {"fss": [{"k": k, **_summary(12, 0.8 - 0.05 * k, 0.02, 0.79 - 0.05 * k, 0.81 - 0.05 * k)}
                               for k in range(5)]},
        "groups": {"gender": {
            "female": {"sessions_included": 6, "sessions_excluded": {}, "metrics": {
                "drop_fss": _summary(6, 10.5, 3.0, 7.35, 13.65)}},
            "male": {"sessions_included": 6, "sessions_excluded": {"step_refused": 3}, "metrics": {
                "drop_fss": _summary(6, 14.25, 4.0, 10.05, 18.45)}}}},
        "skipped_metrics": {"sc": "semantic consistency needs an MLLM judge (judge=none)",
                            "oer": "overediting rate needs an MLLM state tracker (judge=none)"},
        "notes": ["Drop_FSS uses the reconstructed formula (RECONSTRUCTION NOTE)."],
    }
    report.update(overrides)
    return report


def v11_report(editor: str = "gemini", **overrides: Any) -> dict[str, Any]:
    """A full v1.1 report: judge, disparity, overediting, cost, calls, judge reliability."""
    report = v10_report(editor)
    report["schema_version"] = "1.1"
    report["run"]["complete"] = True
    report["components"]["editor"]["description"] = {"name": editor, "model_version": "gemini-2.5-flash-image-001"}
    report["components"]["judge"] = {
        "name": "gpt_judge", "provider": "openai", "provider_version": "0.2.0",
        "description": {"model_version": "gpt-4.1-2025-04-14", "temperature": 0}}
    report["metrics"]["sc"] = {"higher_is_better": True, "unit": "x100", "description": "Semantic consistency.",
                               "undefined_sessions": 0, **_summary(12, 61.25, 10.0, 54.9, 67.6)}
    report["metrics"]["oer"] = {"higher_is_better": False, "unit": "x100", "description": "Overediting rate.",
                                "undefined_sessions": 1, **_summary(11, 27.5, 9.0, 21.45, 33.55)}
    report["skipped_metrics"] = {}
    report["trajectory"]["sc"] = [{"k": k, **_summary(12, 70 - 3 * k, 5, 66 - 3 * k, 74 - 3 * k)} for k in (1, 2, 3, 4)]
    report["counts"]["steps_by_group"] = {"gender": {"female": {"ok": 27, "refused": 1},
                                                     "male": {"ok": 24, "refused": 8}}}
    for label, fss in (("female", 0.8), ("male", 0.78)):
        report["groups"]["gender"][label]["trajectory"] = {
            "fss": [{"k": k, **_summary(6, fss - 0.04 * k, 0.02, fss - 0.04 * k - 0.01, fss - 0.04 * k + 0.01)}
                    for k in range(5)]}
    report["counts"]["judge"] = {"sc@1": {"ok": 40, "parse_error": 2, "refused": 1}, "state@1": {"ok": 50}}
    categories = Taxonomy.builtin().categories()
    matrix = [[0] * 35 for _ in range(35)]
    mutton, handlebar = categories.index("mutton chops"), categories.index("handlebar mustache")
    matrix[mutton][handlebar] = 7
    matrix[0][1] = 2
    edits = [0] * 35
    edits[mutton], edits[0] = 20, 10
    report["overediting"] = {"categories": categories, "matrix": matrix, "edits": edits,
                             "overedits": [sum(row) for row in matrix],
                             "patterns": [{"attribute": "mutton chops", "category": "handlebar mustache",
                                           "count": 7, "edits": 20, "share": 0.35}],
                             "reconstruction": True}
    report["disparity"] = [
        {"metric": "drop_fss", "contrast": "gender",
         "groups": {"female": _summary(6, 10.5, 3.0, 7.35, 13.65), "male": _summary(6, 14.25, 4.0, 10.05, 18.45)},
         "wd": 3.75, "p_value": 0.0123, "n_resamples": 10000, "exact": False, "bias": True,
         "worst_group": "male", "best_group": "female", "threshold": 3.0, "alpha": 0.05,
         "clustered": {"p_value": 0.0456, "clusters": {"female": 2, "male": 2}}, "seed": 0},
        {"metric": "sc", "contrast": "gender",
         "groups": {"female": _summary(6, 62.0, 9.0, 52.5, 71.4), "male": _summary(6, 60.5, 11.0, 49.0, 72.0)},
         "wd": 1.5, "p_value": 0.61, "n_resamples": 924, "exact": True, "bias": False,
         "worst_group": "male", "best_group": "female", "threshold": 3.0, "alpha": 0.05, "clustered": None,
         "seed": 0},
    ]
    report["prompts"] = {"sc": {"name": "viescore_tie", "version": "1", "hash": "ee" * 32},
                         "state": {"name": "state_tracker", "version": "1", "hash": "ff" * 32}}
    report["judge_reliability"] = {
        "anchors": [{"name": "done", "instruction": "convert the photo to black and white",
                     "expect": {"editing_success": [7, 10]}, "outcome": "ok",
                     "value": {"editing_success": 9, "overediting": 8}, "passed": True},
                    {"name": "blank", "instruction": "put a beret on the person",
                     "expect": {"editing_success": [0, 3]}, "outcome": "ok",
                     "value": {"editing_success": 6, "overediting": 1}, "passed": False}],
        "passed": 1, "failed": 1, "drift_points": 2, "checked_at": "2026-01-02T03:05:00Z",
        "drift": [{"name": "done", "field": "editing_success", "previous": 10, "current": 7, "delta": -3}]}
    report["cost"] = {"estimated_usd": 1.2345, "new_usd": 0.5, "by_component": {"editor": 1.0, "judge": 0.2345},
                      "prices": {"editor": {"images_out": 0.039, "as_of": "2026-01-15"},
                                 "judge": {"input_tokens": 2e-06, "as_of": "2026-01-16"}},
                      "budget_usd": 2.0, "stopped_by_budget": False}
    report["calls"] = {"gemini:gemini-2.5-flash-image": {
        "calls": 60, "attempts": 67, "succeeded": 57, "gave_up": {"timeout": 2, "server_error": 1},
        "retries": {"rate_limited": 5, "timeout": 2}, "rate_wait_s": 3.25}}
    report.update(overrides)
    return report


def _tiny_png(color: tuple[int, int, int]) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (16, 16), color).save(buf, format="PNG")
    return buf.getvalue()


def fake_run_dir(tmp_path: Path, *, store: ImageStore | None = None) -> Path:
    """sessions.csv, steps.csv and contact sheets for 4 sessions; s3 has no contact sheet."""
    run = tmp_path / "runs" / "r"
    (run / "contact_sheets").mkdir(parents=True)
    sessions = [("f1", "s1", "", "5.5"), ("f1", "s2", "", "40.25"), ("f2", "s1", "step_refused", "99"),
                ("f2", "s3", "", "30"), ("f3", "s1", "", "")]
    with open(run / "sessions.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["face_id", "identity", "session_id", "excluded", "gender", "drop_fss"])
        for face, session, excluded, drop in sessions:
            w.writerow([face, face, session, excluded, "female", drop])
    with open(run / "steps.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["face_id", "identity", "session_id", "k", "instruction", "outcome", "image_hash", "fss",
                    "session_excluded"])
        for face, session, excluded, _ in sessions:
            for k in range(5):
                digest = store.put(_tiny_png((40 * k, 0, 0))) if store is not None else ""
                w.writerow([face, face, session, k, HOSTILE if k else "", "ok", digest, 0.8 - 0.1 * k, excluded])
    for face, session in (("f1", "s1"), ("f1", "s2"), ("f2", "s1")):
        sheet = render_sheet(f"{face} | {session}", [(_tiny_png((0, 90, 0)), "I0")])
        (run / "contact_sheets" / contact_sheet_name(face, session)).write_bytes(sheet)
    return run


def _images(page: str) -> list[bytes]:
    return [base64.b64decode(m) for m in PNG_URI.findall(page)]


def test_v11_factory_is_valid_against_the_schema() -> None:
    """Keeps the full report factory in step with the report the framework writes."""
    jsonschema = pytest.importorskip("jsonschema")
    schema = builtin_report_schema()
    jsonschema.validate(v11_report(), schema)


def test_v10_report_renders_metrics_counts_and_skipped_reasons(tmp_path: Path) -> None:
    run = fake_run_dir(tmp_path)
    path = write_html_report(run, v10_report())
    page = path.read_text()
    assert path == run / "report.html" and not list(run.glob(".report-*"))
    assert KEY in page and TESTSET_HASH in page and "20.0.1+e31262d78cc0" in page
    assert "12.35" in page and "[9.877, 14.81]" in page  # Drop_FSS mean and CI
    assert "10.5 [7.35, 13.65] (6)" in page  # a group's CI
    assert "RECONSTRUCTION NOTE" in page
    assert "skipped: semantic consistency needs an MLLM judge (judge=none)" in page
    assert "skipped: overediting rate needs an MLLM state tracker (judge=none)" in page
    assert "step_refused" in page and "no_face_in_base" in page
    for absent in ('id="judge"', 'id="disparity"', 'id="overediting"', 'id="cost"'):
        assert absent not in page


def test_v11_report_renders_every_section(tmp_path: Path) -> None:
    page = render_html_report(v11_report(), run_dir=fake_run_dir(tmp_path))
    assert "61.25" in page and "[54.9, 67.6]" in page and "27.5" in page  # SC, OER
    assert 'class="skipped">skipped:' not in page and "not measured" not in page  # no metric skipped
    assert "gpt-4.1-2025-04-14" in page and "ee" * 32 in page and "gemini-2.5-flash-image-001" in page
    # refusal rate by gender: 8 of 32 male steps
    assert "8 (25.0%)" in page and "1 (3.6%)" in page
    assert "judge answers by outcome: sc@1" in page and ">4.7%<" in page
    # disparity: a report written before the honest flag: its session-level flag is the paper's rule, not BIAS
    rows = re.findall(r'<tr class="(bias|)"><td>(\w+)</td>', page)
    assert ("", "Drop_FSS") in rows and ("", "SC") in rows
    assert "not tested: the report was written before identity-clustered" in page
    assert "0.012 *" in page and "0.046 *" in page and "0.610" in page and "0.610 *" not in page
    assert "handlebar mustache" in page and "35.0%" in page and "7 / 20" in page
    assert "FAIL" in page and "editing_success: [7, 10]" in page and "editing_success: 6; overediting: 1" in page
    assert "<td>editing_success</td><td class=\"num\">10</td><td class=\"num\">7</td>" in page  # drift
    assert "ff" * 32 in page  # the state tracker's prompt hash
    assert "$1.23<" in page and "as of 2026-01-15" in page and "as of 2026-01-16" in page
    assert "gave up" in page and "timeout: 2, server_error: 1" in page
    assert "INCOMPLETE" not in page


def test_heatmap_and_trajectory_plots_are_embedded_pngs(tmp_path: Path) -> None:
    page = render_html_report(v11_report())
    assert 'alt="overediting matrix' in page and 'alt="per-step trajectories' in page
    assert 'alt="FSS trajectories per demographic group' in page and 'alt="forest plot' in page
    images = [Image.open(io.BytesIO(data)) for data in _images(page)]
    assert len(images) == 4 and all(im.format == "PNG" for im in images)


def test_all_zero_overediting_matrix_draws_no_heatmap() -> None:
    report = v11_report()
    report["overediting"]["matrix"] = [[0] * 35 for _ in range(35)]
    page = render_html_report(report)
    assert "No overedits recorded" in page and 'alt="overediting matrix' not in page


def test_hostile_strings_are_escaped_everywhere(tmp_path: Path) -> None:
    report = v11_report(editor=HOSTILE)
    report["skipped_metrics"] = {"extra": HOSTILE}
    report["counts"]["sessions"]["excluded"] = {HOSTILE: 1}
    report["overediting"]["categories"][0] = "$\\frac{a}{" + HOSTILE  # not LaTeX either: drawn as text
    report["overediting"]["patterns"][0]["attribute"] = HOSTILE
    report["notes"].append('" onmouseover="alert(1)')
    page = render_html_report(report, run_dir=fake_run_dir(tmp_path))
    assert HOSTILE not in page and "<script" not in page.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert '" onmouseover=' not in page


def test_page_fetches_nothing(tmp_path: Path) -> None:
    report = v11_report()
    report["notes"].append("see https://example.org/paper")  # text may mention a URL
    page = render_html_report(report, run_dir=fake_run_dir(tmp_path))
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:|//)""", page, re.IGNORECASE)
    assert "<script" not in page and "<link" not in page and "@import" not in page and "url(" not in page
    assert all(re.match(r"data:image/(png|webp|jpeg);base64,", src) for src in re.findall(r'src="([^"]*)"', page))
    # links go to the full-size contact sheets beside the page, in the run folder
    assert all(href.startswith(("#", "contact_sheets/")) for href in re.findall(r'href="([^"]*)"', page))


def test_budget_stop_is_announced() -> None:
    report = v11_report()
    report["run"]["complete"] = False
    report["run"]["stopped"] = "budget of $2.00 reached"
    report["cost"]["stopped_by_budget"] = True
    report["judge_reliability"] = None
    page = render_html_report(report)
    assert "INCOMPLETE RUN" in page and "stopped by the budget ($2.00)" in page and "budget of $2.00 reached" in page
    assert "anchors were not checked" in page


def test_worst_sessions_are_the_highest_drop_among_included_with_their_sheets(tmp_path: Path) -> None:
    run = fake_run_dir(tmp_path)
    page = render_html_report(v10_report(), run_dir=run, worst_sessions=2)
    titles = re.findall(r"<h3>(\d)\. (\w+) &middot; (\w+)</h3>", page)
    assert titles == [("1", "f1", "s2"), ("2", "f2", "s3")]  # f2/s1 (99) is excluded, so not shown
    name = contact_sheet_name("f1", "s2")
    with Image.open(run / "contact_sheets" / name) as sheet:
        size = sheet.size
    shown = Image.open(io.BytesIO(base64.b64decode(SHEET_URI.findall(page)[0])))
    assert shown.size == size  # narrower than the page: embedded at its own size, in a compact format
    assert f'<a href="contact_sheets/{name}"' in page  # the full-size file beside the page
    assert "No contact sheet for this session" in page  # f2/s3 has none and no store was given
    assert "max_contact_sheets" in page


def test_missing_contact_sheet_is_drawn_from_the_store(tmp_path: Path) -> None:
    store = ImageStore(tmp_path / "store")
    run = fake_run_dir(tmp_path, store=store)
    assert store_for_run_dir(run).root == store.root.resolve()  # <workspace>/runs/<run> -> <workspace>/store
    page = render_html_report(v10_report(), run_dir=run, store=store, worst_sessions=2)
    assert "No contact sheet for this session" not in page
    drawn = Image.open(io.BytesIO(base64.b64decode(SHEET_URI.findall(page)[-1])))  # f2/s3, drawn now: I0..I4
    # the reference photo, then I0..I4: six tiles, scaled down to the page's width
    assert drawn.width == html_images.PAGE_WIDTH_PX < 6 * contact_sheet.TILE


def test_worst_direction_comes_from_the_report(tmp_path: Path) -> None:
    report = v10_report()
    report["metrics"]["drop_fss"]["higher_is_better"] = True
    section = html_report.worst_sessions_section(report, fake_run_dir(tmp_path), None, 1)
    assert [(r["face_id"], r["session_id"]) for r in section["rows"]] == [("f1", "s1")]


def test_without_matplotlib_the_page_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(html_plots, "plot_unavailable", lambda: "plots need matplotlib")
    page = render_html_report(v11_report())
    assert "plots need matplotlib" in page and not _images(page)


def test_report_without_optional_parts_still_renders() -> None:
    report = copy.deepcopy(v10_report())
    report["groups"] = {}
    report["trajectory"] = {"fss": [{"k": 0, "n": 1, "mean": 0.8, "sd": None, "ci_low": None, "ci_high": None}]}
    report["metrics"]["drop_fss"].update(n=1, sd=None, ci_low=None, ci_high=None)
    page = render_html_report(report)
    assert "No demographic labels" in page and "0.8 (no CI: n=1)" in page
    assert 'n/a<div class="skipped">n &lt; 2</div>' in page
    assert "sessions.csv was not found" in page
