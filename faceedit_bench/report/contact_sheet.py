"""Contact sheets: I_0..I_4 of one session side by side, with each step's outcome and FSS."""

from __future__ import annotations

import io
import re
import textwrap

from PIL import Image, ImageDraw, ImageFont

from faceedit_bench.storage.images import decode_rgb

TILE = 192
CAPTION = 64


def render(title: str, tiles: list[tuple[bytes | None, str]]) -> bytes:
    """A PNG with one tile per image; ``None`` image bytes draw an empty tile (a failed step)."""
    font = ImageFont.load_default()
    sheet = Image.new("RGB", (TILE * len(tiles), TILE + CAPTION + 18), "white")
    draw = ImageDraw.Draw(sheet)
    draw.text((4, 2), title[: 30 * len(tiles)], fill="black", font=font)
    for i, (data, caption) in enumerate(tiles):
        x = i * TILE
        if data is not None:
            im = Image.fromarray(decode_rgb(data, label="contact sheet tile"))  # upright, as it was scored
            im.thumbnail((TILE, TILE))
            sheet.paste(im, (x + (TILE - im.width) // 2, 18 + (TILE - im.height) // 2))
        else:
            draw.rectangle((x + 2, 20, x + TILE - 2, 16 + TILE), outline="gray")
        for j, line in enumerate(textwrap.wrap(caption, 30)[:5]):
            draw.text((x + 4, 20 + TILE + 12 * j), line, fill="black", font=font)
    buf = io.BytesIO()
    sheet.save(buf, format="PNG")
    return buf.getvalue()


def contact_sheet_name(face_id: str, session_id: str) -> str:
    """The file name of a session's contact sheet under ``<run>/contact_sheets/``."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{face_id}__{session_id}") + ".png"
