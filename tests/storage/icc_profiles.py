"""A tiny CMYK printer ICC profile (v2, lut8 A2B0 to Lab) built in code: no profile file ships
with any installed package. Its colour depends on K only, so going through the profile is
easy to tell from Pillow's plain CMYK formula: pure cyan comes out neutral grey."""

from __future__ import annotations

import struct
from collections.abc import Callable


def _s15(x: float) -> bytes:
    return struct.pack(">i", round(x * 65536))


def _xyz(x: float, y: float, z: float) -> bytes:
    return b"XYZ " + bytes(4) + _s15(x) + _s15(y) + _s15(z)


def _text(t: str) -> bytes:
    return b"text" + bytes(4) + t.encode() + b"\0"


def _desc(t: str) -> bytes:
    ascii_ = t.encode() + b"\0"
    return b"desc" + bytes(4) + struct.pack(">I", len(ascii_)) + ascii_ + bytes(4 + 4 + 2 + 1 + 67)


def cmyk_profile(lightness_of_k: Callable[[int], float]) -> bytes:
    """A profile mapping CMYK to Lab(lightness_of_k(k), 0, 0), k in {0, 1} at the grid corners."""
    lut = b"mft1" + bytes(4) + bytes([4, 3, 2, 0])  # 4 inputs, 3 outputs, 2 grid points
    lut += b"".join(_s15(v) for v in (1, 0, 0, 0, 1, 0, 0, 0, 1))
    lut += bytes(range(256)) * 4  # identity input curves
    for _c in (0, 1):
        for _m in (0, 1):
            for _y in (0, 1):
                for k in (0, 1):
                    lut += bytes([round(lightness_of_k(k) / 100 * 255), 128, 128])
    lut += bytes(range(256)) * 3  # identity output curves
    tags = [(b"desc", _desc("faceedit_bench test CMYK")), (b"wtpt", _xyz(0.9642, 1.0, 0.8249)),
            (b"cprt", _text("none")), (b"A2B0", lut)]
    offset = 128 + 4 + 12 * len(tags)
    table, data = struct.pack(">I", len(tags)), b""
    for signature, body in tags:
        data += bytes(-(offset + len(data)) % 4)
        table += signature + struct.pack(">II", offset + len(data), len(body))
        data += body
    header = struct.pack(">I", 128 + len(table) + len(data)) + b"lcms" + struct.pack(">I", 0x02100000)
    header += b"prtrCMYKLab " + bytes(12) + b"acsp" + bytes(4 + 4 + 8 + 8 + 4)
    header += _s15(0.9642) + _s15(1.0) + _s15(0.8249)
    return header + bytes(128 - len(header)) + table + data
