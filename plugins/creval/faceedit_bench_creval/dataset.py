"""``creval_bench``: CREval-Bench's source images (METHODOLOGY §5.1), in the published layout read by
:mod:`faceedit_bench_creval.bench`. Each item is one base image with its own instruction (the
test set ``creval_bench`` holds one session per item, tied to its image). The images are not faces:
identity is not measured; the groups are the item's ``category`` and ``dimension``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from faceedit_bench.api import Face, Session, Step, TestSet, fingerprint
from faceedit_bench_creval.bench import read_bench


class CrevalBenchDataset:
    measures_identity = False

    #: Where ``faceedit-bench data check creval_bench`` points (source, licence, layout).
    docs_page = "docs/datasets/creval_bench.md"
    #: What ``faceedit-bench`` says when ``dataset.params.root`` is not given (parameter -> (what, example)).
    required_settings = {"root": ("the folder of CREval-Bench, as cloned from github.com/ChonghuinanWang/CREval "
                                  "(docs/creval.md)", "/data/CREval")}

    def __init__(self, root: str, limit: int | None = None) -> None:
        self.limit = limit  # checked by the core before the dataset is made
        self.root = Path(root).expanduser()
        self.items, self.questions = read_bench(self.root)
        self.items = self.items[: self.limit]

    def faces(self) -> Iterator[Face]:
        for item in self.items:
            yield Face(item.item_id, item.item_id, item.image, (),
                       {"category": item.category, "dimension": item.dimension})

    def describe(self) -> dict[str, Any]:
        return {"name": "creval_bench", "root": str(self.root), "format": "CREval-Bench published layout",
                "n_faces": len(self.items), "limit": self.limit, "measures_identity": False,
                "questions_hash": self.questions.content_hash,
                "uncategorised": sum(1 for i in self.items if i.category == "unknown")}


def creval_bench_testset(root: str) -> TestSet:
    """One single-edit session per CREval-Bench item, tied to its image; hashed with the questions."""
    items, questions = read_bench(root)
    sessions = tuple(Session(i.item_id, "creval_bench", (Step(1, i.instruction, prompt_id=i.item_id,
                                                              prompt_category=f"{i.category}/{i.dimension}"),),
                             face_id=i.item_id) for i in items)
    content = [[s.session_id, s.steps[0].instruction, s.steps[0].prompt_category] for s in sessions]
    return TestSet("creval_bench", "published", fingerprint({"sessions": content, "questions": questions.content_hash}),
                   "none", sessions, reconstruction=False,
                   description="CREval-Bench: 3 categories x 9 dimensions of creative edits (Wang et al. 2026)")
