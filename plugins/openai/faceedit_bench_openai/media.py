"""Images as the API takes them: a known format with its MIME type, or re-encoded as PNG."""

from __future__ import annotations

import base64

from faceedit_bench.api.images import decode_rgb, encode_png, sniff_mime

#: What images.edit accepts (gpt-image models) and what the vision models read.
EDIT_FORMATS = frozenset({"image/png", "image/jpeg", "image/webp"})
VISION_FORMATS = frozenset({"image/png", "image/jpeg", "image/webp", "image/gif"})
_EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp", "image/gif": "gif"}


def accepted_image(data: bytes, formats: frozenset[str]) -> tuple[bytes, str]:
    """``(bytes, mime)``: unchanged when the API accepts the format, else decoded and re-encoded as an RGB PNG."""
    mime = sniff_mime(data)
    if mime in formats:
        return data, mime
    return encode_png(decode_rgb(data, label="image sent to OpenAI")), "image/png"


def upload(data: bytes, stem: str = "image") -> tuple[str, bytes, str]:
    """A multipart file tuple ``(filename, bytes, mime)``; a bare bytes object would go out as
    application/octet-stream, which images.edit rejects."""
    data, mime = accepted_image(data, EDIT_FORMATS)
    return f"{stem}.{_EXTENSIONS[mime]}", data, mime


def data_url(data: bytes) -> str:
    data, mime = accepted_image(data, VISION_FORMATS)
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"
