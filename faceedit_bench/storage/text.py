"""Text files a user gives (manifests, label CSVs, test sets, label lists), read as UTF-8
with an error that names the file, the line and how to fix it."""

from __future__ import annotations

from pathlib import Path

from faceedit_bench.errors import FaceEditBenchError


def read_utf8(path: Path, *, what: str, error: type[FaceEditBenchError] = FaceEditBenchError) -> str:
    """The text of ``path`` (UTF-8, a leading byte-order mark dropped).

    A file in another encoding (Latin-1, Windows-1252, UTF-16: what spreadsheets often
    save) raises ``error`` naming the line and column of the first byte that is not UTF-8.
    """
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise error(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        line = data.count(b"\n", 0, exc.start) + 1
        bad = data[exc.start:exc.start + 1].hex()
        utf16 = " (it looks like UTF-16)" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else ""
        raise error(
            f"{path}, line {line}, column {exc.start - line_start + 1}: byte 0x{bad} is not UTF-8{utf16}; "
            f"the {what} must be UTF-8 text. Re-save it as UTF-8 (in a spreadsheet: 'CSV UTF-8'; or "
            f"`iconv -f cp1252 -t utf-8 {Path(path).name} > fixed_{Path(path).name}`)."
        ) from None
