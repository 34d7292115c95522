"""What pages load besides themselves: the shared stylesheet, the app's own rules, and images from the
workspace's content-addressed store.

An image is asked for by its content hash only (64 hex digits, checked before any path is made), so no request
names a file. ``size=thumb`` gives a downscaled JPEG made on first use and kept in a bounded in-memory cache;
without it the stored bytes are sent as they are. Both are immutable, so browsers cache them for good.
"""

from __future__ import annotations

import io
import re
import threading
from collections import OrderedDict
from importlib import resources
from pathlib import Path

from fastapi import APIRouter, HTTPException, Request
from starlette.responses import Response

from faceedit_bench.report.templates import stylesheet
from faceedit_bench.storage.images import sniff_mime

router = APIRouter()

HASH = re.compile(r"[0-9a-f]{64}")
#: The longest side of a thumbnail, in pixels (shown at up to about half that; sharp on 2x screens).
THUMB_PX = 320
#: Thumbnails kept in memory (about 10-20 kB each): the server's memory stays bounded.
THUMB_CACHE = 512
IMMUTABLE = {"Cache-Control": "private, max-age=31536000, immutable"}


@router.get("/static/style.css", include_in_schema=False)
def style_css() -> Response:
    return Response(stylesheet(), media_type="text/css")  # the one look every page the project writes shares


@router.get("/static/app.css", include_in_schema=False)
def app_css() -> Response:
    text = resources.files("faceedit_bench.serve").joinpath("static", "app.css").read_text(encoding="utf-8")
    return Response(text, media_type="text/css")


@router.get("/favicon.ico", include_in_schema=False)
def favicon() -> Response:
    return Response(status_code=204)  # none: a browser asks on every page, even the token's refusal


class Thumbnails:
    """Downscaled copies of stored images, least recently used dropped first."""

    def __init__(self, size: int = THUMB_CACHE) -> None:
        self._kept: OrderedDict[str, bytes] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def get(self, digest: str, data: bytes) -> bytes:
        with self._lock:
            if digest in self._kept:
                self._kept.move_to_end(digest)
                return self._kept[digest]
        thumb = _downscale(data)
        with self._lock:
            self._kept[digest] = thumb
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)
        return thumb


def _downscale(data: bytes) -> bytes:
    from PIL import Image, ImageOps

    with Image.open(io.BytesIO(data)) as image:
        image = ImageOps.exif_transpose(image).convert("RGB")
        image.thumbnail((THUMB_PX, THUMB_PX))
        out = io.BytesIO()
        image.save(out, "JPEG", quality=85)
    return out.getvalue()


def stored_path(store: Path, digest: str) -> Path:
    """Where the store keeps an image; refuses anything but a content hash."""
    if not HASH.fullmatch(digest):
        raise HTTPException(404, "not an image hash")
    return store / digest[:2] / digest


@router.get("/images/{digest}", include_in_schema=False)
def image(digest: str, request: Request, size: str = "full") -> Response:
    path = stored_path(request.app.state.workspace / "store", digest)
    try:
        data = path.read_bytes()
    except OSError:
        raise HTTPException(404, "no such image in the workspace's store") from None
    if size == "thumb":
        try:
            thumb = request.app.state.thumbnails.get(digest, data)
        except (OSError, ValueError):  # stored bytes that are no image (an editor's broken answer)
            raise HTTPException(415, "the stored file is not an image that can be shown") from None
        return Response(thumb, media_type="image/jpeg", headers=IMMUTABLE)
    return Response(data, media_type=sniff_mime(data) or "application/octet-stream", headers=IMMUTABLE)
