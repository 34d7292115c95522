"""``faceedit-bench portraits`` never loses a selection and never writes into a folder a reader reads:
``select`` checks everything before touching ``--out``, replaces only a selection it made, keeps the old one
until the new one is whole (also when killed at any instant), and ``show`` draws beside a hand-made grid."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from faceedit_bench_audit.portraits import grid
from faceedit_bench_audit.portraits.dataset import FairFaceGridDataset

from faceedit_bench.testing import run_cli
from tests.test_first_time_kills import kill_and_rerun, reruns

pytest.importorskip("faceedit_bench_dlib.embedder")


@pytest.fixture
def fairface_root(make_real_fairface) -> Path:
    return make_real_fairface("csv")


@pytest.fixture(scope="module")
def first_selection(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the approved selection the module's first test made (in this process) is kept, unchanged."""
    return tmp_path_factory.mktemp("approved") / "grid"


@pytest.fixture
def approved(fairface_root, tmp_path, first_selection) -> Path:
    """A selection of the test's own, approved: made by the commands for the first test, a copy of that one
    for the others (the same faces give the same selection; making it costs 1.5 s of CPU)."""
    out = tmp_path / "grid"
    if first_selection.is_dir():
        shutil.copytree(first_selection, out)
        return out
    assert run_cli(["portraits", "select", "--root", str(fairface_root), "--out", str(out)]) == 0
    assert run_cli(["portraits", "approve", str(out), "--by", "A. Reviewer"]) == 0
    shutil.copytree(out, first_selection)
    return out


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def leftovers(folder: Path) -> list[str]:
    """Hidden temporaries or set-aside folders beside ``folder`` (its lock file excepted)."""
    return sorted(p.name for p in folder.parent.iterdir() if p.name.startswith(f".{folder.name}.")
                  and not p.name.endswith(".lock"))


@pytest.mark.parametrize("mistake", [
    ["-c", "max_abs_yaw_dge=20"],  # a typo in a criterion
    ["-c", "max_abs_yaw_deg=twenty"],
    ["--root", "/nonexistent/fairface"],  # the later --root wins
    ["--detector", "no_such_detector"],
])
def test_a_forced_select_with_a_mistake_leaves_the_approved_selection_untouched(approved, fairface_root, mistake,
                                                                                capsys):
    before = snapshot(approved)
    assert run_cli(["portraits", "select", "--root", str(fairface_root), "--out", str(approved), "--force",
                 *mistake]) == 2
    assert "Error:" in capsys.readouterr().err
    assert snapshot(approved) == before and not leftovers(approved)
    assert run_cli(["portraits", "check", str(approved)]) == 0


def test_force_never_replaces_a_folder_it_did_not_make(fairface_root, approved, tmp_path, capsys):
    mine = tmp_path / "thesis"
    mine.mkdir()
    (mine / "chapter1.tex").write_text("years of work")
    args = ["portraits", "select", "--root", str(fairface_root), "--force", "--out"]
    assert run_cli([*args, str(mine)]) == 2
    assert "not a portrait selection" in capsys.readouterr().err
    assert (mine / "chapter1.tex").read_text() == "years of work"
    (approved / "notes.txt").write_text("the reviewer's notes")  # a selection with a file it does not list
    before = snapshot(approved)
    assert run_cli([*args, str(approved)]) == 2
    assert "notes.txt" in capsys.readouterr().err and snapshot(approved) == before


def test_a_forced_select_replaces_its_own_selection_whole(fairface_root, approved):
    old = json.loads((approved / grid.MANIFEST).read_text())
    assert run_cli(["portraits", "select", "--root", str(fairface_root), "--out", str(approved), "--force",
                 "-c", "max_abs_yaw_deg=25"]) == 0
    new = json.loads((approved / grid.MANIFEST).read_text())
    assert new["content_hash"] != old["content_hash"] and "approval" not in new
    assert new["selection"]["criteria"]["max_abs_yaw_deg"] == 25
    assert run_cli(["portraits", "check", str(approved)]) == 0 and not leftovers(approved)


def test_show_draws_beside_a_hand_made_grid_which_then_still_loads(approved, tmp_path, capsys):
    hand = tmp_path / "hand"
    hand.mkdir()
    for name in ("White_Female_30s.jpg", "Black_Male_40s.jpg"):
        shutil.copy(approved / name, hand / name)
    before = snapshot(hand)
    assert run_cli(["portraits", "show", str(hand)]) == 0
    assert snapshot(hand) == before  # nothing written into the folder the dataset reads
    sheet = tmp_path / f"hand_{grid.SHEET}"
    assert f"wrote {sheet}" in capsys.readouterr().out and sheet.is_file()
    assert FairFaceGridDataset(root=hand).describe()["cells_filled"] == 2
    assert run_cli(["portraits", "show", str(hand), "--sheet", str(hand / "sheet.png")]) == 2
    assert snapshot(hand) == before
    # a grid folder where an earlier version drew its sheet still loads: the tool's own file is no portrait
    shutil.copy(sheet, hand / grid.SHEET)
    assert FairFaceGridDataset(root=hand).describe()["cells_filled"] == 2
    # a selection this tool made keeps its sheet inside (its manifest lists what is read)
    assert run_cli(["portraits", "show", str(approved)]) == 0
    assert f"wrote {approved / grid.SHEET}" in capsys.readouterr().out


@pytest.mark.slow
def test_a_portrait_selection_killed_at_any_instant_is_absent_or_whole(tmp_path, fairface_root):
    result = kill_and_rerun("portrait_selection", tmp_path / "sel", 4, str(fairface_root))
    for rerun in reruns(result):
        before = rerun["before"]
        if before["exists"]:
            assert before["check"] == 0 and before["hash"], before  # whole
        assert before.get("files", []) == [], before  # never a part of one
        # The same command again: it makes the selection, or refuses to overwrite a whole one (exit 2).
        assert rerun["code"] == (2 if before["exists"] else 0)
        assert rerun["after"]["check"] == 0
    assert all(rerun["after"]["portraits"] == result["calibration"]["portraits"] for rerun in reruns(result))


@pytest.mark.slow(seconds=11)
def test_a_forced_replacement_killed_at_any_instant_keeps_the_approved_selection_or_the_new_one(tmp_path,
                                                                                             fairface_root):
    result = kill_and_rerun("portrait_replacement", tmp_path / "rep", 4, str(fairface_root))
    between = result["calibration"]["also_kill_at"][0]  # the old selection aside, the new one not in yet
    assert between > 2 and between in [i["at"] for i in result["instants"]]
    approved = json.loads((tmp_path / "rep" / "approved" / grid.MANIFEST).read_text())["content_hash"]
    new = set()
    for rerun in reruns(result):
        before = rerun["before"]
        assert before["exists"] and before["check"] == 0, before  # a selection, whole, whatever the instant
        if before["hash"] == approved:
            assert before["approved_by"] == "A. Reviewer"
        else:  # the new selection, whole (its hash differs by when it was made)
            new.add(json.dumps(before["portraits"], sort_keys=True))
        assert rerun["code"] == 0 and rerun["after"]["check"] == 0 and rerun["after"]["hash"] != approved
    assert len(new) <= 1
