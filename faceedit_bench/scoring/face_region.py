"""The face (and hair) region of an image, from the faces a detector found: the mask that the built-in image
metrics measure inside (edit magnitude) or outside (background preservation).

A face's region is the convex hull of its landmarks (the 68 iBUG points where the detector gives them, else its
box's corners) with the points of its upper third copied upward by ``hair`` x the face's height (forehead and
hair), scaled about its centre by ``1 + margin``. Long hair that falls below the chin is not covered: it counts as
background.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

import numpy as np
from PIL import Image, ImageDraw

from faceedit_bench.records import DetectedFace


def face_points(face: DetectedFace) -> np.ndarray:
    """The 68 iBUG landmarks of a face as (x, y) rows, or its box's four corners when the detector gives fewer."""
    dense = [face.landmarks[f"ibug68_{i:02d}"] for i in range(68) if f"ibug68_{i:02d}" in face.landmarks]
    if len(dense) == 68:
        return np.asarray(dense, dtype=np.float64)
    left, top, right, bottom = face.box
    return np.array([(left, top), (right, top), (right, bottom), (left, bottom)], dtype=np.float64)


def region_polygon(points: np.ndarray, *, hair: float, margin: float) -> np.ndarray:
    """The region's outline (hull vertices, (x, y) rows) from a face's points."""
    from scipy.spatial import ConvexHull, QhullError  # here: a run's first call does not wait for SciPy

    top, bottom = points[:, 1].min(), points[:, 1].max()
    height = max(bottom - top, 1.0)
    upper = points[points[:, 1] <= top + height / 3]
    grown = np.vstack([points, upper - [0.0, hair * height]]) if hair > 0 else points
    try:
        hull = grown[ConvexHull(grown).vertices]
    except QhullError:  # degenerate points (a line): their bounding box
        (x0, y0), (x1, y1) = grown.min(axis=0), grown.max(axis=0)
        hull = np.array([(x0, y0), (x1, y0), (x1, y1), (x0, y1)])
    centre = hull.mean(axis=0)
    return centre + (hull - centre) * (1.0 + margin)


def face_mask(shape: tuple[int, int], faces: Iterable[DetectedFace], *, hair: float, margin: float,
              scale: tuple[float, float] = (1.0, 1.0)) -> np.ndarray:
    """A boolean (H, W) mask, True inside any face's region, read-only. ``scale``: (x, y) factors from the
    coordinates the faces were found in to this shape's (an image compared at another size).

    The masks of the last images are kept: a session's steps compare each image with the one before it and
    with I_0, so without them every image's region would be drawn three times."""
    key = (tuple(shape), tuple(faces), float(hair), float(margin), tuple(float(s) for s in scale))
    try:
        hash(key)
    except TypeError:  # a detector's faces that cannot be hashed (lists for boxes): drawn each time
        return _draw(*key)
    return _kept(*key)


@functools.lru_cache(maxsize=64)
def _kept(shape: tuple[int, ...], faces: tuple[DetectedFace, ...], hair: float, margin: float,
          scale: tuple[float, ...]) -> np.ndarray:
    return _draw(shape, faces, hair, margin, scale)


def _draw(shape: tuple[int, ...], faces: tuple[DetectedFace, ...], hair: float, margin: float,
          scale: tuple[float, ...]) -> np.ndarray:
    canvas = Image.new("1", (shape[1], shape[0]))
    draw = ImageDraw.Draw(canvas)  # PIL fills a polygon in C: about 100 times skimage.draw.polygon's speed
    for face in faces:
        outline = region_polygon(face_points(face) * scale, hair=hair, margin=margin)
        draw.polygon([(float(x), float(y)) for x, y in outline], fill=1)
    mask = np.asarray(canvas, dtype=bool)
    mask.flags.writeable = False  # kept and shared: nobody may change it
    return mask
