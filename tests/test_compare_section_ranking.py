"""``faceedit-bench compare`` shows a report section's ranking (``ReportSection.ranking``) beside the session
metrics, with Kendall's tau between the rankings, and ranks values of different scopes apart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from faceedit_bench.compare.comparison import compare_runs
from faceedit_bench.compare.render import format_compare
from faceedit_bench.compare.text import compare_text
from faceedit_bench.plugin.manager import using_sections
from faceedit_bench.plugin.sections import ReportSection
from tests.test_compare import _run, _with_means
from tests.test_html_report import v11_report


def _duel(part: dict[str, Any]) -> dict[str, Any]:
    return {"name": "duel_rating", "label": "duel rating (Elo)", "value": part["rating"], "higher_is_better": True,
            "ci_low": part["rating"] - 20, "ci_high": part["rating"] + 20, "n": 40, "scope": part["scope"]}


DUEL = ReportSection(name="duel", title="Duels", schema={"type": "object"}, ranking=_duel)


def _runs(tmp_path: Path, ratings: dict[str, float], scopes: dict[str, str] | None = None) -> list[Path]:
    sc = {"alpha": 60.0, "beta": 70.0, "gamma": 80.0}
    out = []
    for editor, rating in ratings.items():
        report = _with_means(v11_report(editor), sc=sc[editor])
        report["duel"] = {"rating": rating, "scope": (scopes or {}).get(editor, "log-1")}
        out.append(_run(tmp_path, editor, report))
    return out


def test_a_sections_ranking_is_a_row_and_a_rank_column_with_kendall_tau(tmp_path: Path) -> None:
    runs = _runs(tmp_path, {"alpha": 900.0, "beta": 1000.0, "gamma": 1100.0})
    with using_sections([DUEL]):
        result = compare_runs(runs)
    row = next(r for r in result["rows"] if r["label"].startswith("duel rating"))
    assert row["label"] == "duel rating (Elo) (higher better)" and row["best"] == [2]
    assert row["cells"][0]["text"].startswith("900") and "n=40" in row["cells"][0]["text"]
    # beside the metrics: after the last metric row, before the outcome rows
    sections = [r["section"] for r in result["rows"]]
    assert sections.index("duel") == max(i for i, s in enumerate(sections) if s == "metrics") + 1
    tau = next(t for t in result["ranks"]["kendall"] if {t["a"], t["b"]} == {"duel_rating", "sc"})
    assert tau["tau"] == 1.0 and tau["systems"] == 3
    text = compare_text(result, width=160)
    assert "duel rating (Elo)" in text and "Kendall tau duel_rating vs sc: 1.000" in text
    assert "Kendall tau" in format_compare(result, "markdown") and "Rank agreement" in format_compare(result, "html")


def test_an_opposite_ranking_gives_tau_minus_one(tmp_path: Path) -> None:
    runs = _runs(tmp_path, {"alpha": 1100.0, "beta": 1000.0, "gamma": 900.0})
    with using_sections([DUEL]):
        ranks = compare_runs(runs)["ranks"]
    tau = next(t for t in ranks["kendall"] if {t["a"], t["b"]} == {"duel_rating", "sc"})
    assert tau["tau"] == -1.0


def test_values_of_different_scopes_are_shown_but_not_ranked_together(tmp_path: Path) -> None:
    runs = _runs(tmp_path, {"alpha": 900.0, "beta": 1000.0, "gamma": 1100.0}, scopes={"gamma": "log-2"})
    with using_sections([DUEL]):
        result = compare_runs(runs)
    row = next(r for r in result["rows"] if r["label"].startswith("duel rating"))
    assert row["best"] == [] and row["cells"][2]["value"] == 1100.0
    assert any("2 different duel results" in w for w in result["warnings"])
    assert result["ranks"] is None or "duel_rating" not in result["ranks"]["metrics"]


def test_without_a_ranking_section_compare_is_unchanged(tmp_path: Path) -> None:
    runs = _runs(tmp_path, {"alpha": 900.0, "beta": 1000.0, "gamma": 1100.0})
    with using_sections([DUEL]):
        with_section = compare_runs(runs)
    with using_sections([]):
        without = compare_runs(runs)
    assert [r for r in with_section["rows"] if r["section"] != "duel"] == without["rows"]
    assert not any(r["section"] == "duel" for r in without["rows"])
