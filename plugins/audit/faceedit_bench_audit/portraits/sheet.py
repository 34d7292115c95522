"""The contact sheet of a portrait grid: one row per race, one column per gender and age bin, each portrait with
its cell name; a missing cell is a grey tile saying so. A person approves the selection on this sheet.

Captions use DejaVu Sans from matplotlib's data (a core dependency), else Pillow's default font.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw, ImageFont, ImageOps

from faceedit_bench.api import atomic_open
from faceedit_bench_audit.portraits import grid

TILE, PAD, LABEL_W, HEADER_H, CAPTION_H = 128, 4, 130, 24, 16


def _font(size: int) -> Any:
    try:
        import matplotlib

        return ImageFont.truetype(str(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"), size)
    except (ImportError, OSError):
        return ImageFont.load_default(size)


def _headings(draw: Any, columns: list[tuple[str, str]], width: int) -> None:
    """Column headings in two rows: the gender over its six columns (with a rule), then each age bin, as
    FairFace names them; a rule under them separates the headings from the grid."""
    label, small = _font(13), _font(12)
    span = len(grid.AGES) * (TILE + PAD)
    for n, gender in enumerate(grid.GENDERS):
        x0 = LABEL_W + n * span + PAD
        text = grid.GENDERS[gender]
        draw.text((x0 + (span - PAD - draw.textlength(text, font=label)) / 2, HEADER_H + 2), text, fill="black",
                  font=label)
        draw.line((x0, HEADER_H * 2 - 4, x0 + span - 2 * PAD, HEADER_H * 2 - 4), fill=(90, 90, 90), width=1)
    for j, (_, age) in enumerate(columns):
        x = LABEL_W + j * (TILE + PAD) + PAD
        draw.text((x + (TILE - draw.textlength(age, font=small)) / 2, HEADER_H * 2 + 2), age, fill="black", font=small)
    draw.line((PAD, HEADER_H * 3 + 2, width - PAD, HEADER_H * 3 + 2), fill=(90, 90, 90), width=1)


def draw_sheet(folder: Path, cells: list[Mapping[str, Any]], out: Path, title: str = "") -> Path:
    """Draw ``cells`` (manifest entries, or ``{cell, race, gender, age_bin, portraits: [{file}]}``) to ``out``."""
    columns = [(g, a) for g in grid.GENDERS for a in grid.AGES]
    races = list(grid.RACES)
    width = LABEL_W + len(columns) * (TILE + PAD) + PAD
    top = HEADER_H * 3 + 2 * PAD
    height = top + len(races) * (TILE + CAPTION_H + PAD) + PAD
    sheet = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(sheet)
    small, label = _font(11), _font(13)
    missing = sum(1 for c in cells if not c.get("portraits"))
    draw.text((PAD, 4), title or f"{len(cells) - missing} of {len(cells)} cells filled"
              + (f"; {missing} missing (grey)" if missing else ""), fill="black", font=label)
    _headings(draw, columns, width)
    by_name = {c["cell"]: c for c in cells}
    for i, race in enumerate(races):
        y = top + i * (TILE + CAPTION_H + PAD)
        draw.text((PAD, y + TILE // 2), race.replace("_", " "), fill="black", font=label)
        for j, (gender, age) in enumerate(columns):
            x = LABEL_W + j * (TILE + PAD) + PAD
            name = grid.cell_name(race, gender, age)
            entry = by_name.get(name) or {}
            portraits = entry.get("portraits") or []
            if portraits:
                with Image.open(folder / portraits[0]["file"]) as im:
                    tile = ImageOps.fit(ImageOps.exif_transpose(im).convert("RGB"), (TILE, TILE))
                sheet.paste(tile, (x, y))
                caption = name + (f" (+{len(portraits) - 1})" if len(portraits) > 1 else "")
            else:
                draw.rectangle((x, y, x + TILE - 1, y + TILE - 1), fill=(200, 200, 200))
                draw.text((x + 8, y + TILE // 2 - 8), "missing", fill=(90, 0, 0), font=label)
                caption = name
            draw.text((x, y + TILE + 1), caption, fill="black", font=small)
    with atomic_open(out, "wb") as fh:
        sheet.save(fh, format="PNG")
    return out
