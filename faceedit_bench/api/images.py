"""The public API, topic **images**: pixels from bytes and back, the run's images as a section reads them, and
image metrics (a plugin kind of their own, ``faceedit_register_image_metrics``; docs/metrics.md).

* :func:`decode_rgb` (upright 8-bit RGB pixels of encoded bytes, or of an array: grey and RGBA converted),
  :func:`encode_png`,
  :func:`sniff_mime` (PNG, JPEG, WEBP or GIF from the signature), :func:`content_hash` (an image's identity);
* :class:`RunImages`: the run's image store, read-only, with the run's face geometry;
* :class:`ImageMetric` (``ImageMetric.Value``: each value it declares), :class:`StepImages`: an image metric and
  what it sees of one step.
"""

from __future__ import annotations

from faceedit_bench.scoring.image_metric import ImageMetric, StepImages
from faceedit_bench.storage.images import content_hash, decode_rgb, encode_png, sniff_mime
from faceedit_bench.storage.run_images import RunImages

__all__ = ["ImageMetric", "RunImages", "StepImages", "content_hash", "decode_rgb",
           "encode_png", "sniff_mime"]
