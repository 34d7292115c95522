"""Pairwise arena: editors ranked by position-swapped judge battles over stored runs, with Bradley-Terry
ratings, identity-bootstrap CIs, adaptive sampling and per-group and per-step ratings (docs/arena.md)."""

from faceedit_bench.api import hookimpl


@hookimpl
def faceedit_register_commands(register):
    register("arena", "faceedit_bench_arena.command:add_parser", description="rank editors of stored runs by pairwise judge battles")


@hookimpl
def faceedit_register_sections(register):
    register("arena", "faceedit_bench_arena.section:ARENA",
             description="editors ranked by pairwise judge battles (faceedit-bench arena run)")


@hookimpl
def faceedit_register_reproductions(register):
    register("genai_arena", "faceedit_bench_arena.reproduce:add_genai_arena",
             description="GenAI-Arena's image-editing Elo leaderboard from its battle log")
    register("genai_bench", "faceedit_bench_arena.reproduce:add_genai_bench",
             description="GenAI-Bench's image-editing judge accuracies from its results files")
    register("mmrb2", "faceedit_bench_arena.reproduce:add_mmrb2",
             description="a judge's answers on MMRB2's image-editing pairs, scored against its expert labels")
