"""Decoded Pillow images as upright 8-bit RGB pixels, the one picture every stage sees.

A naive ``im.convert("RGB")`` shows many valid files wrongly: a phone photo lies on its
side (EXIF orientation), a 16-bit PNG turns almost white (values are clipped at 255, not
scaled), a transparent background turns black or into hidden colour, a CMYK file with a
print profile gets the wrong colours. :func:`to_rgb8` converts each correctly and says
which conversions it made, so a run can count them.
"""

from __future__ import annotations

import io

import numpy as np
from PIL import ExifTags, Image, ImageCms, ImageOps

#: Names of the conversions :func:`to_rgb8` reports (what a user sees in the report).
EXIF_ORIENTATION = "exif_orientation"  # an orientation tag 2..8 was applied
HIGH_BIT_DEPTH = "high_bit_depth"  # 16-bit, 32-bit integer or float pixels scaled to 8 bits
TRANSPARENCY = "transparency"  # transparent pixels composited onto white
CMYK_ICC = "cmyk_icc_profile"  # CMYK converted to sRGB through the file's ICC profile
CMYK_NAIVE = "cmyk_without_profile"  # CMYK without (a readable) profile: Pillow's plain formula
COLOUR_SPACE = "colour_space"  # LAB, HSV or YCbCr pixels converted to RGB

#: Bump when a conversion changes, so embeddings cached from older pixels are not reused.
PIXELS_VERSION = "2"

_GRAY_16 = frozenset({"I;16", "I;16L", "I;16B", "I;16N"})
_ALPHA = frozenset({"LA", "La", "PA", "RGBA", "RGBa"})
_PLAIN_MODES = frozenset({"RGB", "L", "1"})
_PLAIN_FORMATS = frozenset({"PNG", "JPEG", "WEBP"})


#: PNG chunks that can carry an orientation (EXIF, EXIF as text, XMP).
_PNG_METADATA = frozenset({b"eXIf", b"tEXt", b"zTXt", b"iTXt"})


def orientation(im: Image.Image, encoded: bytes | None = None) -> int:
    """The EXIF orientation tag (1 = upright, 2..8 = flipped and/or rotated). ``encoded``: the file's bytes,
    where at hand: Pillow decodes a whole PNG to look for metadata after its pixels, which these bytes can tell
    it has none of."""
    try:
        exif = (Image.Image.getexif(im) if encoded is not None and im.format == "PNG"
                and not _png_metadata_after_pixels(encoded) else im.getexif())
        value = exif.get(ExifTags.Base.Orientation, 1)
    except Exception:  # a corrupt EXIF block must not make the pixels unreadable
        return 1
    return value if isinstance(value, int) and 1 <= value <= 8 else 1


def _png_metadata_after_pixels(data: bytes) -> bool:
    """Whether a PNG file has a chunk that may hold an orientation after its first IDAT chunk (Pillow reads
    those only when it decodes the pixels), or cannot be walked to its end."""
    pos, after_pixels = 8, False
    while pos + 8 <= len(data):
        length, kind = int.from_bytes(data[pos:pos + 4], "big"), data[pos + 4:pos + 8]
        if kind == b"IEND":
            return False
        after_pixels = after_pixels or kind == b"IDAT"
        if after_pixels and kind in _PNG_METADATA:
            return True
        pos += 12 + length
    return True


def is_plain(im: Image.Image, encoded: bytes | None = None) -> bool:
    """True when the encoded file already shows its pixels as :func:`to_rgb8` does, to any
    reader: PNG, JPEG or WEBP, 8-bit RGB or gray, upright, without transparency. ``encoded``:
    the file's bytes, where at hand (:func:`orientation`)."""
    return (im.format in _PLAIN_FORMATS and im.mode in _PLAIN_MODES and "transparency" not in im.info
            and orientation(im, encoded) == 1)


def to_rgb8(im: Image.Image) -> tuple[np.ndarray, tuple[str, ...]]:
    """``(pixels, conversions)``: an upright (H, W, 3) uint8 RGB array, and the names of the
    conversions that were needed (empty for a plain 8-bit upright RGB or gray image)."""
    notes: list[str] = []
    if orientation(im) != 1:
        im = ImageOps.exif_transpose(im)
        notes.append(EXIF_ORIENTATION)
    mode = im.mode
    if mode in _PLAIN_MODES and "transparency" not in im.info:
        rgb = np.asarray(im.convert("RGB"))
    elif mode in _GRAY_16 or mode in ("I", "F"):
        notes.append(HIGH_BIT_DEPTH)
        rgb = np.repeat(_scale_gray(im)[..., None], 3, axis=2)
    elif mode == "CMYK":
        rgb, note = _cmyk(im)
        notes.append(note)
    elif mode in _ALPHA or mode == "P" or "transparency" in im.info:
        rgb, flattened = _flatten(im)
        if flattened:
            notes.append(TRANSPARENCY)
    elif mode == "LAB":
        notes.append(COLOUR_SPACE)
        lab_to_srgb = ImageCms.buildTransform(ImageCms.createProfile("LAB"), ImageCms.createProfile("sRGB"),
                                              "LAB", "RGB")
        rgb = np.asarray(ImageCms.applyTransform(im, lab_to_srgb))
    else:  # RGBX, YCbCr, HSV: Pillow's conversions are exact
        if mode != "RGBX":
            notes.append(COLOUR_SPACE)
        rgb = np.asarray(im.convert("RGB"))
    return np.ascontiguousarray(rgb, dtype=np.uint8), tuple(notes)


def _scale_gray(im: Image.Image) -> np.ndarray:
    """High bit depth gray pixels scaled (not clipped) into 0..255."""
    values = np.asarray(im).astype(np.float64)
    values[~np.isfinite(values)] = 0.0
    top = _nominal_max(im, values)
    if top is None:  # unknown scale: stretch the actual range
        low, high = float(values.min(initial=0.0)), float(values.max(initial=0.0))
        values, top = values - low, (high - low) or 1.0
    return np.clip(np.rint(values * (255.0 / top)), 0, 255).astype(np.uint8)


def _nominal_max(im: Image.Image, values: np.ndarray) -> float | None:
    """The value that means full white: from the mode or the file's bit depth, else the
    usual conventions (float 0..1 or 0..255, integer 0..65535); None when none fits."""
    if im.mode in _GRAY_16:
        return 65535.0
    bits = getattr(im, "tag_v2", {}).get(258)  # TIFF BitsPerSample
    if isinstance(bits, tuple):
        bits = bits[0] if bits else None
    if im.mode == "I" and isinstance(bits, int) and 8 < bits <= 16:  # e.g. 12-bit data
        return float(2**bits - 1)
    low, high = float(values.min(initial=0.0)), float(values.max(initial=0.0))
    if low < 0:
        return None
    if im.mode == "F":
        return 1.0 if high <= 1.0 else 255.0 if high <= 255.0 else None
    return 65535.0 if high <= 65535 else None


def _flatten(im: Image.Image) -> tuple[np.ndarray, bool]:
    """RGB on a white background, and whether any pixel was (partly) transparent."""
    if im.mode == "La":
        im = im.convert("LA")  # premultiplied: Pillow converts La only to LA
    rgba = np.asarray(im.convert("RGBA")).astype(np.float64)
    alpha = rgba[..., 3:] / 255.0
    if alpha.min(initial=1.0) >= 1.0:
        return rgba[..., :3].astype(np.uint8), False
    return np.rint(rgba[..., :3] * alpha + 255.0 * (1.0 - alpha)).astype(np.uint8), True


def _cmyk(im: Image.Image) -> tuple[np.ndarray, str]:
    icc = im.info.get("icc_profile")
    if icc:
        try:
            source = ImageCms.ImageCmsProfile(io.BytesIO(icc))
            out = ImageCms.profileToProfile(im, source, ImageCms.createProfile("sRGB"), outputMode="RGB")
            if out is not None:
                return np.asarray(out), CMYK_ICC
        except (ImageCms.PyCMSError, OSError, ValueError):
            pass  # an unreadable profile: fall back to the plain formula, and say so
    return np.asarray(im.convert("RGB")), CMYK_NAIVE
