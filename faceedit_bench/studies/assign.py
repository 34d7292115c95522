"""Who answers what: each item goes to ``per_item`` different annotators, the items in an order that interleaves
the strata (editors x demographic label; :func:`~faceedit_bench.studies.items.balanced_sample`) cut into
consecutive runs, so every annotator gets a near-equal share of each editor and group. A pair's sides alternate
along each annotator's list, so each annotator sees each editor on the left half the time. Every annotator
answers every gold item, except that an item asked again goes only to those who have it. Each list is shuffled on
its own, gold items among the others.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from faceedit_bench.errors import FaceEditBenchError
from faceedit_bench.storage.study_tables import Task


def check_sizes(n_items: int, annotators: int, per_item: int) -> None:
    if per_item < 1 or annotators < 1:
        raise FaceEditBenchError("--annotators and --per-item must be at least 1")
    if per_item > annotators:
        raise FaceEditBenchError(f"--per-item {per_item} needs at least {per_item} annotators (--annotators "
                                 f"{annotators}): each item is answered by {per_item} different people")
    if n_items < 1:
        raise FaceEditBenchError("the runs hold no item to ask about (no kept edit; pairwise needs two runs with "
                                 "outputs for the same faces and sessions)")


def assign(item_ids: Sequence[str], gold: Mapping[str, str | None], annotators: Sequence[str], per_item: int,
           seed: int) -> dict[str, list[Task]]:
    """annotator -> their tasks. ``gold``: gold item -> the item it asks again (None: it stands alone)."""
    lists: dict[str, list[tuple[str, bool]]] = {a: [] for a in annotators}
    n = len(annotators)
    for i, item in enumerate(item_ids):
        for j in range(per_item):
            who = annotators[(i * per_item + j) % n]
            lists[who].append((item, len(lists[who]) % 2 == 1))  # sides alternate along each list
    rng = random.Random(seed)
    tasks = {}
    for who in annotators:
        have = {item for item, _ in lists[who]}
        mine = lists[who] + [(g, k % 2 == 1) for k, (g, of) in enumerate(gold.items()) if of is None or of in have]
        rng.shuffle(mine)
        tasks[who] = [Task(seq, item, swapped) for seq, (item, swapped) in enumerate(mine)]
    return tasks
