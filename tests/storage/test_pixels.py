"""Every stage sees the same upright 8-bit RGB pixels, whatever the file's orientation, bit
depth, transparency or colour space (issue 10, items 3 and 4)."""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest
from PIL import Image, ImageFile

from faceedit_bench.storage import pixels
from faceedit_bench.storage.images import decode_image, decode_rgb, plain_image, read_image
from tests.storage.icc_profiles import cmyk_profile


def encode(im: Image.Image, fmt: str, **kw) -> bytes:
    buf = io.BytesIO()
    im.save(buf, format=fmt, **kw)
    return buf.getvalue()


def raw_png(array: np.ndarray, colour_type: int) -> bytes:
    """A 16-bit PNG written byte by byte (Pillow cannot write 16-bit colour PNGs)."""
    h, w = array.shape[:2]
    rows = b"".join(b"\0" + array[y].astype(">u2").tobytes() for y in range(h))

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    ihdr = struct.pack(">IIBBBBB", w, h, 16, colour_type, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def marked() -> Image.Image:
    """8x4 RGB, red in the top-left pixel: where it ends up shows the orientation."""
    rgb = np.zeros((4, 8, 3), np.uint8)
    rgb[0, 0] = (255, 0, 0)
    return Image.fromarray(rgb)


@pytest.mark.parametrize("tag,shape,red_at", [(1, (4, 8), (0, 0)), (6, (8, 4), (0, 3)), (8, (8, 4), (7, 0)),
                                              (3, (4, 8), (3, 7))])
def test_exif_orientation_is_applied(tag, shape, red_at):
    exif = Image.Exif()
    exif[0x0112] = tag
    data = encode(marked(), "PNG", exif=exif)  # PNG: lossless, so the marked pixel stays exact
    rgb, conversions = decode_image(data)
    assert rgb.shape[:2] == shape
    assert tuple(rgb[red_at]) == (255, 0, 0)
    assert conversions == (() if tag == 1 else ("exif_orientation",))


def test_exif_orientation_in_a_jpeg():
    exif = Image.Exif()
    exif[0x0112] = 6
    rgb, conversions = decode_image(encode(marked().resize((80, 40), Image.NEAREST), "JPEG", exif=exif, quality=95))
    assert rgb.shape == (80, 40, 3) and conversions == ("exif_orientation",)
    assert rgb[2, 37, 0] > 200 and rgb[2, 2, 0] < 60  # red now top-right


@pytest.mark.parametrize("mode", ["I;16", "I;16B", "I;16L"])
def test_16_bit_gray_is_scaled_not_clipped(mode):
    values = np.array([[0, 257, 32896, 65535]], np.uint16)
    im = Image.frombytes(mode, (4, 1), values.astype(">u2" if mode == "I;16B" else "<u2").tobytes())
    assert im.mode == mode
    for fmt in ("PNG", "TIFF") if mode == "I;16" else ("TIFF",):
        rgb, conversions = decode_image(encode(im, fmt) if fmt == "PNG" or mode == "I;16" else _tiff(im))
        assert rgb[0, :, 0].tolist() == [0, 1, 128, 255], fmt
        assert (rgb[..., 0] == rgb[..., 2]).all() and conversions == ("high_bit_depth",)


def _tiff(im: Image.Image) -> bytes:
    try:
        return encode(im, "TIFF")
    except (OSError, ValueError, KeyError):  # this Pillow cannot write that byte order: decode the image itself
        pytest.skip(f"Pillow cannot write {im.mode} TIFF")


def test_16_bit_png_from_bytes_and_48_bit_colour():
    gray = np.array([[0, 65535, 16448]], np.uint16)
    rgb, conversions = decode_image(raw_png(gray, 0))
    assert rgb[0, :, 0].tolist() == [0, 255, 64] and conversions == ("high_bit_depth",)
    colour = np.array([[[65535, 0, 32896], [257, 65535, 0]]], np.uint16)
    rgb, _ = decode_image(raw_png(colour, 2))
    assert rgb.tolist() == [[[255, 0, 128], [1, 255, 0]]]


def test_32_bit_integer_and_float():
    i32 = Image.fromarray(np.array([[0, 4112, 65535]], np.int32))
    assert i32.mode == "I"
    rgb, conversions = decode_image(encode(i32, "TIFF"))
    assert rgb[0, :, 1].tolist() == [0, 16, 255] and conversions == ("high_bit_depth",)
    f01 = Image.fromarray(np.array([[0.0, 0.5, 1.0]], np.float32))
    assert f01.mode == "F"
    assert decode_rgb(encode(f01, "TIFF"))[0, :, 0].tolist() == [0, 128, 255]  # 0..1 floats
    f255 = Image.fromarray(np.array([[0.0, 100.0, 255.0]], np.float32))
    assert decode_rgb(encode(f255, "TIFF"))[0, :, 0].tolist() == [0, 100, 255]  # 0..255 floats
    wide = Image.fromarray(np.array([[-10.0, 0.0, 10.0]], np.float32))
    assert decode_rgb(encode(wide, "TIFF"))[0, :, 0].tolist() == [0, 128, 255]  # no convention: stretched


def test_gray_with_alpha_composited_on_white():
    la = np.array([[[0, 255], [0, 0], [100, 128]]], np.uint8)
    rgb, conversions = decode_image(encode(Image.fromarray(la, "LA"), "PNG"))
    assert rgb[0, :, 0].tolist() == [0, 255, round(100 * 128 / 255 + 255 * 127 / 255)]
    assert conversions == ("transparency",)


def test_rgba_and_opaque_rgba():
    rgba = np.array([[[255, 0, 0, 255], [0, 0, 255, 0]]], np.uint8)
    rgb, conversions = decode_image(encode(Image.fromarray(rgba, "RGBA"), "PNG"))
    assert rgb.tolist() == [[[255, 0, 0], [255, 255, 255]]] and conversions == ("transparency",)
    rgba[..., 3] = 255
    rgb, conversions = decode_image(encode(Image.fromarray(rgba, "RGBA"), "PNG"))
    assert rgb.tolist() == [[[255, 0, 0], [0, 0, 255]]] and conversions == ()


def test_palette_with_and_without_transparency():
    im = Image.new("P", (2, 1))
    im.putpalette([10, 20, 30, 0, 0, 0] + [0] * 762)
    im.putpixel((0, 0), 0)
    im.putpixel((1, 0), 1)
    rgb, conversions = decode_image(encode(im, "PNG", transparency=1))
    assert rgb.tolist() == [[[10, 20, 30], [255, 255, 255]]] and conversions == ("transparency",)
    rgb, conversions = decode_image(encode(im, "PNG"))
    assert rgb.tolist() == [[[10, 20, 30], [0, 0, 0]]] and conversions == ()


def test_cmyk_goes_through_its_icc_profile():
    im = Image.new("CMYK", (2, 1))
    im.putpixel((0, 0), (255, 0, 0, 0))  # pure cyan
    im.putpixel((1, 0), (0, 0, 0, 255))  # pure black
    profile = cmyk_profile(lambda k: 75 - 50 * k)  # cyan -> Lab(75, 0, 0)
    for fmt in ("JPEG", "TIFF"):
        rgb, conversions = decode_image(encode(im, fmt, icc_profile=profile, **({"quality": 100} if fmt == "JPEG" else {})))
        assert conversions == ("cmyk_icc_profile",), fmt
        # sRGB of Lab L=75 is a neutral 184; the plain formula would give cyan (0, 255, 255)
        assert np.abs(rgb[0, 0].astype(int) - 184).max() <= 4, (fmt, rgb[0, 0])
        assert rgb[0, 1].max() - rgb[0, 1].min() <= 2  # black stays neutral (the perceptual intent maps black points)
    rgb, conversions = decode_image(encode(im, "TIFF"))
    assert rgb.tolist() == [[[0, 255, 255], [0, 0, 0]]] and conversions == ("cmyk_without_profile",)


def test_plain_image_keeps_plain_bytes_and_uprights_the_rest(tmp_path):
    plain = encode(marked(), "PNG")
    assert plain_image(plain) is plain
    jpeg = encode(marked(), "JPEG")
    assert plain_image(jpeg) is jpeg
    exif = Image.Exif()
    exif[0x0112] = 6
    for data in (encode(marked(), "JPEG", exif=exif), raw_png(np.array([[1, 2]], np.uint16), 0),
                 encode(marked(), "BMP"), encode(Image.fromarray(np.zeros((2, 2, 4), np.uint8)), "PNG")):
        sent = plain_image(data)
        assert sent != data and sent.startswith(b"\x89PNG")
        with Image.open(io.BytesIO(sent)) as im:
            assert im.mode == "RGB" and pixels.orientation(im) == 1
        assert (decode_rgb(sent) == decode_rgb(data)).all()  # the editor sees what the embedder sees
    path = tmp_path / "rotated.jpg"
    path.write_bytes(encode(marked(), "JPEG", exif=exif))
    data, conversions = read_image(path)
    assert data == path.read_bytes() and conversions == ("exif_orientation",)  # stored bytes stay original


def _chunks(data: bytes) -> list[bytes]:
    out, pos = [], 8
    while pos < len(data):
        length = struct.unpack(">I", data[pos:pos + 4])[0]
        out.append(data[pos:pos + 12 + length])
        pos += 12 + length
    return out


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


@pytest.mark.parametrize("late", ["exif", "xmp"])
def test_a_png_orientation_after_its_pixels_is_found_without_decoding_others(late, monkeypatch):
    """plain_image reads a PNG's orientation from its chunks where no metadata follows the pixels, and decodes it
    (as Pillow must, to read it) where some does: both are seen rotated, as decode_rgb sees them."""
    exif = Image.Exif()
    exif[0x0112] = 6
    before = encode(marked(), "PNG", exif=exif)  # Pillow writes eXIf before IDAT
    chunks = _chunks(before)
    (exif_chunk,) = [c for c in chunks if c[4:8] == b"eXIf"]
    if late == "xmp":
        exif_chunk = _chunk(b"iTXt", b"XML:com.adobe.xmp\0\0\0\0\0<x tiff:Orientation=\"6\"/>")
    body = [c for c in chunks if c[4:8] not in (b"eXIf", b"IEND")]
    after = b"\x89PNG\r\n\x1a\n" + b"".join(body) + exif_chunk + chunks[-1]
    assert pixels._png_metadata_after_pixels(after) and not pixels._png_metadata_after_pixels(before)
    for data in (before, after):
        assert decode_image(data)[1] == ("exif_orientation",)
        sent = plain_image(data)
        assert sent != data and (decode_rgb(sent) == decode_rgb(data)).all()
    plain = encode(marked(), "PNG")
    monkeypatch.setattr(ImageFile.ImageFile, "load", lambda self: pytest.fail("decoded to read its orientation"))
    assert plain_image(plain) is plain
