"""Contact sheets: a readable TrueType font, four decimals, the reference photo as a tile, ΔFSS per step."""

from __future__ import annotations

import io
from types import SimpleNamespace

import pytest
from PIL import Image, ImageDraw, ImageFont

from faceedit_bench.records import Outcome
from faceedit_bench.report import contact_sheet
from faceedit_bench.report.contact_sheet import (
    SheetStep,
    drawn_sheet_key,
    render_session,
    session_reference,
    session_steps,
    sheet_key,
    step_captions,
)
from faceedit_bench.storage.store import ImageStore
from faceedit_bench.testing import gradient_image


@pytest.fixture
def drawn(monkeypatch):
    """Every (text, font) the sheet draws."""
    calls = []
    original = ImageDraw.ImageDraw.text

    def text(self, xy, text, *args, **kwargs):
        calls.append((text, kwargs.get("font")))
        return original(self, xy, text, *args, **kwargs)

    monkeypatch.setattr(ImageDraw.ImageDraw, "text", text)
    return calls


def _steps() -> list[SheetStep]:
    return [SheetStep(0, gradient_image(0), 0.81234), SheetStep(1, gradient_image(1), 0.80001, "", "add glasses"),
            SheetStep(2, None, None, "refused", "remove the beard"), SheetStep(3, gradient_image(3), 0.0, "no face: FSS 0"),
            SheetStep(4, gradient_image(4), 0.51)]


def test_captions_are_drawn_in_a_truetype_font_of_at_least_14_px(drawn) -> None:
    png = render_session("face | session", (gradient_image(9), "reference (the only one)"), _steps())
    assert drawn, "nothing was drawn"
    for text, font in drawn:
        assert isinstance(font, ImageFont.FreeTypeFont), f"{text!r} drawn with {font!r}, not a TrueType font"
        assert font.size >= 14, f"{text!r} drawn at {font.size} px"
    assert "DejaVuSans" in contact_sheet.font(contact_sheet.CAPTION_PX).path
    assert Image.open(io.BytesIO(png)).width == 6 * contact_sheet.TILE  # the reference, then I0..I4


def test_captions_have_four_decimals_and_the_change_per_step() -> None:
    captions = step_captions(_steps())
    assert captions[0] == "I0  FSS 0.8123"
    assert captions[1] == "I1  FSS 0.8000\n\u0394FSS \u22120.0123\nadd glasses"
    assert captions[2] == "I2\n(refused)\nremove the beard"
    assert captions[3] == "I3  FSS 0.0000\n(no face: FSS 0)"  # no ΔFSS across a step without a score
    assert captions[4] == "I4  FSS 0.5100\n\u0394FSS +0.5100"


def test_sheet_of_a_session_result_shows_the_reference_photo(tmp_path, drawn) -> None:
    store = ImageStore(tmp_path / "store")
    reference = tmp_path / "ref.png"
    reference.write_bytes(gradient_image(7))
    face = SimpleNamespace(face_id="f", references=(reference, tmp_path / "other.png"))
    data, caption = session_reference(face)
    assert data == reference.read_bytes() and "1 of 2" in caption
    assert session_reference(SimpleNamespace(references=()))[1].startswith("reference: I0 itself")

    score = lambda fss, outcome=Outcome.OK: SimpleNamespace(fss=fss, outcome=outcome)  # noqa: E731
    result = SimpleNamespace(
        image_hashes=(store.put(gradient_image(0)),),
        scores=(score(0.9), score(0.0, Outcome.NO_FACE)),
        steps=[SimpleNamespace(k=1, output_hash=store.put(gradient_image(1)), outcome=Outcome.OK),
               SimpleNamespace(k=2, output_hash=None, outcome=Outcome.REFUSED)],
        session=SimpleNamespace(steps=[SimpleNamespace(instruction="make it older"),
                                       SimpleNamespace(instruction="add a hat")]))
    steps = session_steps(result, store)
    assert [(s.k, s.fss, s.note) for s in steps] == [(0, 0.9, ""), (1, 0.0, "no face: FSS 0"), (2, None, "refused")]
    render_session("f | s", (data, caption), steps)
    texts = [t for t, _ in drawn]
    assert any("1 of 2" in t for t in texts) and any("\u22120.9000" in t for t in texts)


def test_a_sheet_carries_the_key_of_what_it_shows_and_any_change_changes_the_key(tmp_path) -> None:
    reference = (gradient_image(9), "reference (the only one)")
    path = tmp_path / "sheet.png"
    assert drawn_sheet_key(path) is None  # no file
    path.write_bytes(gradient_image(1))
    assert drawn_sheet_key(path) is None  # a PNG drawn without a key
    path.write_bytes(render_session("face | session", reference, _steps()))
    key = drawn_sheet_key(path)
    assert key == sheet_key("face | session", reference, _steps())
    changed = [
        sheet_key("face | other", reference, _steps()),
        sheet_key("face | session", (gradient_image(8), reference[1]), _steps()),
        sheet_key("face | session", (reference[0], "reference (1 of 2)"), _steps()),
        sheet_key("face | session", reference, [*_steps()[:4], SheetStep(4, gradient_image(4), 0.52)]),
        sheet_key("face | session", reference, [*_steps()[:4], SheetStep(4, gradient_image(5), 0.51)]),
        sheet_key("face | session", reference, [*_steps()[:4], SheetStep(4, None, None, "refused")]),
        sheet_key("face | session", reference, _steps()[:4]),
    ]
    assert key not in changed and len(set(changed)) == len(changed)
