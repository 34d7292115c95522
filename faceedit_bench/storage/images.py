"""Reading, validating and hashing images. Pillow only; no ML framework."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterable
from pathlib import Path

import numpy as np
from PIL import Image, UnidentifiedImageError

from faceedit_bench.errors import ImageError
from faceedit_bench.storage import pixels

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


def decode_image(data: bytes, *, label: str = "image") -> tuple[np.ndarray, tuple[str, ...]]:
    """Decode encoded image bytes into upright 8-bit RGB pixels, shape (H, W, 3), and the
    conversions that took (EXIF orientation, high bit depth, transparency, CMYK; see
    :mod:`faceedit_bench.storage.pixels`). The stored bytes stay as they are: every stage
    decodes them here, so all see the same picture.

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
            return pixels.to_rgb8(im)
    except ImageError:
        raise
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError) as exc:
        raise ImageError(f"{label} is not a readable image ({exc}). Replace or remove the file.") from exc


def decode_rgb(data: bytes | np.ndarray, *, label: str = "image") -> np.ndarray:
    """The upright 8-bit RGB pixels, a contiguous (H, W, 3) uint8 array, of encoded image bytes
    (:func:`decode_image`) or of pixels already decoded (grey and RGBA converted; another dtype or shape is
    a ``ValueError``): what an embedder or detector is given either way."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        return decode_image(bytes(data), label=label)[0]
    image = np.asarray(data)
    if image.dtype != np.uint8:
        raise ValueError(f"expected a uint8 RGB image, got dtype {image.dtype}")
    if image.ndim == 2:
        image = np.stack([image] * 3, axis=-1)
    elif image.ndim == 3 and image.shape[2] == 4:
        image = image[:, :, :3]
    elif image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"expected an RGB image of shape (H, W, 3), got shape {image.shape}")
    return np.ascontiguousarray(image)


def plain_image(data: bytes, *, label: str = "image") -> bytes:
    """Bytes that show every reader the pixels :func:`decode_rgb` sees: ``data`` itself when
    it is already a plain upright 8-bit PNG, JPEG or WEBP, else an RGB PNG of its decoded
    pixels. Editors and judges are sent these, since a hosted API may ignore an EXIF
    orientation or read a 16-bit PNG otherwise."""
    try:
        with Image.open(io.BytesIO(data)) as im:
            if pixels.is_plain(im, data):
                return data
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError):
        pass  # decode_rgb below says what is wrong
    return encode_png(decode_rgb(data, label=label))


def read_image(path: Path) -> tuple[bytes, tuple[str, ...]]:
    """An image file's bytes and the conversions decoding it takes; raises
    :class:`ImageError` if it does not decode."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ImageError(f"cannot read image {path}: {exc.strerror or exc}") from exc
    return data, decode_image(data, label=str(path))[1]


def read_image_bytes(path: Path) -> bytes:
    """Read an image file, checking it decodes; raises :class:`ImageError` if not."""
    return read_image(path)[0]


def encode_png(rgb: np.ndarray) -> bytes:
    """RGB pixels (H, W, 3) as PNG bytes."""
    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(rgb, dtype=np.uint8)).save(buf, format="PNG", optimize=False)
    return buf.getvalue()


def unreadable_images(paths: Iterable[Path]) -> tuple[int, list[str]]:
    """How many distinct files ``paths`` name, and why each one that does not decode cannot (what a run's
    :func:`read_image` would say: random bytes, a truncated download, an HTML page saved as .jpg)."""
    seen: set[str] = set()
    problems = []
    for path in paths:
        if str(path) in seen:
            continue
        seen.add(str(path))
        try:
            read_image(path)
        except ImageError as exc:
            problems.append(str(exc))
    return len(seen), problems
