"""Which image metrics a run computes (``image_metrics=[...]``, parameters at ``image_metric_params.<name>``), and
the scorer that computes them beside the embedder, in its workers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from faceedit_bench.errors import ConfigError
from faceedit_bench.keys import portable
from faceedit_bench.plugin.manager import Plugins
from faceedit_bench.scoring.image_metric import ImageMetric, check_metric, metric_identity
from faceedit_bench.scoring.image_scoring import ImageScorer
from faceedit_bench.storage.pixels import PIXELS_VERSION

#: ``image_metrics: null`` computes these wherever the run has a face detector and the images are faces.
DEFAULT_IMAGE_METRICS = ("background", "edit_magnitude")


def detector_of(embedder: Any) -> Any:
    """The run's face detector: its embedder, when it detects (``detect``, the FaceDetector protocol)."""
    return embedder if callable(getattr(embedder, "detect", None)) else None


def select_image_metrics(plugins: Plugins, names: Sequence[str] | None, params: Mapping[str, Any], *,
                         has_detector: bool, faces: bool) -> list[ImageMetric]:
    """The selected image metrics, built with their parameters. ``names`` None: the defaults where they can run."""
    if names is None:
        names = DEFAULT_IMAGE_METRICS if has_detector and faces else ()
    names = [str(n) for n in names]
    if len(set(names)) != len(names):
        raise ConfigError(f"image_metrics lists a metric twice: {names}")
    unused = sorted(set(params) - set(names))
    if unused:
        raise ConfigError(f"image_metric_params.{unused[0]} is set but image_metrics={names} does not select it; "
                          f"add it to image_metrics or remove the parameters")
    metrics = [_build(plugins, name, dict(params.get(name) or {})) for name in names]
    for metric in metrics:
        if metric.needs_faces and not has_detector:
            raise ConfigError(f"image metric {metric.name!r} reads faces, and the embedder of this run detects none "
                              "(it has no detect()); use embedder=dlib or embedder=insightface, or drop it from "
                              "image_metrics")
    return metrics


def _build(plugins: Plugins, name: str, params: dict[str, Any]) -> ImageMetric:
    factory = plugins.registry.get("image_metrics", name).load()  # an unknown name: the closest known ones
    try:
        metric = factory(**params)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"image_metric_params.{name}: {exc}") from exc
    try:
        return check_metric(metric, name)
    except ValueError as exc:
        raise ConfigError(f"{exc}; fix the plugin that registers it") from exc


def image_metric_identities(metrics: Sequence[ImageMetric], detector: Mapping[str, Any] | None) -> dict[str, str]:
    """Each metric's identity (its description, the pixel decoding, the detector where it reads faces)."""
    return {m.name: metric_identity(m, portable(dict(detector)) if detector is not None else None, PIXELS_VERSION)
            for m in metrics}


def image_scorer(metrics: Sequence[ImageMetric], embedder: Any, embedder_identity: Mapping[str, Any],
                 detector_fp: str, store: Any, ledger: Any, workers: int, retry: frozenset[Any],
                 embeddings: Any) -> ImageScorer | None:
    """The scorer of the selected metrics (None without any), working in the embedding service's workers."""
    if not metrics:
        return None
    detector = detector_of(embedder)
    fps = image_metric_identities(metrics, embedder_identity if detector is not None else None)
    for metric in metrics:
        ledger.record_component(fps[metric.name], "image_metric", {"name": metric.name, **dict(metric.describe())})
    return ImageScorer(metrics, fps, detector, detector_fp, store, ledger, workers, retry, embeddings)
