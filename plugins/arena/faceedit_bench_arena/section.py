"""The ``arena`` report section: an arena's results in each participating run's report.json, report.html,
MLflow metrics and the leaderboard's ``arena`` view. ``faceedit-bench arena run`` attaches it; runs have no
collector for it (the arena spans runs)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from faceedit_bench.api.sections import (
    ReportSection,
    SectionHtml,
    ValueSpec,
    ViewSpec,
    load_schema,
    metric_key,
)
from faceedit_bench_arena import plots
from faceedit_bench_arena.console import rank_text


def schema() -> dict:
    base = load_schema("faceedit_bench_arena", "schemas/arena.schema.json")
    part = copy.deepcopy(base)
    part.pop("$id", None)
    part.pop("$schema", None)
    part["required"] = [*base["required"], "editor"]
    part["properties"]["editor"] = {"type": "string"}
    return part


def _me(part: Mapping[str, Any]) -> Mapping[str, Any]:
    return next(e for e in part["criteria"]["overall"]["ratings"]["editors"] if e["editor"] == part["editor"])


def tracking(part: Mapping[str, Any]) -> dict[str, float]:
    """The run's editor's numbers; an unrated editor has only its battles (0 rated), never a made-up rating."""
    me = _me(part)
    out = {metric_key("arena", k): float(me[k]) for k in ("rating", "ci_low", "ci_high", "rank", "battles")
           if me.get(k) is not None}
    if me.get("rank_ci"):
        low, high = me["rank_ci"]
        out[metric_key("arena", "rank_ci_low")], out[metric_key("arena", "rank_ci_high")] = float(low), float(high)
    overall = part["criteria"]["overall"]["ratings"]
    out[metric_key("arena", "identities")] = float(overall.get("n_identities", 0))
    out[metric_key("arena", "preliminary")] = float(bool(overall.get("preliminary")))
    for key, groups in part["per_group"].items():
        for value, ratings in groups.items():
            mine = [e for e in ratings.get("editors", [])
                    if e["editor"] == part["editor"] and e["rating"] is not None]
            if mine:
                out[metric_key("arena", key, value, "rating")] = float(mine[0]["rating"])
    share = part["position_bias"]["criteria"]["overall"]["first_position_share"]
    if share is not None:
        out[metric_key("arena", "first_position_share")] = float(share)
    panel = part.get("panel") or {}
    for member, bias in panel.get("position_bias", {}).items():
        share = bias["criteria"]["overall"]["first_position_share"]
        if share is not None:
            out[metric_key("arena", member, "first_position_share")] = float(share)
    if panel:
        out[metric_key("arena", "panel_disagreements")] = float(panel["disagreements"]["overall"])
    return out


def console(part: Mapping[str, Any], width: int) -> list[str]:
    from faceedit_bench_arena.console import summary

    return [line[:width] for line in summary(part).splitlines()]


def html_context(report: Mapping[str, Any], store: Any) -> Mapping[str, Any] | None:
    a = report.get("arena")
    if not a:
        return None
    ratings = a["criteria"]["overall"]["ratings"]
    other = {e["editor"]: e["rating"] for e in a["criteria"]["overall"]["ratings_other_policy"]["editors"]}
    return {"a": a, "me": _me(a), "other": other, "rank_text": rank_text, "other_policy": "exclude" if a["policy"] == "loss" else "loss",
            "plots": {"ratings": plots.ratings_png(ratings),
                      "win_rate": plots.win_rate_png(ratings),
                      "groups": {k: plots.per_group_png(g, k, [e["editor"] for e in ratings["editors"]])
                                 for k, g in a["per_group"].items()}}}


def record(part: Mapping[str, Any]) -> dict[str, Any]:
    me = _me(part)
    return {"editor": part["editor"], "rating": me["rating"], "ci_low": me["ci_low"], "ci_high": me["ci_high"],
            "rank": me["rank"], "rank_ci": me.get("rank_ci"), "battles": me["battles"],
            "editors": list(part["editors"]),
            "n_identities": part["criteria"]["overall"]["ratings"].get("n_identities"),
            "preliminary": part["criteria"]["overall"]["ratings"].get("preliminary"),
            "anchor": part["criteria"]["overall"]["ratings"]["scale"]["anchor"], "policy": part["policy"],
            "battle_log_sha256": (part.get("battle_log") or {}).get("sha256")}


def verify(comparer: Any, submitted: Mapping[str, Any] | None, reproduced: Mapping[str, Any] | None) -> None:
    if submitted is None or reproduced is None:
        return
    comparer.exact("arena.battle_log_sha256", submitted.get("battle_log_sha256"), reproduced.get("battle_log_sha256"))
    for key in ("rating", "ci_low", "ci_high"):
        comparer.close(f"arena.{key}", submitted[key], reproduced[key], 0.05)


def ranking(part: Mapping[str, Any]) -> Mapping[str, Any]:
    """What ``faceedit-bench compare`` ranks the run by: its editor's rating; only runs of one arena (one battle
    log) are ranked together."""
    me = _me(part)
    return {"name": "arena_rating", "label": "arena rating (Elo, overall)", "value": me["rating"],
            "ci_low": me["ci_low"], "ci_high": me["ci_high"], "n": me["battles"], "higher_is_better": True,
            "scope": (part.get("battle_log") or {}).get("sha256") or "unlogged"}


def _read(part: Mapping[str, Any]) -> Mapping[str, Any]:
    if part["rating"] is None:
        return {"mean": None, "ci_low": None, "ci_high": None, "n": part["battles"], "sub": "unrated"}
    rank = rank_text(part)
    return {"mean": part["rating"], "ci_low": part["ci_low"], "ci_high": part["ci_high"], "n": part["battles"],
            "sub": f"rank {rank} of {len(part['editors'])}" + (" (preliminary)" if part.get("preliminary") else "")}


ARENA = ReportSection(
    name="arena", title="Pairwise arena", schema=schema(), tracking=tracking, console=console,
    html=SectionHtml("arena.html.j2", "faceedit_bench_arena", context=html_context),
    record=record, verify=verify, ranking=ranking,
    views=(ViewSpec("arena", "Arena: pairwise rating",
                    "Bradley-Terry rating (Elo scale) from position-swapped pairwise judge battles.",
                    (ValueSpec("arena_rating", "arena", read=_read),), rank_by="arena_rating"),),
    description="editors ranked by position-swapped pairwise judge battles (faceedit-bench arena run)",
)
