"""Paper (b)'s portrait grid from real faces in both published FairFace layouts: automatic checks, the seeded
selection, the frozen manifest, the contact sheet, the CLI and the fairface_grid dataset."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from faceedit_bench_audit.portraits import grid
from faceedit_bench_audit.portraits.dataset import FairFaceGridDataset
from faceedit_bench_audit.portraits.select import select_grid
from PIL import Image

from faceedit_bench.api import ConfigError, FaceEditBenchError, registered
from faceedit_bench.api.testing import DatasetContract
from faceedit_bench.testing import run_cli

dlib_embedder = pytest.importorskip("faceedit_bench_dlib.embedder")

FILLED = {"White_Female_30s", "EastAsian_Female_20s", "Black_Male_40s"}
#: What the fixture's damaged or turned portraits are rejected for (REAL_ROWS in conftest).
REJECTED = {"Indian_Male_20s": {"not_frontal": 1}, "Latino_Female_50s": {"blurry": 1, "too_dark": 1},
            "MiddleEastern_Male_60s": {"several_faces": 1}, "White_Male_20s": {"small_face": 1},
            "SoutheastAsian_Male_70plus": {"not_frontal": 1}}


@pytest.fixture(scope="module")
def detector():
    return dlib_embedder.DlibEmbedder()


def _select(root, out, detector, tmp_path, **kw):
    ds = registered("datasets", "fairface")(root=root, split="train", cache_dir=tmp_path / "cache")
    return select_grid(ds, detector, out, detector_name="dlib", **kw)


def test_cells_and_names():
    cells = grid.cells()
    assert len(cells) == 84 and len({c["cell"] for c in cells}) == 84
    assert cells[0]["cell"] == "White_Male_20s" and cells[-1]["cell"] == "Latino_Female_70plus"
    assert grid.cell_name("Latino_Hispanic", "female", "more than 70") == "Latino_Female_70plus"
    from pathlib import Path

    assert grid.parse_name(Path("SoutheastAsian_Male_60s.jpg"))[0]["race"] == "Southeast Asian"
    assert grid.parse_name(Path("EastAsian_Female_20s_2.png"))[1] == 2
    for bad in ("Asian_Male_20s.jpg", "White_male_20s.jpg", "White_Male_80s.jpg", "White_Male_20s.gif"):
        assert grid.parse_name(Path(bad)) is None


@pytest.mark.parametrize("layout", ["csv", "hf"])
def test_selection_checks_real_faces_and_counts_rejections(make_real_fairface, detector, tmp_path, layout):
    out = tmp_path / "grid"
    manifest = _select(make_real_fairface(layout), out, detector, tmp_path)
    by_cell = {c["cell"]: c for c in manifest["cells"]}
    assert {n for n, c in by_cell.items() if c["status"] == "ok"} == FILLED
    assert {n: c["rejections"] for n, c in by_cell.items() if c["rejections"]} == REJECTED
    assert manifest["rejections"] == {"several_faces": 1, "small_face": 1, "not_frontal": 2, "too_dark": 1,
                                      "blurry": 1}
    assert len(manifest["missing_cells"]) == 81 and "Indian_Male_20s" in manifest["missing_cells"]
    assert "81 of 84 grid cells have no usable portrait" in manifest["notes"][0]
    chosen = by_cell["Black_Male_40s"]["portraits"][0]
    assert chosen["file"] == "Black_Male_40s.jpg" and (out / chosen["file"]).is_file()
    assert chosen["checks"]["n_faces"] == 1 and chosen["checks"]["face_px"] >= 128
    assert abs(chosen["checks"]["roll_deg"]) <= 10 and abs(chosen["checks"]["yaw_deg"]) <= 20
    assert manifest["content_hash"] == grid.content_hash(manifest) and grid.verify_manifest(out, manifest) == []
    assert manifest["selection"]["seed"] == 42 and manifest["source"]["layout"] == layout


def test_both_layouts_select_the_same_portraits(make_real_fairface, detector, tmp_path):
    a = _select(make_real_fairface("csv"), tmp_path / "a", detector, tmp_path)
    b = _select(make_real_fairface("hf"), tmp_path / "b", detector, tmp_path)
    files = lambda m: {p["file"]: p["sha256"] for c in m["cells"] for p in c["portraits"]}  # noqa: E731
    assert files(a) == files(b) and len(files(a)) == 3


def test_seed_orders_candidates_and_per_cell(make_real_fairface, detector, tmp_path):
    root = make_real_fairface("csv")
    # two portraits per cell: the one cell with two candidates that pass holds neither twice
    manifest = _select(root, tmp_path / "two", detector, tmp_path, per_cell=2)
    assert {c["status"] for c in manifest["cells"] if c["portraits"]} == {"partial"}
    assert any("3 cells have fewer than 2 portraits" in n for n in manifest["notes"])
    # max_checks stops a cell early: the blurred and dark astronaut cell checks only its first candidate
    one = _select(root, tmp_path / "one", detector, tmp_path, max_checks=1)
    assert sum(next(c for c in one["cells"] if c["cell"] == "Latino_Female_50s")["rejections"].values()) == 1
    with pytest.raises(ConfigError):
        _select(root, tmp_path / "x", detector, tmp_path, per_cell=2, max_checks=1)

    class EmbedOnly:  # an embedder that cannot report faces with landmarks
        def describe(self):
            return {"name": "embed_only"}

    with pytest.raises(ConfigError, match="no detect"):
        _select(root, tmp_path / "y", EmbedOnly(), tmp_path)


def test_frozen_manifest_is_the_dataset_and_tampering_is_caught(make_real_fairface, detector, tmp_path):
    out = tmp_path / "grid"
    _select(make_real_fairface("hf"), out, detector, tmp_path)
    ds = FairFaceGridDataset(root=out)
    d = ds.describe()
    assert d["selection"] == "manifest" and d["cells_filled"] == 3 and len(d["missing_cells"]) == 81
    assert any("81 of 84" in n for n in d["notes"]) and any("not been approved" in n for n in d["notes"])
    faces = list(ds.faces())
    assert [f.identity for f in faces] == ["White_Female_30s/1", "Black_Male_40s/1", "EastAsian_Female_20s/1"]
    assert faces[1].demographics == {"gender": "male", "skin_tone": None, "age_group": None, "age": None,
                                     "race": "Black", "age_bin": "40-49"}
    assert [f.identity for f in FairFaceGridDataset(root=out, base_gender="male").faces()] == ["Black_Male_40s/1"]
    assert len(list(FairFaceGridDataset(root=out, base_gender="male").partners())) == 3
    with pytest.raises(FaceEditBenchError, match="not been approved"):
        FairFaceGridDataset(root=out, require_approval=True)
    # an image replaced after freezing
    Image.new("RGB", (8, 8)).save(out / "Black_Male_40s.jpg")
    with pytest.raises(FaceEditBenchError, match=r"Black_Male_40s\.jpg changed"):
        FairFaceGridDataset(root=out)


def test_hand_made_folder_with_the_papers_names(make_real_fairface, detector, tmp_path):
    out = tmp_path / "grid"
    _select(make_real_fairface("csv"), out, detector, tmp_path)
    hand = tmp_path / "hand"
    hand.mkdir()
    for name in ("White_Female_30s.jpg", "Black_Male_40s.jpg"):
        shutil.copy(out / name, hand / name)
    ds = FairFaceGridDataset(root=hand)
    d = ds.describe()
    assert d["selection"] == "hand-made" and d["cells_filled"] == 2 and "82 of 84" in d["notes"][0]
    assert d["content_hash"] == FairFaceGridDataset(root=hand).describe()["content_hash"]
    (hand / "portrait.jpg").write_bytes((out / "Black_Male_40s.jpg").read_bytes())
    with pytest.raises(FaceEditBenchError, match=r"portrait\.jpg"):
        FairFaceGridDataset(root=hand)
    (tmp_path / "empty").mkdir()
    with pytest.raises(FaceEditBenchError, match="holds no portraits"):
        FairFaceGridDataset(root=tmp_path / "empty")
    with pytest.raises(FaceEditBenchError, match="dataset.params.root="):
        FairFaceGridDataset(root=tmp_path / "none")


def test_cli_select_show_check_approve(make_real_fairface, tmp_path, capsys):
    root, out = make_real_fairface("csv"), tmp_path / "grid"
    assert run_cli(["portraits", "select", "--root", str(root), "--out", str(out), "-c", "max_abs_yaw_deg=20"]) == 0
    text = capsys.readouterr().out
    assert "selected 3 of 84 cells" in text and "NOTE: 81 of 84" in text and "not_frontal 2" in text
    sheet = Image.open(out / grid.SHEET)
    assert sheet.width > 12 * 128 and sheet.height > 7 * 128
    assert run_cli(["portraits", "select", "--root", str(root), "--out", str(out)]) == 2  # never overwritten
    assert run_cli(["portraits", "check", str(out)]) == 0
    assert run_cli(["portraits", "show", str(out)]) == 0 and "3 of 84 cells filled" in capsys.readouterr().out
    assert run_cli(["portraits", "approve", str(out), "--by", "A. Reviewer"]) == 0
    d = FairFaceGridDataset(root=out, require_approval=True).describe()
    assert d["approved_by"] == "A. Reviewer" and not any("approved" in n for n in d["notes"])
    manifest = json.loads((out / grid.MANIFEST).read_text())
    manifest["selection"]["seed"] = 7  # an edited manifest no longer matches its hash
    (out / grid.MANIFEST).write_text(json.dumps(manifest))
    capsys.readouterr()
    assert run_cli(["portraits", "check", str(out)]) == 1 and "edited" in capsys.readouterr().out
    assert run_cli(["portraits", "select", "--root", str(root), "--out", str(tmp_path / "g2"), "-c", "bogus=1"]) == 2


def test_fairface_root_is_selected_on_first_use(make_real_fairface, tmp_path):
    root = make_real_fairface("hf")
    ds = FairFaceGridDataset(root=root, auto_select=True)
    assert ds.root == root / "faceedit_grid" and (ds.root / grid.SHEET).is_file()
    assert ds.describe()["fairface_root"] == str(root) and ds.describe()["cells_filled"] == 3
    with pytest.raises(ConfigError, match="seed"):
        FairFaceGridDataset(root=root, seed=1)
    with pytest.raises(FaceEditBenchError, match="portraits select"):
        FairFaceGridDataset(root=make_real_fairface("csv"), auto_select=False)


class TestFairFaceGridContract(DatasetContract):
    @pytest.fixture
    def dataset(self, make_real_fairface, detector, tmp_path):
        out = tmp_path / "grid"
        _select(make_real_fairface("csv"), out, detector, tmp_path)
        return FairFaceGridDataset(root=out)


# -- criteria 4-5 on real photos: dark glasses, a photographed surgical mask, closed eyes -----------------


def _glasses(im, p):
    from PIL import ImageDraw

    out = im.copy()
    draw = ImageDraw.Draw(out)
    for eye in (p[36:42], p[42:48]):
        c, w = eye.mean(axis=0), float(np.hypot(*(eye[0] - eye[3]))) * 0.95
        draw.ellipse([c[0] - w, c[1] - 0.75 * w, c[0] + w, c[1] + 0.75 * w], fill=(18, 18, 22))
    return out


def _masked(im, p):
    """insightface's photographed blue surgical mask over the nose and mouth, as insightface renders masks."""
    import insightface
    from PIL import Image

    mask = Image.open(Path(insightface.__file__).parent / "data" / "images" / "mask_blue.jpg").convert("RGB")
    out = im.copy()
    x0, x1, y0, y1 = int(p[2][0]), int(p[14][0]), int(p[29][1]), int(p[8][1] + 5)
    out.paste(mask.resize((x1 - x0, y1 - y0)), (x0, y0))
    return out


def _points(face):
    return np.array([face.landmarks[f"ibug68_{i:02d}"] for i in range(68)])


def test_covered_eyes_and_mouth_on_real_photos_are_rejected_by_reason(detector):
    """The astronaut's portrait passes every check; with dark glasses it is eyes_covered. The sixth t1 person
    (eyes shut, head turned: not_frontal first) wearing a real mask photo is mouth_covered once the yaw is allowed."""
    from faceedit_bench_audit.portraits.quality import Criteria, check_portrait, feature_tests

    from tests.datasets.conftest import real_portrait

    astronaut = real_portrait("astronaut_eileen_collins", "as_is")
    (face,) = detector.detect(np.asarray(astronaut))
    assert check_portrait(np.asarray(astronaut), (face,), Criteria())[0] is None
    covered = np.asarray(_glasses(astronaut, _points(face)))
    reason, measured = check_portrait(covered, detector.detect(covered), Criteria())
    assert reason == "eyes_covered" and measured["eye_luma_ratio"] < 0.3 < astronaut_ratio(detector, astronaut)
    person = real_portrait("t1_person6", "as_is")
    (face,) = detector.detect(np.asarray(person))
    turned = Criteria(max_abs_yaw_deg=90)
    reason, measured = check_portrait(np.asarray(person), (face,), turned)
    assert reason is None and measured["lip_redness"] > 0  # uncovered lips are redder than the cheeks
    masked = np.asarray(_masked(person, _points(face)))
    reason, measured = check_portrait(masked, detector.detect(masked), turned)
    assert reason == "mouth_covered" and measured["lip_redness"] < 0
    # a measure that was not made (no 68 points; grey-scale lips) fails nothing
    assert not any(hit for _, hit in feature_tests({"eye_aspect": None, "lip_redness": None}, Criteria()))


def astronaut_ratio(detector, im):
    from faceedit_bench_audit.portraits.features import features

    (face,) = detector.detect(np.asarray(im))
    return features(np.asarray(im), face.landmarks)["eye_luma_ratio"]


def test_the_selection_counts_rejections_of_criteria_4_and_5(make_real_fairface, detector, tmp_path):
    """A cell whose first candidate wears dark glasses takes the next one and counts the glasses as eyes_covered."""
    import io

    from tests.datasets.conftest import real_portrait, write_csv

    astronaut = real_portrait("astronaut_eileen_collins", "as_is")
    (face,) = detector.detect(np.asarray(astronaut))
    root = tmp_path / "ff"
    rows = []
    for n, im in enumerate([_glasses(astronaut, _points(face)), astronaut, _glasses(astronaut, _points(face))]):
        (root / "train").mkdir(parents=True, exist_ok=True)
        buffer = io.BytesIO()
        im.save(buffer, format="JPEG", quality=95)
        (root / "train" / f"{n + 1}.jpg").write_bytes(buffer.getvalue())
        rows.append((f"train/{n + 1}.jpg", "30-39", "Female", "White", "False"))
    write_csv(root / "fairface_label_train.csv", ("file", "age", "gender", "race", "service_test"), rows)
    manifest = _select(root, tmp_path / "grid", detector, tmp_path, max_checks=3)
    cell = next(c for c in manifest["cells"] if c["cell"] == "White_Female_30s")
    assert cell["status"] == "ok" and cell["portraits"][0]["checks"]["eye_luma_ratio"] > 0.3
    assert cell["rejections"] == {"eyes_covered": cell["checked"] - 1} and manifest["rejections"] == cell["rejections"]
    assert manifest["selection"]["features_unmeasured"] == 0
    assert "measured only where the detector gives 68-point landmarks" in manifest["selection"]["not_checked"]


def test_the_contact_sheet_has_column_and_row_headings_in_fairface_names(tmp_path, monkeypatch):
    """Two heading rows over the grid (the gender over its six columns, then every age bin as FairFace names it)
    and every race named as FairFace does, so a person approving the sheet reads each cell's labels."""
    from faceedit_bench_audit.portraits.sheet import HEADER_H, draw_sheet
    from PIL import ImageDraw

    drawn: list[tuple[float, float, str]] = []
    text = ImageDraw.ImageDraw.text
    monkeypatch.setattr(ImageDraw.ImageDraw, "text",
                        lambda self, xy, s, *a, **k: (drawn.append((xy[0], xy[1], s)), text(self, xy, s, *a, **k))[1])
    Image.new("RGB", (32, 32), "gray").save(tmp_path / "a.jpg")
    cells = [{**c, "portraits": [{"file": "a.jpg"}] if i == 0 else []} for i, c in enumerate(grid.cells())]
    sheet = Image.open(draw_sheet(tmp_path, cells, tmp_path / "sheet.png"))
    headings = [(x, s) for x, y, s in drawn if HEADER_H <= y < HEADER_H * 3]
    assert [s for _, s in headings if s in ("Male", "Female")] == ["Male", "Female"]
    ages = [s for _, s in sorted(headings) if s not in ("Male", "Female")]
    assert ages == [*grid.AGES] * 2  # 20-29 ... more than 70, under each gender
    races = {s for x, _, s in drawn if x < 10 and s in {r.replace("_", " ") for r in grid.RACES}}
    assert races == {"White", "Black", "East Asian", "Southeast Asian", "Indian", "Middle Eastern", "Latino Hispanic"}
    assert sheet.size[1] > 7 * 128  # every row of the grid below the headings
