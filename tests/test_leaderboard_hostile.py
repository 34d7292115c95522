"""Submissions come from strangers: each kind of hostile bundle is rejected, or rendered inert."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import struct
import zipfile
import zlib
from pathlib import Path

import pytest

from faceedit_bench.leaderboard.build import build_leaderboard
from faceedit_bench.leaderboard.bundle import check_bundle, check_image, open_bundle, read_submission
from faceedit_bench.leaderboard.errors import SubmissionRejected
from faceedit_bench.leaderboard.limits import DEFAULT_LIMITS, Limits, safe_relative_path
from faceedit_bench.leaderboard.render_markdown import md
from faceedit_bench.leaderboard.schema import printable
from faceedit_bench.leaderboard.submit import submit
from faceedit_bench.leaderboard.verify import verify_submission
from tests.test_leaderboard_support import noisy_png, rewrite_record, write_fake_run

HOSTILE_NAME = '<script>window.__pwned=1;alert(1)</script><img src=x onerror="window.__pwned=2">'
HOSTILE_NOTES = ('</td></tr></table><script>alert("notes")</script><svg onload=alert(3)> | a | [x](javascript:alert(4)) '
                 '*bold* `code` & "quotes" \'single\'')


@pytest.fixture
def submission(tmp_path, plugins) -> Path:
    run = write_fake_run(tmp_path / "ws", values=(0.5, 0.7, 0.6, 0.9))
    return submit(str(run), out=tmp_path / "lb" / "submissions", plugins=plugins)


def _image(sub: Path) -> Path:
    return sorted((sub / "images").rglob("step_1.png"))[0]


def _reject(sub: Path, match: str, limits: Limits = DEFAULT_LIMITS) -> None:
    with pytest.raises(SubmissionRejected, match=match):
        check_bundle(read_submission(sub, limits), limits)


def _png_bomb(width: int, height: int) -> bytes:
    """A real 1-bit PNG of zeros: a few kB on disk, width x height pixels when decoded."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    row = b"\0" * (1 + (width + 7) // 8)
    per_block = max(1, 2**20 // len(row))
    z, parts, left = zlib.compressobj(9), [], height
    while left > 0:
        parts.append(z.compress(row * min(per_block, left)))
        left -= per_block
    parts.append(z.flush())
    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", b"".join(parts)) + chunk(b"IEND", b"")


def test_a_good_submission_passes_every_check(submission):
    sub = read_submission(submission)
    steps = check_bundle(sub)
    assert steps == (submission / "steps.csv").read_bytes()
    assert sub.record["files"]["images_bundled"] and len(sub.record["files"]["images"]) == 16
    assert "/home/someone" not in (submission / "submission.json").read_text()  # absolute paths stay private


# -- schema and sizes -------------------------------------------------------------------------


@pytest.mark.parametrize("change, match", [
    (lambda r: r.pop("metrics"), "'metrics' is a required property"),
    (lambda r: r["metrics"]["drop_fss"].update(mean="0.1"), "is not of type"),
    (lambda r: r.update(url="javascript:alert(1)"), "does not match"),
    (lambda r: r["editor"].update(name="x" * 500), "is too long"),
    (lambda r: r["editor"].update(name="bad\x1b[31mname"), "does not match"),
    (lambda r: r.update(id="../../etc"), "does not match"),
    (lambda r: r["files"]["images"][0].update(path="../x.png"), "does not match"),
    (lambda r: r["files"]["images"][0].update(path="/etc/passwd"), "does not match"),
    (lambda r: r.update(unexpected=1), "Additional properties"),
])
def test_schema_violations_are_rejected_with_the_place(submission, change, match):
    rewrite_record(submission, change)
    with pytest.raises(SubmissionRejected, match=match) as err:
        read_submission(submission)
    assert "\x1b" not in str(err.value)  # hostile text is escaped before it reaches a terminal


def test_invalid_json_nan_and_deep_nesting_are_rejected(submission):
    path = submission / "submission.json"
    for text in ('{"a": NaN}', "[" * 100_000 + "]" * 100_000, '{"a": 1', "\xff\xfe"):
        path.write_bytes(text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text)
        with pytest.raises(SubmissionRejected):
            read_submission(submission)


def test_oversized_submission_json_is_rejected_before_parsing(submission):
    path = submission / "submission.json"
    record = json.loads(path.read_text())
    path.write_text(json.dumps(record) + " " * (4 * 2**20))  # valid JSON, 4 MiB of padding
    with pytest.raises(SubmissionRejected, match="more than the limit"):
        read_submission(submission)


def test_oversized_image_is_rejected(submission):
    _reject(submission, "more than the limit", Limits(image_bytes=100))


def test_decompression_bombs_are_rejected_without_decoding(tmp_path):
    small_limit = _png_bomb(8200, 8200)  # 67 M pixels of 1 bit: over our 8192-per-side limit
    pillow_limit = _png_bomb(20000, 20000)  # 400 M pixels: Pillow's own bomb guard
    assert len(small_limit) < 20_000 and len(pillow_limit) < 200_000
    for bomb in (small_limit, pillow_limit):
        with pytest.raises(SubmissionRejected, match="decompression bomb"):
            check_image(bomb, ".png", Limits(), what="step_1.png")


def test_a_bomb_in_a_bundle_fails_verification_before_anything_runs(submission, tmp_path, plugins):
    bomb = _png_bomb(8200, 8200)
    target = _image(submission)
    target.write_bytes(bomb)
    digest = hashlib.sha256(bomb).hexdigest()
    rel = target.relative_to(submission).as_posix()

    def change(record):  # a consistent tamper: hashes updated, so only decoding can catch it
        for entry in record["files"]["images"]:
            if entry["path"] == rel:
                old = entry["sha256"]
                entry.update(sha256=digest, bytes=len(bomb))
        steps = (submission / "steps.csv").read_text().replace(old, digest)
        (submission / "steps.csv").write_text(steps)
        record["files"]["steps_table"].update(sha256=hashlib.sha256(steps.encode()).hexdigest(),
                                              bytes=len(steps.encode()))

    rewrite_record(submission, change)
    workspace = tmp_path / "verify-ws"
    result = verify_submission(submission, plugins=plugins, workspace=workspace)
    assert result.status == "failed" and "decompression bomb" in result.reason
    assert not workspace.exists()  # nothing was composed or run


def test_image_formats_are_pinned_by_extension(submission):
    png = _image(submission).read_bytes()
    with pytest.raises(SubmissionRejected, match="not a readable JPEG"):
        check_image(png, ".jpg", Limits(), what="step_1.jpg")
    eps = b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 10 10\nshowpage\n"  # would start Ghostscript
    with pytest.raises(SubmissionRejected, match="not a readable PNG"):
        check_image(eps, ".png", Limits(), what="step_1.png")
    with pytest.raises(SubmissionRejected, match="extension"):
        check_image(png, ".eps", Limits(), what="step_1.eps")


# -- paths and links ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["../x.png", "/abs.png", "a/../../x.png", "a\\..\\x.png", ".hidden", "a//b",
                                  "C:/x.png", "a/./b", ""])
def test_unsafe_relative_paths_are_refused(name):
    with pytest.raises(SubmissionRejected):
        safe_relative_path(name)


def test_symlinks_in_a_bundle_are_rejected(submission, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("not yours")
    target = _image(submission)
    target.unlink()
    os.symlink(secret, target)
    _reject(submission, "symbolic link")


def test_a_symlinked_directory_in_a_bundle_is_rejected(submission, tmp_path):
    os.symlink(tmp_path, submission / "images" / "elsewhere")
    _reject(submission, "symbolic link")


def test_a_symlinked_submission_directory_is_not_followed(submission, tmp_path):
    link = tmp_path / "lb" / "submissions" / "linked"
    os.symlink(submission, link)
    result = build_leaderboard(tmp_path / "lb", out=tmp_path / "out")
    assert [r.name for r in result.collection.rejected] == ["linked"]


def test_unlisted_and_missing_files_are_rejected(submission):
    extra = submission / "images" / "extra.png"
    extra.write_bytes(b"x")
    _reject(submission, "does not list")
    extra.unlink()
    _image(submission).unlink()
    _reject(submission, "missing")


def test_changed_image_is_caught_by_its_hash(submission):
    _image(submission).write_bytes(noisy_png(1))
    _reject(submission, "sha256|bytes")


def _zip(path: Path, members: dict[str, bytes], symlinks: dict[str, str] | None = None) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        for name, target in (symlinks or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o120777 << 16)  # S_IFLNK
            zf.writestr(info, target)
    return path


def _members(sub: Path) -> dict[str, bytes]:
    return {p.relative_to(sub).as_posix(): p.read_bytes() for p in sorted(sub.rglob("*")) if p.is_file()}


def test_a_zip_of_a_good_bundle_opens(submission, tmp_path):
    archive = _zip(tmp_path / "ok.zip", {f"{submission.name}/{k}": v for k, v in _members(submission).items()})
    with open_bundle(archive) as root:
        check_bundle(read_submission(root))


@pytest.mark.parametrize("bad", [{"../x.png": b"x"}, {"/abs.png": b"x"}, {"a/../../x.png": b"x"}])
def test_zip_members_with_traversal_are_rejected(submission, tmp_path, bad):
    archive = _zip(tmp_path / "bad.zip", {**_members(submission), **bad})
    with pytest.raises(SubmissionRejected, match="plain relative path|empty"):
        with open_bundle(archive):
            pass
    assert not (tmp_path / "x.png").exists() and not Path("/abs.png").exists()


def test_zip_symlink_members_are_rejected(submission, tmp_path):
    archive = _zip(tmp_path / "link.zip", _members(submission), symlinks={"images/evil.png": "/etc/passwd"})
    with pytest.raises(SubmissionRejected, match="symbolic link"):
        with open_bundle(archive):
            pass


def test_zip_bombs_are_rejected(tmp_path):
    archive = _zip(tmp_path / "bomb.zip", {"steps.csv": b"\0" * (8 * 2**20)})  # 8 MiB deflates ~1000-fold
    with pytest.raises(SubmissionRejected, match="zip bomb"):
        with open_bundle(archive):
            pass


# -- markup and script: rendered inert ----------------------------------------------------------


def hostile_submission(tmp_path: Path, plugins, name: str = "hostile") -> Path:
    """A schema-valid submission whose editor name, version, submitter, notes and group label carry markup."""
    run = write_fake_run(tmp_path / "ws", editor=name, values=(0.2, 0.4, 0.3, 0.5))
    sub = submit(str(run), out=tmp_path / "lb" / "submissions", plugins=plugins, submitter=HOSTILE_NAME,
                 notes=HOSTILE_NOTES, url="https://example.org/editor?a=1&b=2")

    def change(record):
        record["editor"]["name"] = HOSTILE_NAME[:100]
        record["editor"]["version"] = "<b>1</b>"
        record["groups"]["gender"]["<i>x</i>"] = record["groups"]["gender"].pop("male")

    rewrite_record(sub, change)
    return sub


def test_markup_in_names_and_notes_is_escaped_on_the_page_and_in_markdown(tmp_path, plugins):
    hostile_submission(tmp_path, plugins)
    result = build_leaderboard(tmp_path / "lb", out=tmp_path / "out", plugins=plugins)
    assert not result.collection.rejected and len(result.collection.entries) == 1
    page = result.page.read_text()
    tags = _start_tags(page)
    assert [t for t, _ in tags if t == "script"] == ["script"]  # only the page's own script
    assert not {t for t, _ in tags} & {"img", "i", "b", "iframe", "object", "embed", "base", "form"}
    assert not [(t, a) for t, attrs in tags for a, _ in attrs if a.startswith("on")]  # no event handlers
    assert not [v for _, attrs in tags for _, v in attrs if v and v.strip().lower().startswith("javascript:")]
    assert [t for t, _ in tags].count("svg") == len(re.findall(r"<figure>", page))  # only our own plots
    assert "&lt;script&gt;window.__pwned=1;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=&#34;window.__pwned=2&#34;&gt;" in page
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    assert "script-src 'sha256-" in csp and "unsafe-inline" not in csp and "default-src 'none'" in csp
    table = result.table.read_text()
    assert "<script" not in table and "<img" not in table
    assert not re.search(r"(?<!\\)\]\(javascript", table)  # the link's brackets are escaped
    assert "&lt;script&gt;" in table and "\\| a \\|" in table


def _start_tags(page: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    """Every element the browser's parser would create, with its attributes."""
    from html.parser import HTMLParser

    tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    class Collector(HTMLParser):
        def handle_starttag(self, tag, attrs):
            tags.append((tag, attrs))

    Collector().feed(page)
    return tags


def test_markdown_cells_cannot_break_tables_or_add_links():
    assert md("a | b\nc") == "a \\| b c"
    assert md("[x](javascript:alert(1))") == "\\[x\\](javascript:alert(1))"
    assert md("<b>&") == "&lt;b&gt;&amp;"
    assert md("*_`~") == "\\*\\_\\`\\~"


def test_error_messages_escape_terminal_control_characters():
    assert printable("a\x1b[31mred\x07") == "a\\x1b[31mred\\x07"
    assert "..." in printable("x" * 500 + " is too long") and printable("x" * 500 + " is too long").endswith("long")


def test_rejected_submissions_are_listed_not_dropped(submission, tmp_path):
    rewrite_record(submission, lambda r: r.update(schema_version="9.9"))
    bogus = tmp_path / "lb" / "submissions" / "<script>alert(1)<"
    bogus.mkdir()
    result = build_leaderboard(tmp_path / "lb", out=tmp_path / "out")
    assert sorted(r.name for r in result.collection.rejected) == sorted([submission.name, "<script>alert(1)<"])
    page = result.page.read_text()
    assert "Rejected submissions" in page and "&lt;script&gt;alert(1)&lt;" in page and "<script>alert" not in page
    shutil.rmtree(bogus)
