"""Read-only access to a run's images by content hash, for report sections and other readers of a run.

A section's collector finds the hashes in each session result (``result.image_hashes``: I_0 .. I_K) and reads the
pixels here, decoded and orientation-corrected like every image the run measured, and the faces the run's own
detector finds in them: those the image metrics found already are read back from the ledger, others are detected
once and kept in memory. Any thread may call it (a run hands session results on in a thread of their own).
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from faceedit_bench.records import DetectedFace
from faceedit_bench.storage.images import decode_rgb
from faceedit_bench.storage.ledger import kept_faces
from faceedit_bench.storage.store import ImageStore, store_root_of_run


class RunImages:
    """The run's image store, read-only. ``detector``: the run's face detector (None: :meth:`faces` refuses);
    ``ledger``: the run's ledger file, where the detector's faces are kept under ``detector_fp``."""

    def __init__(self, store: ImageStore, *, detector: object = None, detector_fp: str = "",
                 ledger: Path | None = None) -> None:
        self._store, self._ledger = store, ledger
        self._detector, self._detector_fp = detector, detector_fp
        self._faces: dict[str, tuple[DetectedFace, ...]] = {}
        self._lock = threading.Lock()

    @classmethod
    def of_run(cls, run_dir: Path) -> RunImages | None:
        """The images of the finished run in ``run_dir`` (``<workspace>/runs/<run>``), read-only and without a
        detector; None when its workspace's image store is gone."""
        root = store_root_of_run(Path(run_dir))
        return cls(ImageStore(root)) if root.is_dir() else None

    def __contains__(self, image_hash: object) -> bool:
        return isinstance(image_hash, str) and image_hash in self._store

    def read(self, image_hash: str) -> bytes:
        """The stored bytes of an image (PNG, JPEG, ... as the editor or dataset gave them)."""
        return self._store.get(image_hash)

    def rgb(self, image_hash: str) -> np.ndarray:
        """The image as a read-only RGB uint8 array (H, W, 3), orientation-corrected (its EXIF tag applied)."""
        rgb = decode_rgb(self.read(image_hash), label=f"stored image {image_hash[:12]}")
        rgb.flags.writeable = False
        return rgb

    @property
    def has_detector(self) -> bool:
        return self._detector is not None

    def faces(self, image_hash: str) -> tuple[DetectedFace, ...]:
        """The faces the run's detector finds in the image, largest first, with their landmarks."""
        if self._detector is None:
            raise LookupError("this run has no face detector (its embedder has no detect()); check has_detector")
        with self._lock:
            if image_hash not in self._faces:
                kept = kept_faces(self._ledger, self._detector_fp, image_hash) if self._ledger else None
                self._faces[image_hash] = kept if kept is not None else tuple(
                    self._detector.detect(self.rgb(image_hash)))  # type: ignore[attr-defined]
            return self._faces[image_hash]
