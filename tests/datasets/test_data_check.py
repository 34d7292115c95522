"""``faceedit-bench data check <dataset> <root>`` (issue 25, item 13): every shipped dataset is checked with its
own reader before any run; a missing or misnamed part is named with what is there instead; nothing is written;
every shipped dataset has its docs page (docs/datasets/<name>.md) with the command that checks it."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from faceedit_bench.cli import main
from faceedit_bench.run.data_check import DOCS, PAGES
from tests.datasets.conftest import write_image

REPO = Path(__file__).resolve().parents[2]
CELEBSET_ROWS = [("00/nm1_a.jpg", "Ann", "1", "female", "dark", "1980-01-01", "2005", "25", "young", "base"),
                 ("00/nm1_b.jpg", "Ann", "1", "female", "dark", "1980-01-01", "2006", "26", "young", "reference")]


def check(capsys, *args: str) -> tuple[int, str]:
    code = main(["data", "check", *args])
    out = capsys.readouterr()
    return code, out.out + out.err.replace("\n", " ")


def tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_every_shipped_dataset_has_a_page_that_shows_its_check(plugins):
    builtin = {name for name in plugins.registry["datasets"].names()
               if plugins.registry.get("datasets", name).provider.startswith("faceedit_bench.")}
    assert builtin == set(PAGES)
    for name in PAGES:
        page = (REPO / DOCS.format(name=name)).read_text(encoding="utf-8")
        assert f"faceedit-bench data check {name}" in page, name
        assert "Licence" in page and "Source" in page and "Version" in page, name
    index = (REPO / "docs" / "datasets" / "index.md").read_text(encoding="utf-8")
    assert all(f"({name}.md)" in index for name in PAGES)


@pytest.mark.parametrize("name", ["fairface", "celeba", "folder", "celebset", "sample"])
def test_a_usable_layout_is_described_and_left_as_it_was(capsys, name, make_fairface, make_celeba, make_folder,
                                                         make_celebset_csv, tmp_path):
    roots = {"fairface": make_fairface, "celeba": make_celeba,
             "folder": lambda: make_folder([("a.jpg", "ann", "base", "female", "dark", "25"),
                                            ("b.jpg", "ann", "reference", "female", "dark", "")]),
             "celebset": lambda: make_celebset_csv(CELEBSET_ROWS), "sample": lambda: None}
    root = roots[name]()
    before = tree(root) if root else []
    code, out = check(capsys, name, *([str(root)] if root else []))
    assert code == 0, out
    assert out.splitlines()[0].endswith(": usable") and f"docs/datasets/{name}.md" in out
    assert root is None or tree(root) == before  # a check writes nothing


def test_fairface_counts_labels_and_finds_a_missing_image(capsys, make_fairface):
    root = make_fairface()
    code, out = check(capsys, "fairface", str(root))
    assert code == 0 and "4 faces" in out and "race: Black 1, East Asian 1, Latino_Hispanic 1, Middle Eastern 1" in out
    (root / "val" / "10.jpg").unlink()
    code, out = check(capsys, "fairface", str(root))
    out = " ".join(out.split())
    assert code == 1 and "NOT usable" in out and "1 of 4 images listed" in out and str(root / "val" / "10.jpg") in out


def test_the_hf_layout_is_checked_without_copying_images(capsys, make_real_fairface, tmp_path):
    root = make_real_fairface("hf")
    cache = tmp_path / "cache"
    code, out = check(capsys, "fairface", str(root), "-p", "split=train", "-p", f"cache_dir={cache}")
    assert code == 0 and "layout hf" in out and "padding 1.25" in out
    assert not cache.exists()


def test_misnamed_files_and_folders_are_named(capsys, make_fairface, make_celeba, tmp_path):
    root = make_fairface()
    (root / "fairface_label_val.csv").rename(root / "fairface_label_val (1).csv")
    code, out = check(capsys, "fairface", str(root))
    assert code == 1 and "has 'fairface_label_val (1).csv', not 'fairface_label_val.csv'" in " ".join(out.split())
    celeba = make_celeba()
    (celeba / "Anno").rename(celeba / "anno")
    code, out = check(capsys, "celeba", str(celeba))
    assert code == 1 and "has 'anno', not 'Anno'" in " ".join(out.split())
    outer = tmp_path / "download"
    shutil.copytree(make_celeba(), outer / "celeba")  # the archive unpacked into a folder of its own
    code, out = check(capsys, "celeba", str(outer))
    assert code == 1 and f"set the root to {outer / 'celeba'} instead" in " ".join(out.split())


def test_a_fairface_root_for_the_grid_is_checked_and_not_selected(capsys, make_fairface):
    root = make_fairface()
    code, out = check(capsys, "fairface_grid", str(root), "-p", "split=val")
    assert code == 0 and "FairFace root: layout csv" in out
    assert f"no selection at {root / 'faceedit_grid'} yet" in out and "faceedit-bench portraits select" in out
    assert not (root / "faceedit_grid").exists()


def test_a_hand_made_grid_reports_its_missing_cells_and_a_misnamed_portrait(capsys, tmp_path):
    grid = tmp_path / "grid"
    write_image(grid / "White_Male_20s.jpg")
    write_image(grid / "Black_Female_70plus.jpg", 1)
    code, out = check(capsys, "fairface_grid", str(grid))
    assert code == 0 and "2 of 84 cells filled" in out and "82 of 84 grid cells have no usable portrait" in out
    write_image(grid / "Whte_Male_30s.jpg", 2)
    code, out = check(capsys, "fairface_grid", str(grid))
    assert code == 1 and "Whte_Male_30s.jpg" in out


def test_a_mistake_in_the_command_is_exit_2(capsys, tmp_path):
    code, out = check(capsys, "fairfce", str(tmp_path))
    assert code == 2 and "Did you mean 'fairface'" in out
    code, out = check(capsys, "fairface", str(tmp_path), "-p", "splt=val")
    assert code == 2 and "does not take parameter(s) splt" in out


@pytest.mark.parametrize("bad", [b"", b"\x00" * 10, b"<html><body>Not found</body></html>", b"GIF89a-truncated"])
def test_images_that_do_not_decode_are_listed_and_quick_skips_them(capsys, tmp_path, bad):
    from faceedit_bench.storage.images import encode_png

    root = tmp_path / "faces"
    root.mkdir()
    good = encode_png(np.zeros((16, 16, 3), np.uint8))
    (root / "a.png").write_bytes(good)
    (root / "b.jpg").write_bytes(bad + (good[: len(good) // 2] if bad.startswith(b"GIF") else b""))
    (root / "manifest.csv").write_text("file,identity,role,gender,skin_tone,age\na.png,a,base,,,\nb.jpg,b,base,,,\n")
    code, out = check(capsys, "folder", str(root))
    assert code == 1 and "NOT usable" in out and "images decoded: 1 of 2 readable" in out
    assert "unreadable: " in out and "b.jpg" in out and "a.png is" not in out
    code, out = check(capsys, "folder", str(root), "--quick")
    assert code == 0 and "usable" in out and "images decoded" not in out


def test_a_fairface_image_that_does_not_decode_is_named(capsys, make_fairface):
    root = make_fairface()
    victim = sorted((root / "val").iterdir())[0]
    victim.write_bytes(b"<html>rate limited</html>")
    code, out = check(capsys, "fairface", str(root))
    assert code == 1 and "1 of 4 images do not decode" in " ".join(out.split()) and victim.name in out
    code, out = check(capsys, "fairface", str(root), "--quick")
    assert code == 0
