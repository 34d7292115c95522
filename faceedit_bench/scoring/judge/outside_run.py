"""Asking a judge outside a run: a command that writes or answers questions with a judge (a protocol's own
tooling) gets the same judge service as a run (its call limits, retries, answer parsing) and the same caches
(the ledger's answers, the image store), in a workspace of its own.

    with JudgeSession.open(judge, "openai", workspace) as session:
        image = session.put_image(path)
        answer = asyncio.run(session.ask(template, [image], instruction="..."))

An answer already in the workspace's ledger for the same judge, template, images and fields is read back,
not asked again; the ledger is closed when the block ends.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from faceedit_bench.execution.calls import Executors
from faceedit_bench.keys import fingerprint, portable
from faceedit_bench.records import JudgeAnswer
from faceedit_bench.scoring.judge.service import JudgeService, PromptTemplate
from faceedit_bench.storage.images import read_image
from faceedit_bench.storage.ledger import Ledger
from faceedit_bench.storage.store import ImageStore


class JudgeSession:
    """A judge's calls outside a run (module docstring), opened with :meth:`open`."""

    def __init__(self, service: JudgeService, store: ImageStore, identity: dict[str, Any]) -> None:
        self._service = service
        self._store = store
        #: The judge's name and ``describe()``, without filesystem paths: what its answers are keyed by.
        self.identity = identity

    @classmethod
    @contextmanager
    def open(cls, judge: Any, name: str, workspace: Path, *, parse_attempts: int = 2) -> Iterator[JudgeSession]:
        """A :class:`JudgeSession` for ``judge`` (a created judge component registered as ``name``) whose answers
        and images are cached under ``workspace`` (``ledger.sqlite``, ``store/``; created when missing);
        ``parse_attempts`` is how often an unparsable answer is asked again before it is recorded as one."""
        identity = portable({"name": name, **dict(judge.describe())})
        judge_fp = fingerprint(identity)
        workspace = Path(workspace)
        workspace.mkdir(parents=True, exist_ok=True)
        ledger = Ledger(workspace / "ledger.sqlite")
        store = ImageStore(workspace / "store")
        try:
            ledger.record_component(judge_fp, "judge", identity)
            yield cls(JudgeService(judge, judge_fp, Executors().get(judge.limits), ledger, store,
                                   parse_attempts=parse_attempts), store, identity)
        finally:
            ledger.close()

    @property
    def fingerprint(self) -> str:
        """The judge's content-derived identity, part of every answer's cache key."""
        return self._service.judge_fp

    def put_image(self, image: Path | bytes) -> str:
        """Store an image (a file, checked to decode, or bytes already encoded) and give its content hash, the
        handle ``ask`` takes."""
        return self._store.put(image if isinstance(image, bytes) else read_image(Path(image))[0])

    def has_image(self, digest: str) -> bool:
        """Whether the workspace's image store holds the image with this content hash."""
        return digest in self._store

    async def ask(self, template: PromptTemplate, image_hashes: Sequence[str], seed: int = 0, *,
                  image_labels: Sequence[str] = (), **fields: Any) -> JudgeAnswer:
        """The judge's answer to ``template`` filled with ``fields`` about the stored images, in order, each
        preceded by its label when ``image_labels`` are given (``JudgeRequest.image_labels``); a failed, refused
        or unparsable answer is an answer with that outcome, never an exception."""
        return await self._service.ask(template, list(image_hashes), seed, image_labels=tuple(image_labels),
                                       **fields)

    @property
    def calls_made(self) -> int:
        """Calls sent to the provider so far (answers read from the ledger are not calls)."""
        return self._service.calls_made
