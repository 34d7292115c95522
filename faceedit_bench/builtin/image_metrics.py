"""Builtin image metrics: background preservation and edit magnitude (faceedit_bench/builtin/pixel_metrics.py)."""

from __future__ import annotations

from typing import Any

from faceedit_bench import hookimpl


@hookimpl
def faceedit_register_image_metrics(register: Any) -> None:
    # Lazy: scikit-image loads only in a run that measures them.
    register("background", "faceedit_bench.builtin.pixel_metrics:BackgroundPreservation",
             description="masked SSIM, PSNR, MAD outside the face and hair, vs I_k-1 and vs I_0")
    register("edit_magnitude", "faceedit_bench.builtin.pixel_metrics:EditMagnitude",
             description="mean absolute difference inside the face, vs I_k-1 and vs I_0")
