"""``faceedit-bench compare``: best values by each metric's direction, loud incomparability warnings,
paired differences on shared sessions, and three output formats."""

from __future__ import annotations

import csv
import hashlib
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from faceedit_bench.compare.comparison import compare_runs
from faceedit_bench.compare.render import format_compare
from faceedit_bench.compare.text import compare_text
from faceedit_bench.report.compared_runs import CompareError
from faceedit_bench.report.paired_differences import paired_difference
from tests.test_html_report import HOSTILE, v10_report, v11_report


def _run(tmp_path: Path, name: str, report: dict[str, Any],
         sessions: list[tuple[str, str, str, dict[str, float]]] | None = None) -> Path:
    """A run directory with report.json and, optionally, sessions.csv rows (face, session, excluded, values)."""
    run = tmp_path / name
    run.mkdir()
    report = json.loads(json.dumps(report))
    report["run"]["key"] = hashlib.sha256(name.encode()).hexdigest()
    (run / "report.json").write_text(json.dumps(report))
    if sessions is not None:
        metrics = sorted({m for *_, values in sessions for m in values})
        with open(run / "sessions.csv", "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["face_id", "identity", "session_id", "excluded", "gender", *metrics])
            for face, session, excluded, values in sessions:
                w.writerow([face, face, session, excluded, "male", *(values.get(m, "") for m in metrics)])
    return run


def _with_means(report: dict[str, Any], **means: float) -> dict[str, Any]:
    for name, mean in means.items():
        report["metrics"][name].update(mean=mean, ci_low=mean - 1, ci_high=mean + 1)
    return report


def _row(result: dict[str, Any], prefix: str) -> dict[str, Any]:
    return next(r for r in result["rows"] if r["label"].startswith(prefix))


def test_best_follows_each_metrics_direction(tmp_path: Path) -> None:
    a = _run(tmp_path, "a", _with_means(v11_report("alpha"), drop_fss=10.0, sc=70.0, oer=30.0))
    b = _run(tmp_path, "b", _with_means(v11_report("beta"), drop_fss=20.0, sc=80.0, oer=30.0))
    result = compare_runs([a, b])
    assert _row(result, "Drop_FSS")["best"] == [0]  # lower is better
    assert _row(result, "SC")["best"] == [1]  # higher is better
    assert _row(result, "OER")["best"] == []  # a tie marks nothing
    flipped = v11_report("alpha")
    flipped["metrics"]["drop_fss"]["higher_is_better"] = True
    flipped_b = v11_report("beta")
    flipped_b["metrics"]["drop_fss"].update(higher_is_better=True, mean=99.0)
    result = compare_runs([_run(tmp_path, "c", flipped), _run(tmp_path, "d", flipped_b)])
    assert _row(result, "Drop_FSS")["best"] == [1]


def test_outcome_bias_and_cost_rows(tmp_path: Path) -> None:
    a = v11_report("alpha")
    b = v11_report("beta")
    b["counts"]["steps"] = {"ok": 40, "refused": 10, "api_error": 2, "skipped": 8}
    for report in (a, b):  # the honest flag (a v11 report predates it: its flags were the paper's rule)
        for d in report["disparity"]:
            d["bias_status"] = "yes" if d["bias"] else "no"
    b["disparity"][1].update(bias=True, bias_status="yes")
    b["cost"]["estimated_usd"] = 0.5
    result = compare_runs([_run(tmp_path, "a", a), _run(tmp_path, "b", b)])
    refused = _row(result, "steps refused")
    assert [c["text"] for c in refused["cells"]] == ["5.6% (3/54)", "19.2% (10/52)"] and refused["best"] == [0]
    assert [c["text"] for c in _row(result, "steps without")["cells"]] == ["5.6% (3/54)", "23.1% (12/52)"]
    bias = _row(result, "bias flags")
    assert [c["text"] for c in bias["cells"]] == ["1 of 2", "2 of 2"] and bias["best"] == [0]
    b["disparity"][0].update(bias=None, bias_status="not_tested")  # an untested contrast is never counted as a "no"
    bias = _row(compare_runs([_run(tmp_path, "a2", a), _run(tmp_path, "b2", b)]), "bias flags")
    assert bias["cells"][1]["text"] == "1 of 1"
    untested = _row(compare_runs([_run(tmp_path, "a3", a), _run(tmp_path, "b3", b)]), "contrasts not testable")
    assert [c["text"] for c in untested["cells"]] == ["0", "1"]
    legacy = _row(compare_runs([_run(tmp_path, "e", v11_report("e")), _run(tmp_path, "f", v11_report("f"))]),
                  "bias flags")
    assert {c["text"] for c in legacy["cells"]} == {"none testable"}
    assert legacy["best"] == []
    assert _row(result, "estimated cost (USD")["best"] == [1]
    v10 = compare_runs([_run(tmp_path, "c", v10_report("x")), _run(tmp_path, "d", v10_report("y"))])
    assert {c["text"] for c in _row(v10, "bias flags")["cells"]} == {"not computed"}
    assert {c["text"] for c in _row(v10, "SC")["cells"]} == {"skipped"}
    assert _row(v10, "SC")["best"] == []


@pytest.mark.parametrize("change, expected", [
    (lambda r: r["testset"].update(content_hash="ef" * 32), "different test-set content"),
    (lambda r: r["scales"].update(embedder_version="21.0"), "FSS scales differ"),
    (lambda r: r["components"]["judge"]["description"].update(model_version="gpt-5"), "different judges"),
    (lambda r: r["components"]["dataset"]["description"].update(n_faces=400), "different datasets"),
])
def test_incomparable_runs_are_warned_about(tmp_path: Path, change: Any, expected: str) -> None:
    b = v11_report("beta")
    change(b)
    result = compare_runs([_run(tmp_path, "a", v11_report("alpha")), _run(tmp_path, "b", b)])
    assert len(result["warnings"]) == 1 and expected in result["warnings"][0]
    text = format_compare(result)
    assert "WARNING: these runs are NOT comparable" in text and expected in text
    assert "not computed: the runs differ in" in text


def test_same_data_elsewhere_and_a_missing_judge_are_comparable(tmp_path: Path) -> None:
    moved = v11_report("beta")
    moved["components"]["dataset"]["description"]["root"] = "/mnt/other/place"
    no_judge = v10_report("gamma")
    result = compare_runs([_run(tmp_path, "a", v11_report("alpha")), _run(tmp_path, "b", moved),
                           _run(tmp_path, "c", no_judge)])
    assert result["warnings"] == []


def test_incomplete_run_is_warned_about(tmp_path: Path) -> None:
    b = v11_report("beta")
    b["run"]["complete"] = False
    result = compare_runs([_run(tmp_path, "a", v11_report("alpha")), _run(tmp_path, "b", b)])
    assert any("beta" in w and "incomplete" in w for w in result["warnings"])


def test_paired_difference_by_hand() -> None:
    d = paired_difference([10, 20, 30], [8, 15, 31])  # differences 2, 5, -1: mean 2, SD 3
    t_crit = 4.302652729911275  # t(0.975, df=2)
    assert d["n"] == 3 and d["mean"] == pytest.approx(2.0) and d["sd"] == pytest.approx(3.0)
    assert d["ci_low"] == pytest.approx(2 - t_crit * 3 / math.sqrt(3))
    assert d["ci_high"] == pytest.approx(2 + t_crit * 3 / math.sqrt(3))
    t = 2 / (3 / math.sqrt(3))
    assert d["p_value"] == pytest.approx(1 - t / math.sqrt(2 + t * t))  # Student t with 2 df in closed form


def test_paired_comparison_uses_only_shared_included_sessions(tmp_path: Path) -> None:
    a = _run(tmp_path, "a", v10_report("alpha"), [
        ("f1", "s1", "", {"drop_fss": 10}), ("f1", "s2", "", {"drop_fss": 20}), ("f2", "s1", "", {"drop_fss": 30}),
        ("f2", "s2", "", {"drop_fss": 50}),  # excluded in b
        ("f3", "s1", "", {"drop_fss": 70}),  # only in a
    ])
    b = _run(tmp_path, "b", v10_report("beta"), [
        ("f1", "s1", "", {"drop_fss": 8}), ("f1", "s2", "", {"drop_fss": 15}), ("f2", "s1", "", {"drop_fss": 31}),
        ("f2", "s2", "step_refused", {}),
    ])
    (pair,) = compare_runs([a, b])["paired"]
    assert pair["shared_sessions"] == 3 and pair["only_a"] == 2 and pair["only_b"] == 0
    (m,) = pair["metrics"]
    assert m["metric"] == "drop_fss" and m["n"] == 3 and m["mean"] == pytest.approx(2.0)
    assert m["verdict"] == "no clear difference (CI includes 0)"


def test_paired_verdict_names_the_better_run_by_direction(tmp_path: Path) -> None:
    rows_a = [(f"f{i}", f"s{i}", "", {"drop_fss": v, "sc": 80 + i}) for i, v in enumerate([10, 11, 12, 13])]
    rows_b = [(f"f{i}", f"s{i}", "", {"drop_fss": v, "sc": 60 + 2 * i}) for i, v in enumerate([20, 22, 21, 25])]
    result = compare_runs([_run(tmp_path, "a", v11_report("alpha"), rows_a),
                           _run(tmp_path, "b", v11_report("beta"), rows_b)])
    verdicts = {m["metric"]: m["verdict"] for m in result["paired"][0]["metrics"]}
    assert verdicts["drop_fss"].startswith("alpha") and verdicts["sc"].startswith("alpha")
    assert "oer" in verdicts and verdicts["oer"] == "too few shared sessions for an interval"  # no oer values


def test_paired_comparison_needs_sessions_csv(tmp_path: Path) -> None:
    result = compare_runs([_run(tmp_path, "a", v10_report("alpha")), _run(tmp_path, "b", v10_report("beta"))])
    assert "no sessions.csv" in result["paired"][0]["reason"]


def test_markdown_shape_and_escaping(tmp_path: Path) -> None:
    b = _with_means(v11_report(HOSTILE + "|x"), drop_fss=5.0)
    b["testset"]["content_hash"] = "ef" * 32
    result = compare_runs([_run(tmp_path, "a", v11_report("alpha")), _run(tmp_path, "b", b)])
    md = format_compare(result, "markdown")
    lines = md.splitlines()
    assert lines[0].startswith("> **WARNING")
    table = [line for line in lines if line.startswith("|")]
    assert table[1] == "|---|---|---|"
    assert all(len(re.findall(r"(?<!\\)\|", line)) == 4 for line in table)  # escaped pipes split nothing
    assert "<script" not in md and "&lt;script>" in md  # a "<" that could open a tag is escaped
    drop = next(line for line in table if line.startswith("| Drop"))
    assert drop.split(" | ")[2].startswith("**5 ")  # the best (lower) value is bold


def test_markdown_paired_lines_read_as_text(tmp_path: Path) -> None:
    """No entity where nothing needed escaping: ``p < 0.001`` and the verdict read as written."""
    rows_a = [(f"f{i}", f"s{i}", "", {"drop_fss": v}) for i, v in enumerate([10, 11, 12, 13, 12, 11])]
    rows_b = [(f"f{i}", f"s{i}", "", {"drop_fss": v}) for i, v in enumerate([90, 92, 91, 95, 93, 94])]
    result = compare_runs([_run(tmp_path, "a", v11_report("alpha"), rows_a),
                           _run(tmp_path, "b", v11_report("beta"), rows_b)])
    md = format_compare(result, "markdown")
    line = next(x for x in md.splitlines() if "Drop\\_FSS: mean difference" in x)
    assert "&gt;" not in md and "&lt; " not in md
    assert "p < 0.001" in line and line.endswith("alpha (gemini-2.5-flash-image-001) better (CI excludes 0)")


def test_text_output_is_aligned(tmp_path: Path) -> None:
    result = compare_runs([_run(tmp_path, "a", v11_report("alpha")),
                           _run(tmp_path, "b", _with_means(v11_report("beta"), sc=90.0))])
    text = format_compare(result)
    lines = text.splitlines()
    assert lines[1].startswith("  A  alpha") and lines[4].startswith("  B  beta")  # the legend of the columns
    rule = next(i for i, line in enumerate(lines) if line.startswith("───"))
    header = lines[rule - 1]
    sc = next(line for line in lines[rule:] if line.startswith("SC"))
    assert sc.endswith(" *") and sc.index("90 [") < header.index("B") < len(sc)  # right-aligned under B


def _wide_runs(tmp_path: Path, n: int) -> list[Path]:
    """``n`` runs of long editor names whose labels differ only in their last words."""
    runs = []
    for i in range(n):
        report = _with_means(v11_report(f"an_editor_with_a_long_registered_name_{i}"), drop_fss=10.0 + i,
                             sc=70.0 + i, oer=30.0 - i)
        runs.append(_run(tmp_path, f"run{i}", report))
    return runs


@pytest.mark.parametrize("n", [2, 5, 9])
def test_text_fits_100_columns_and_keeps_every_value_whole(tmp_path: Path, n: int) -> None:
    """The text table was 280 columns wide: it is split by runs, each value with its interval on one line."""
    result = compare_runs(_wide_runs(tmp_path, n))
    text = compare_text(result, width=100)
    paths = {r["path"] for r in result["runs"]}
    for line in text.splitlines():
        assert len(line) <= 100 or line.strip() in paths, line
        assert line.count("[") == line.count("]") and "…" not in line, line
    for i in range(n):  # every run's Drop_FSS, whole, in some part of the table
        assert re.search(rf"\b{10 + i} \[{9 + i}, {11 + i}\] n=\d+", text)


def test_html_output_is_escaped_and_self_contained(tmp_path: Path) -> None:
    result = compare_runs([_run(tmp_path, "a", v11_report(HOSTILE)),
                           _run(tmp_path, "b", _with_means(v11_report("beta"), sc=90.0))])
    page = format_compare(result, "html")
    assert HOSTILE not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:|//)""", page) and "<script" not in page
    assert re.search(r'<td class="num best">90 \[', page)
    # OER's scale as everywhere else: overedits per edit x100, no upper bound (issue 37 item 10)
    caption = " ".join(page[page.index("Each metric is drawn"):].split())
    assert "OER 0 to 100" not in caption and "OER from 0, with no upper bound" in caption
    json.dumps(result)  # the result is plain data (also for --json)


def test_bad_inputs_say_how_to_fix_them(tmp_path: Path) -> None:
    with pytest.raises(CompareError, match="at least two runs"):
        compare_runs([tmp_path])
    with pytest.raises(CompareError, match="no report.json"):
        compare_runs([tmp_path / "nothing", tmp_path / "nothing"])
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(CompareError, match="not valid JSON"):
        compare_runs([tmp_path / "bad.json", tmp_path / "bad.json"])
    (tmp_path / "other.json").write_text('{"schema": "something/else"}')
    with pytest.raises(CompareError, match="not a faceedit_bench run report"):
        compare_runs([tmp_path / "other.json", tmp_path / "other.json"])
    with pytest.raises(CompareError, match="unknown format"):
        format_compare({"runs": []}, "pdf")


def test_report_json_paths_and_duplicate_labels(tmp_path: Path) -> None:
    a = _run(tmp_path, "a", v10_report("same"))
    b = _run(tmp_path, "b", v10_report("same"))
    result = compare_runs([a / "report.json", b])
    labels = [r["label"] for r in result["runs"]]
    assert len(set(labels)) == 2 and all(label.startswith("same v7 [") for label in labels)


def test_labels_say_what_differs_between_the_runs(tmp_path: Path) -> None:
    judged = v11_report("alpha")
    other_judge = v11_report("alpha")
    other_judge["components"]["judge"]["description"]["model_version"] = "gpt-5"
    result = compare_runs([_run(tmp_path, "a", judged), _run(tmp_path, "b", other_judge)])
    assert [r["label"] for r in result["runs"]] == [
        "alpha (gemini-2.5-flash-image-001) · judge gpt_judge gpt-4.1-2025-04-14",
        "alpha (gemini-2.5-flash-image-001) · judge gpt_judge gpt-5"]
    hair = v11_report("alpha")
    hair["testset"].update(name="hair", content_hash="ab" * 32)
    labels = [r["label"] for r in compare_runs([_run(tmp_path, "c", v11_report("alpha")),
                                                _run(tmp_path, "d", hair)])["runs"]]
    assert labels == ["alpha (gemini-2.5-flash-image-001) · test set pose",
                      "alpha (gemini-2.5-flash-image-001) · test set hair"]


def test_limits_from_config_tell_runs_apart(tmp_path: Path) -> None:
    a, b = _run(tmp_path, "a", v10_report("alpha")), _run(tmp_path, "b", v10_report("alpha"))
    (a / "config.yaml").write_text("run:\n  max_faces: 10\n  max_sessions: null\n")
    (b / "config.yaml").write_text("run:\n  max_faces: null\n  max_sessions: null\n")
    assert [r["label"] for r in compare_runs([a, b])["runs"]] == ["alpha v7 · limits max_faces=10",
                                                                  "alpha v7 · limits no limits"]


def test_the_identity_baseline_is_a_reference_never_best(tmp_path: Path) -> None:
    baseline = _with_means(v10_report("identity"), drop_fss=0.0)
    result = compare_runs([_run(tmp_path, "a", baseline), _run(tmp_path, "b", _with_means(v10_report("x"), drop_fss=9.0)),
                           _run(tmp_path, "c", _with_means(v10_report("y"), drop_fss=12.0))])
    assert result["runs"][0]["reference"] and result["runs"][0]["label"].endswith("(reference: no edit)")
    assert _row(result, "Drop_FSS")["best"] == [1]  # 0.0 is the no-edit floor, not a winner


def test_all_test_sets_table_has_the_papers_avg(tmp_path: Path) -> None:
    runs = []
    for editor, per in {"alpha": {"pose": 3.0, "hair": 5.0}, "beta": {"pose": 2.0, "hair": 4.0},
                        "gamma": {"pose": 1.0}, "identity": {"pose": 0.0, "hair": 0.0}}.items():
        for testset, mean in per.items():
            r = _with_means(v10_report(editor), drop_fss=mean)
            r["testset"].update(name=testset, content_hash=hashlib.sha256(testset.encode()).hexdigest())
            runs.append(_run(tmp_path, f"{editor}-{testset}", r))
    result = compare_runs(runs)
    (group,) = result["across_testsets"]
    (table,) = group["tables"]
    assert table["testsets"] == ["hair 1.0.0", "pose 1.0.0"]
    rows = {row["editor"]: ([c["text"] for c in row["cells"]], row["avg"]["text"]) for row in table["rows"]}
    assert rows["alpha v7"] == (["5", "3"], "4") and rows["beta v7"] == (["4", "2"], "3")
    assert rows["gamma v7"] == (["no run", "1"], "n/a (1 of 2 test sets)")
    assert [table["rows"][i]["editor"] for i in table["best"]] == ["beta v7"]  # not identity (Avg. 0)
    (runs[0] / "config.yaml").write_text("run:\n  max_faces: 3\n")  # alpha on pose with other limits
    (group,) = compare_runs(runs)["across_testsets"]  # alpha's other run is alone: no longer averaged with it
    assert next(r for r in group["tables"][0]["rows"] if r["editor"] == "alpha v7")["avg"]["text"].startswith("n/a")
    (runs[0] / "config.yaml").unlink()
    text = format_compare(result)
    assert "All test sets: sample" in text and re.search(r"beta v7\s+4\s+2\s+3 \*", text)
    assert "| beta v7 | 4 | 2 | **3** |" in format_compare(result, "markdown")
    page = format_compare(result, "html")
    assert "All test sets: sample" in page and 'class="plot forest"' in page and 'class="plot trajectories"' in page


def test_all_test_sets_pool_the_overediting_patterns(tmp_path: Path) -> None:
    runs = []
    for testset, (changed, edits) in {"pose": (1, 10), "hair": (4, 10)}.items():
        r = v11_report("alpha")
        r["testset"].update(name=testset, content_hash=hashlib.sha256(testset.encode()).hexdigest())
        r["overediting"]["attribute_changes"] = {"edits": {"glasses": edits}, "changed": {"glasses": {"eye color": changed}}}
        runs.append(_run(tmp_path, testset, r))
    (group,) = compare_runs(runs)["across_testsets"]
    (alpha,) = group["patterns"]
    assert alpha["patterns"] == [{"attribute": "glasses", "category": "eye color", "count": 5, "edits": 20,
                                  "share": 0.25}]  # 1/10 alone is no pattern; pooled it is 25%
    result = compare_runs(runs)
    assert "glasses -> eye color: 5/20 (25.0%)" in format_compare(result)
    assert "glasses → eye color: 5/20 (25.0%)" in format_compare(result, "markdown")
    old = v11_report("alpha")  # a 1.1 report has only its own patterns: pooling them would be biased
    old["testset"].update(name="hair", content_hash="cd" * 32)
    (group,) = compare_runs([runs[0], _run(tmp_path, "old", old)])["across_testsets"]
    assert group["patterns"][0]["patterns"] is None
    assert "not available" in format_compare(compare_runs([runs[0], _run(tmp_path, "old2", old)]), "html")


def test_a_run_whose_components_cost_nothing_per_call_reads_free():
    from faceedit_bench.compare.rows import cost_rows

    free = {"cost": {"estimated_usd": None, "by_component": {"editor": None}, "free": ["editor"]},
            "counts": {"sessions": {"included": 4}}}
    unpriced = {"cost": {"estimated_usd": None, "by_component": {"editor": None}, "free": []},
                "counts": {"sessions": {"included": 4}}}
    total = cost_rows([free, unpriced])[0]
    texts = [c["text"] for c in total["cells"]]
    assert texts[0].startswith("free") and texts[1] == "unknown (no price table)"
