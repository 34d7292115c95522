"""Contact sheets: the identity's reference photo and I_0..I_4 of one session side by side, each step with
its outcome, FSS and the change of FSS from the step before.

Captions are drawn with DejaVu Sans, the TrueType font matplotlib ships (a core dependency), so a sheet reads
the same on every machine; Pillow's own scalable default font is the fallback.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import io
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import PIL
from PIL import Image, ImageDraw, ImageFont, PngImagePlugin

from faceedit_bench.errors import ImageError
from faceedit_bench.storage.images import decode_rgb

TILE = 224
PAD = 6
CAPTION_PX = 15  # below about 14 px the numbers of a sheet shown in a report page are hard to read
TITLE_PX = 17
CAPTION_LINES = 6
DIGITS = 4  # FSS differences between steps are often in the third decimal
#: Raise when the drawing changes in a way the constants above do not show: sheets are drawn again.
SHEET_VERSION = 1
#: The PNG text chunk that holds a sheet's key.
KEY_CHUNK = "faceedit-sheet-key"


@dataclass(frozen=True)
class SheetStep:
    """One image of the session: I_0 (k=0) or an edit I_k, with how it was scored."""

    k: int
    image: bytes | None  # None: no image (refused, failed, not in the store)
    fss: float | None
    note: str = ""  # the outcome when there is no FSS, or "no face" (FSS_k = 0)
    instruction: str = ""


@functools.cache
def font(size: int, bold: bool = False) -> ImageFont.FreeTypeFont:
    """DejaVu Sans at ``size`` pixels (matplotlib's copy), else Pillow's scalable default font."""
    name = "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"
    # Found beside the package, as matplotlib.get_data_path() finds it, without importing matplotlib
    # (0.3-0.4 s of CPU, before a run's first call when its first session is a stored one).
    spec = importlib.util.find_spec("matplotlib")
    try:
        if spec is None or spec.origin is None:
            raise OSError("matplotlib is not installed")
        return ImageFont.truetype(str(Path(spec.origin).parent / "mpl-data" / "fonts" / "ttf" / name), size)
    except OSError:
        return ImageFont.load_default(size=size)  # type: ignore[return-value]  # FreeType build of Pillow


def fmt_fss(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.{DIGITS}f}"


def fmt_delta(value: float) -> str:
    # A real minus sign: "-0.0123" and "0.0123" differ by one thin character otherwise.
    return f"{value:+.{DIGITS}f}".replace("-", "\u2212")


def step_captions(steps: Sequence[SheetStep]) -> list[str]:
    """Per image, one line each: ``I_k  FSS 0.8123``, ``ΔFSS −0.0311`` (the change from I_{k-1}), the outcome
    note, the instruction."""
    out, previous = [], None
    for step in steps:
        lines = [f"I{step.k}  FSS {fmt_fss(step.fss)}" if step.fss is not None else f"I{step.k}"]
        if step.fss is not None and step.k > 0 and previous is not None:
            lines.append(f"\u0394FSS {fmt_delta(step.fss - previous)}")
        if step.note or step.fss is None:
            lines.append(f"({step.note or 'not scored'})")
        if step.instruction:
            lines.append(step.instruction)
        previous = step.fss
        out.append("\n".join(lines))
    return out


def render_session(title: str, reference: tuple[bytes | None, str], steps: Sequence[SheetStep], *,
                   key: str | None = None) -> bytes:
    """The sheet of one session: ``reference`` is (image, caption) of the photo FSS is measured against. The
    PNG carries :func:`sheet_key` of what it shows (``key``, when the caller has it already), so a rerun that
    would draw the same sheet keeps it."""
    ref_image, ref_caption = reference
    tiles = [(ref_image, ref_caption)] + list(zip((s.image for s in steps), step_captions(steps)))
    return render(title, tiles, key=key or sheet_key(title, reference, steps))


def sheet_key(title: str, reference: tuple[bytes | None, str], steps: Sequence[SheetStep]) -> str:
    """The sha256 of everything a session's sheet shows, and of the drawing's version (the layout constants and
    Pillow's), so that a changed result, caption or layout draws the sheet anew."""
    digest = hashlib.sha256(json.dumps(
        [SHEET_VERSION, PIL.__version__, TILE, PAD, CAPTION_PX, TITLE_PX, CAPTION_LINES, DIGITS, title,
         reference[1], [[s.k, s.fss, s.note, s.instruction] for s in steps]]).encode())
    for image in (reference[0], *(s.image for s in steps)):
        digest.update(b"-" if image is None else hashlib.sha256(image).digest())
    return digest.hexdigest()


def drawn_sheet_key(path: Path) -> str | None:
    """The :func:`sheet_key` a sheet file was drawn for; None when there is no such file or it has none
    (reads the PNG's header chunks only)."""
    try:
        with Image.open(path) as sheet:
            key = sheet.info.get(KEY_CHUNK)
    except (OSError, ValueError, SyntaxError):  # Pillow raises SyntaxError for a broken PNG chunk
        return None
    return key if isinstance(key, str) else None


def session_reference(face: Any) -> tuple[bytes | None, str]:
    """The first reference photo of a face's identity with its caption (FSS_k is the best similarity over all of
    them); a face without references is measured against its own base image, and the caption says so."""
    references = list(getattr(face, "references", ()) or ())
    if not references:
        return None, "reference: I0 itself (no other photo of this identity)"
    try:
        data: bytes | None = Path(references[0]).read_bytes()
    except OSError:
        data = None
    count = f"1 of {len(references)}" if len(references) > 1 else "the only one"
    return data, f"reference ({count}; FSS is the best match over all)"


def session_steps(result: Any, store: Any) -> list[SheetStep]:
    """The sheet's steps of an engine ``SessionResult``: I_0 and each attempted edit, with its score."""
    def scored(k: int, fallback: str) -> tuple[float | None, str]:
        score = result.scores[k] if len(result.scores) > k else None
        if score is None:
            return None, fallback
        if score.fss is None:
            return None, score.outcome.value
        return score.fss, ("no face: FSS 0" if score.outcome.value == "no_face" else "")

    def image(digest: str | None) -> bytes | None:
        try:
            return store.get(digest) if digest else None
        except OSError:
            return None

    fss0, note0 = scored(0, "")
    steps = [SheetStep(0, image(result.image_hashes[0] if result.image_hashes else None), fss0, note0)]
    for state in result.steps:
        fss, note = scored(state.k, state.outcome.value)
        steps.append(SheetStep(state.k, image(state.output_hash), fss, note,
                               result.session.steps[state.k - 1].instruction))
    return steps


def _wrap(text: str, face: ImageFont.FreeTypeFont, width: int) -> list[str]:
    """Lines of ``text`` that fit ``width`` pixels (words longer than a line are cut)."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        line = ""
        for word in paragraph.split():
            candidate = f"{line} {word}".strip()
            if face.getlength(candidate) <= width:
                line = candidate
                continue
            if line:
                lines.append(line)
            while face.getlength(word) > width:  # a very long word: cut it to the tile
                cut = max(1, int(len(word) * width / face.getlength(word)))
                lines.append(word[:cut])
                word = word[cut:]
            line = word
        lines.append(line)
    return lines


def _decode(data: bytes) -> Image.Image | None:
    """The tile as it was scored: upright, 8-bit RGB (storage.images), or None when unreadable."""
    try:
        return Image.fromarray(decode_rgb(data, label="contact sheet tile"))
    except ImageError:
        return None


#: The last tiles drawn, by the sha256 of their image: a face's reference photo and I_0 are on each of its
#: sessions' sheets, and an image an editor left unchanged on every step of one; decoding and shrinking an
#: image is most of a sheet's CPU. Only the small tiles are kept, never the image bytes.
_TILES: OrderedDict[bytes, Image.Image | None] = OrderedDict()
_TILES_LOCK = threading.Lock()
KEPT_TILES = 16


def _tile(data: bytes) -> Image.Image | None:
    """The image shrunk to fit a tile (never changed afterwards: tiles are shared), or None when unreadable."""
    digest = hashlib.sha256(data).digest()
    with _TILES_LOCK:
        if digest in _TILES:
            _TILES.move_to_end(digest)
            return _TILES[digest]
    im = _decode(data)
    if im is not None:
        im.thumbnail((TILE - 4, TILE - 4))
    with _TILES_LOCK:
        _TILES[digest] = im
        while len(_TILES) > KEPT_TILES:
            _TILES.popitem(last=False)
    return im


def render(title: str, tiles: list[tuple[bytes | None, str]], *, key: str | None = None) -> bytes:
    """A PNG with one tile per image; ``None`` (or unreadable) image bytes draw an empty, labelled tile.
    ``key``: kept in the PNG as a text chunk (:func:`drawn_sheet_key`)."""
    caption_font, title_font = font(CAPTION_PX), font(TITLE_PX, bold=True)
    line_h = CAPTION_PX + 4
    title_h = TITLE_PX + 2 * PAD
    width = TILE * max(1, len(tiles))
    sheet = Image.new("RGB", (width, title_h + TILE + PAD + line_h * CAPTION_LINES + PAD), "white")
    draw = ImageDraw.Draw(sheet)
    title_lines = _wrap(title, title_font, width - 2 * PAD)
    draw.text((PAD, PAD), title_lines[0] + (" …" if len(title_lines) > 1 else ""), fill="black", font=title_font)
    for i, (data, caption) in enumerate(tiles):
        x, y = i * TILE, title_h
        im = _tile(data) if data is not None else None
        if im is not None:
            sheet.paste(im, (x + (TILE - im.width) // 2, y + (TILE - im.height) // 2))
        else:
            draw.rectangle((x + 3, y + 2, x + TILE - 3, y + TILE - 2), outline="gray")
            draw.text((x + TILE // 2, y + TILE // 2), "no image" if data is None else "unreadable image",
                      fill="gray", font=caption_font, anchor="mm")
        lines = _wrap(caption, caption_font, TILE - 2 * PAD)
        if len(lines) > CAPTION_LINES:
            lines = lines[: CAPTION_LINES - 1] + [lines[CAPTION_LINES - 1] + " …"]
        for j, line in enumerate(lines):
            draw.text((x + PAD, y + TILE + PAD + line_h * j), line, fill="black", font=caption_font)
    buf = io.BytesIO()
    info = PngImagePlugin.PngInfo()
    if key is not None:
        info.add_text(KEY_CHUNK, key)
    # zlib level 1: half the encoding time of Pillow's default 6 for a tenth more bytes (a run draws up to
    # run.max_contact_sheets of them while it edits, on the cores the embedder needs).
    sheet.save(buf, format="PNG", pnginfo=info, compress_level=1)
    return buf.getvalue()


def contact_sheet_name(face_id: str, session_id: str) -> str:
    """The file name of a session's contact sheet under ``<run>/contact_sheets/``."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{face_id}__{session_id}") + ".png"
