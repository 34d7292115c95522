"""Images embedded in report pages at the size they are shown, so a page stays small (a run's report.html
with six full-size PNG contact sheets was 1.6 MB; the full-size files stay beside it, linked).

WebP (lossy, quality 82) keeps captions readable at a third of a PNG's size; Pillow builds without WebP get
JPEG. Page templates give such images ``loading="lazy"`` and ``width``/``height``, so the first screen does
not wait for them and nothing jumps while they decode.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass

from faceedit_bench.analysis.cached import lookup_or_compute

#: The widest an image is shown on a report page: the page's content width (style.css: body max-width
#: 1200px less 2 x 2rem padding).
PAGE_WIDTH_PX = 1136
QUALITY = 82
#: libwebp's effort (0-6; Pillow's default 4): 2 encodes in half the time for 3% more bytes.
WEBP_METHOD = 2


@dataclass(frozen=True)
class PageImage:
    uri: str  # a data URI
    width: int
    height: int


def page_image(data: bytes | None, max_width: int = PAGE_WIDTH_PX) -> PageImage | None:
    """``data`` (any image Pillow reads) scaled down to ``max_width`` (never up) as a data URI; None when there
    is no image or it cannot be read (the page then says the image is missing)."""
    if not data:
        return None
    # Kept with the report's statistics: a re-report encodes none of its page images again.
    drawn = lookup_or_compute("page_image@1", {"data": data, "max_width": max_width, "quality": QUALITY,
                                               "method": WEBP_METHOD},
                              lambda: _encoded(data, max_width))
    return None if drawn is None else PageImage(*drawn)


def _encoded(data: bytes, max_width: int) -> list[str | int] | None:
    """[data URI, width, height] of :func:`page_image` (a list: the statistics cache keeps JSON)."""
    from PIL import Image, UnidentifiedImageError, features

    try:
        with Image.open(io.BytesIO(data)) as image:
            image = image.convert("RGB")
            if image.width > max_width:
                image = image.resize((max_width, max(1, round(image.height * max_width / image.width))),
                                     Image.Resampling.LANCZOS)
            buf = io.BytesIO()
            fmt = "WEBP" if features.check("webp") else "JPEG"
            image.save(buf, format=fmt, quality=QUALITY, **({"method": WEBP_METHOD} if fmt == "WEBP" else {}))
    except (OSError, UnidentifiedImageError):
        return None
    mime = "image/webp" if fmt == "WEBP" else "image/jpeg"
    return [f"data:{mime};base64," + base64.b64encode(buf.getvalue()).decode("ascii"), image.width, image.height]
