"""A battle log re-rated: an untouched log verifies; an edited log or edited ratings do not."""

from __future__ import annotations

import json

from faceedit_bench_arena.arena import ArenaSettings, rate_arena
from faceedit_bench_arena.verify import LOG, log_record, verify

SMALL = ArenaSettings(n_resamples=100, n_permutations=19, min_group_battles=2)


def write_arena(folder, log, settings=SMALL):
    editors = ["a", "b", "c"]
    part = {"editors": editors, "settings": settings.__dict__, **rate_arena(editors, log, settings)}
    text = "".join(json.dumps(b) + "\n" for b in log)
    part["battle_log"] = log_record(text)
    folder.mkdir(exist_ok=True)
    (folder / LOG).write_text(text)
    (folder / "arena.json").write_text(json.dumps(part))
    return part


def battle(x, y, score, identity, k=1, gender="male"):
    verdict = {"status": "decided", "score": score, "label": {1.0: "x", 0.0: "y"}.get(score, "both_good"),
               "position_inconsistent": False, "missing": []}
    return {"x": x, "y": y, "identity": identity, "input": f"f{identity}/s/{k}", "face": f"f{identity}", "k": k,
            "labels": {"gender": gender}, "one_sided": False,
            "verdicts": {c: verdict for c in ("instruction_following", "identity_preservation", "overall")}}


LOG_ROWS = [battle(0, 1, 1.0, i % 5, gender="male" if i % 2 else "female") for i in range(12)] + \
           [battle(1, 2, 1.0, i % 5, k=2) for i in range(10)] + [battle(0, 2, 0.5, i % 5) for i in range(6)] + \
           [{"x": 0, "y": 2, "identity": 1, "input": "f1/s/2", "face": "f1", "k": 2, "labels": {"gender": "male"},
             "one_sided": True, "outcomes": ["refused", "ok"], "score": 0.0}]


def test_an_untouched_log_verifies(tmp_path):
    write_arena(tmp_path / "arena", LOG_ROWS)
    assert verify(tmp_path / "arena") == []


def test_an_edited_log_fails_its_hash(tmp_path):
    write_arena(tmp_path / "arena", LOG_ROWS)
    path = tmp_path / "arena" / LOG
    path.write_text(path.read_text().replace('"score": 0.0', '"score": 1.0'))
    assert "the log is not the one rated" in verify(tmp_path / "arena")[0]


def test_ratings_that_do_not_follow_from_the_log_are_found(tmp_path):
    part = write_arena(tmp_path / "arena", LOG_ROWS)
    part["criteria"]["overall"]["ratings"]["editors"][0]["rating"] += 25
    (tmp_path / "arena" / "arena.json").write_text(json.dumps(part))
    problems = verify(tmp_path / "arena")
    assert problems == [f"criteria.overall.ratings.editors[0].rating: submitted "
                        f"{part['criteria']['overall']['ratings']['editors'][0]['rating']}, recomputed "
                        f"{part['criteria']['overall']['ratings']['editors'][0]['rating'] - 25}"]
