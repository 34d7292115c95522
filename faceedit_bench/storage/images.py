"""Reading, validating and hashing images. Pillow only; no ML framework."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import numpy as np
from PIL import Image, UnidentifiedImageError

from faceedit_bench.errors import ImageError

#: Largest image accepted, in pixels (a 8192 x 8192 image). Protects against
#: decompression bombs in images from editors or from submissions.
MAX_PIXELS = 8192 * 8192


def content_hash(data: bytes) -> str:
    """The identity of an image: sha256 of its exact bytes."""
    return hashlib.sha256(data).hexdigest()


def sniff_mime(data: bytes) -> str | None:
    """The MIME type from the file signature (PNG, JPEG, WEBP, GIF), else None: what hosted
    APIs need to be told about an image they are sent."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    return None


def decode_rgb(data: bytes, *, label: str = "image") -> np.ndarray:
    """Decode encoded image bytes into an RGB uint8 array of shape (H, W, 3).

    Raises :class:`ImageError` with ``label`` in the message for empty, truncated,
    oversized or unreadable data.
    """
    if not data:
        raise ImageError(f"{label} is empty (0 bytes). Replace or remove the file.")
    try:
        with Image.open(io.BytesIO(data)) as im:
            if im.width * im.height > MAX_PIXELS:
                raise ImageError(f"{label} is {im.width}x{im.height}, larger than the {MAX_PIXELS} pixel limit.")
            im.load()
            return np.asarray(im.convert("RGB"))
    except ImageError:
        raise
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError) as exc:
        raise ImageError(f"{label} is not a readable image ({exc}). Replace or remove the file.") from exc


def read_image_bytes(path: Path) -> bytes:
    """Read an image file, checking it decodes; raises :class:`ImageError` if not."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ImageError(f"cannot read image {path}: {exc.strerror or exc}") from exc
    decode_rgb(data, label=str(path))
    return data


def encode_png(rgb: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(rgb, dtype=np.uint8)).save(buf, format="PNG", optimize=False)
    return buf.getvalue()
