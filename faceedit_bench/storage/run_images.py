"""Read-only access to a run's images by content hash, for report sections and other readers of a run.

A section's collector finds the hashes in each session result (``result.image_hashes``: I_0 .. I_K) and reads the
pixels here, decoded and orientation-corrected like every image the run measured, and the faces the run's own
detector finds in them (kept in the ledger, so each image is detected once per detector).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from faceedit_bench.records import DetectedFace
from faceedit_bench.storage.images import decode_rgb
from faceedit_bench.storage.store import ImageStore


class RunImages:
    """The run's image store, read-only. ``detector``: the run's face detector (or None: :meth:`faces` refuses)."""

    def __init__(self, store: ImageStore, *, ledger: Any = None, detector: Any = None, detector_fp: str = "") -> None:
        self._store, self._ledger = store, ledger
        self._detector, self._detector_fp = detector, detector_fp

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
        """The faces the run's detector finds in the image, largest first (computed once, then read back)."""
        if self._detector is None:
            raise LookupError("this run has no face detector (its embedder has no detect()); check has_detector")
        if self._ledger is not None:
            kept = self._ledger.get_detections(self._detector_fp, [image_hash])
            if image_hash in kept:
                return kept[image_hash]
        found = tuple(self._detector.detect(self.rgb(image_hash)))
        if self._ledger is not None:
            self._ledger.put_detections(self._detector_fp, image_hash, found)
        return found
