"""Reproductions of published results that the core's own machinery recomputes (``faceedit-bench reproduce``):
``viescore`` (judge–human correlations) and ``imagenhub-human`` (people's ratings and their agreement), from
the shipped published data in ``faceedit_bench/data/published`` (its SOURCES.md names every file's repository,
commit, path, sha256 and licence). ``commands`` adds the subcommands; ``imagenhub`` reads ImagenHub's rater
files."""

from __future__ import annotations

from typing import Any

from faceedit_bench import hookimpl


@hookimpl
def faceedit_register_reproductions(register: Any) -> None:
    register("viescore", "faceedit_bench.builtin.reproductions.commands:add_viescore",
             description="VIEScore's judge–human Spearman correlations on ImagenHub's human ratings")
    register("imagenhub_human", "faceedit_bench.builtin.reproductions.commands:add_imagenhub_human",
             description="ImagenHub's human-evaluation table from its rater TSVs")
