"""The run loop end to end on synthetic faces: outcomes, exclusions, resume."""

from __future__ import annotations

import jsonschema
import pytest

from faceedit_bench.run.experiment import build_experiment, run_experiment
from tests.schema_support import builtin_report_schema

SCHEMA = builtin_report_schema()


def run(plugins, compose, *overrides):
    return run_experiment(build_experiment(compose(*overrides), plugins), plugins)


def test_identity_editor_keeps_identity_and_report_follows_schema(plugins, compose, synthetic):
    report = run(plugins, compose, *synthetic, "testset=pose")
    jsonschema.validate(report, SCHEMA)
    assert report["counts"]["sessions"] == {"planned": 20, "included": 20, "excluded": {}}
    assert report["counts"]["steps"] == {"ok": 80}
    assert report["metrics"]["drop_fss"]["mean"] == pytest.approx(0.0)
    assert [p["mean"] for p in report["trajectory"]["fss"]] == pytest.approx([1.0] * 5)
    assert set(report["groups"]["gender"]) == {"male", "female"}
    assert report["groups"]["gender"]["male"]["sessions_included"] == 10
    assert report["testset"]["reconstruction"] is True


def test_noise_editor_loses_identity_step_by_step(plugins, compose, synthetic):
    report = run(plugins, compose, *synthetic, "testset=pose", "editor=noise", "+editor.params.strength=60")
    traj = [p["mean"] for p in report["trajectory"]["fss"]]
    assert traj[0] == pytest.approx(1.0)
    assert all(a > b for a, b in zip(traj, traj[1:])), traj  # chained: each step edits the previous output
    assert report["metrics"]["drop_fss"]["mean"] > 1.0
    # FSS_k per demographic group: the included sessions of that group only, k = 0..4
    groups = report["groups"]["gender"]
    for g in groups.values():
        points = g["trajectory"]["fss"]
        assert [p["k"] for p in points] == [0, 1, 2, 3, 4] and {p["n"] for p in points} == {g["sessions_included"]}
    pooled = [p["mean"] * p["n"] for p in report["trajectory"]["fss"]]
    by_group = [sum(g["trajectory"]["fss"][k]["mean"] * g["trajectory"]["fss"][k]["n"] for g in groups.values())
                for k in range(5)]
    assert by_group == pytest.approx(pooled)  # the groups partition the included sessions


def test_failed_steps_exclude_sessions_and_are_counted(plugins, compose, synthetic):
    script = "{pose-01/2:refused,pose-02/1:raise,pose-03/4:garbage,pose-04/3:no_image}"
    report = run(plugins, compose, *synthetic, "testset=pose", "editor=scripted", f"+editor.params.script={script}")
    counts = report["counts"]
    assert counts["sessions"]["excluded"] == {
        "step_refused": 4, "step_failed": 4, "step_invalid_image": 4, "step_no_image": 4}
    assert counts["sessions"]["included"] == 4
    # after a failed step the rest of the session is skipped, never edited
    assert counts["steps"]["skipped"] == 4 * (2 + 3 + 0 + 1)
    assert counts["steps"]["refused"] == 4 and counts["steps"]["failed"] == 4
    male = report["groups"]["gender"]["male"]
    assert male["sessions_excluded"] == {"step_failed": 2, "step_invalid_image": 2, "step_no_image": 2, "step_refused": 2}
    assert report["metrics"]["drop_fss"]["n"] == 4


def test_unusable_faces_are_excluded_before_editing(plugins, compose, synthetic, tmp_path):
    calls = tmp_path / "calls.txt"
    report = run(plugins, compose, *synthetic, "testset=pose", "+dataset.params.corrupt=1", "+dataset.params.blank=1",
                 "+dataset.params.bad_reference=1", "editor=scripted", f"+editor.params.calls_file={calls}")
    assert report["counts"]["faces"] == {
        "seen": 7, "excluded": {"invalid_base_image": 1, "no_face_in_base": 1, "no_readable_reference": 1}}
    assert report["counts"]["sessions"]["excluded"] == {
        "invalid_base_image": 5, "no_face_in_base": 5, "no_readable_reference": 5}
    assert report["groups"]["gender"]["female"]["sessions_excluded"] == {"no_face_in_base": 5}
    assert report["groups"]["gender"]["male"]["sessions_excluded"] == {"invalid_base_image": 5, "no_readable_reference": 5}
    edited_faces = {line.split()[0] for line in calls.read_text().splitlines()}
    assert edited_faces == {f"synthetic/{i}" for i in range(4)}  # nothing paid for the unusable ones


def test_rerun_recomputes_nothing_and_reports_the_same(plugins, compose, synthetic, tmp_path):
    calls = tmp_path / "calls.txt"
    overrides = (*synthetic, "testset=hair", "editor=scripted", f"+editor.params.calls_file={calls}")
    first = run(plugins, compose, *overrides)
    n_calls = len(calls.read_text().splitlines())
    second = run(plugins, compose, *overrides)
    assert len(calls.read_text().splitlines()) == n_calls == 4 * 10 * 4
    assert second["run"]["computed"]["embeddings"] == 0
    assert second["run"]["key"] == first["run"]["key"]
    for key in ("metrics", "trajectory", "groups", "counts"):
        assert second[key] == first[key]


def test_transient_failures_are_retried_on_resume(plugins, compose, synthetic, tmp_path):
    calls = tmp_path / "calls.txt"
    overrides = (*synthetic, "testset=pose", "editor=scripted", f"+editor.params.calls_file={calls}")
    first = run(plugins, compose, *overrides, "+run.max_sessions=1")
    assert first["counts"]["steps"] == {"ok": 16}
    # Mark one stored edit as an API error, as a run hitting a provider outage would leave it.
    import sqlite3
    db = sqlite3.connect(tmp_path / "ws" / "ledger.sqlite")
    db.execute("UPDATE edits SET outcome='api_error' WHERE rowid = (SELECT MIN(rowid) FROM edits WHERE k = 1)")
    db.commit()
    before = len(calls.read_text().splitlines())
    again = run(plugins, compose, *overrides, "+run.max_sessions=1")
    # Only the API-error step is redone: it reproduces the same image, so the content keys
    # of the later steps are unchanged and they come from the ledger.
    assert len(calls.read_text().splitlines()) - before == 1
    assert again["counts"]["steps"] == {"ok": 16}


def test_changing_the_embedder_rescores_without_new_edits(plugins, compose, synthetic, tmp_path):
    calls = tmp_path / "calls.txt"
    overrides = (*synthetic, "testset=pose", "editor=scripted", "+editor.params.noise=40",
                 f"+editor.params.calls_file={calls}")
    first = run(plugins, compose, *overrides)
    n_calls = len(calls.read_text().splitlines())
    second = run(plugins, compose, *overrides, "embedder=pixel_coarse")
    assert len(calls.read_text().splitlines()) == n_calls  # every edit came from the ledger
    assert second["run"]["computed"]["embeddings"] > 0  # but every image was scored anew
    assert second["run"]["key"] != first["run"]["key"]
    assert second["scales"]["embedder_version"] == "2"


def test_an_image_that_cannot_be_scored_excludes_its_session_without_a_score(plugins, compose, synthetic):
    report = run(plugins, compose, *synthetic, "testset=pose", "editor=scripted", "+editor.params.script={pose-02/3:tiny}")
    assert report["counts"]["steps"] == {"ok": 80}  # the edit itself succeeded
    assert report["counts"]["sessions"]["excluded"] == {"score_failed": 4}
    assert report["metrics"]["drop_fss"]["n"] == 16


def test_exported_edits_replay_to_the_same_results(plugins, compose, synthetic, tmp_path):
    from faceedit_bench.cli import main

    live = run(plugins, compose, *synthetic, "testset=pose", "editor=scripted", "+editor.params.noise=40",
               "+editor.params.script={pose-02/2:refused}")
    (run_dir,) = (tmp_path / "ws" / "runs").iterdir()
    assert main(["export-replay", str(run_dir), str(tmp_path / "replay")]) == 0
    replayed = run(plugins, compose, *synthetic, "testset=pose", "editor=replay",
                   f"editor.params.root={tmp_path / 'replay'}")
    assert replayed["metrics"]["drop_fss"]["mean"] > 0.1
    for key in ("metrics", "trajectory", "groups"):
        assert replayed[key] == live[key]
    assert replayed["counts"]["steps"] == live["counts"]["steps"] == {"ok": 68, "refused": 4, "skipped": 8}


def test_the_same_data_at_another_path_is_the_same_experiment(plugins, compose, tmp_path):
    import shutil

    from faceedit_bench.testing import gradient_image

    first = tmp_path / "data_a"
    first.mkdir()
    rows = ["file,identity,role,gender,skin_tone,age"]
    for i in range(3):
        (first / f"{i}.png").write_bytes(gradient_image(i))
        (first / f"{i}_ref.png").write_bytes(gradient_image(i))
        rows += [f"{i}.png,p{i},base,female,,", f"{i}_ref.png,p{i},reference,female,,"]
    (first / "manifest.csv").write_text("\n".join(rows) + "\n")
    second = tmp_path / "elsewhere" / "data_b"
    shutil.copytree(first, second)
    common = ("dataset=folder", "embedder=pixel", "tracking=none", "run.workers=1", "testset=pose")
    a = run(plugins, compose, *common, f"dataset.params.root={first}")
    b = run(plugins, compose, *common, f"dataset.params.root={second}")
    assert a["components"]["dataset"]["description"]["root"] != b["components"]["dataset"]["description"]["root"]
    assert b["run"]["key"] == a["run"]["key"]  # locations are provenance, not identity
    assert b["run"]["computed"]["embeddings"] == 0 and b["metrics"] == a["metrics"]


def test_a_scoring_failure_ends_the_run_with_its_own_error_and_a_rerun_resumes(plugins, compose, synthetic,
                                                                              tmp_path, monkeypatch):
    from faceedit_bench.scoring.identity import EmbeddingService

    calls = tmp_path / "calls.txt"
    overrides = (*synthetic, "+dataset.params.n=8", "testset=pose", "editor=scripted",
                 f"+editor.params.calls_file={calls}", "+run.max_sessions=1")
    real_aget = EmbeddingService.aget

    async def broken_aget(self, hashes):  # the first session's scoring fails while later ones are edited
        raise RuntimeError("embedding workers died")

    monkeypatch.setattr(EmbeddingService, "aget", broken_aget)
    with pytest.raises(RuntimeError, match="embedding workers died"):  # not wrapped, not swallowed
        run(plugins, compose, *overrides)
    made = len(calls.read_text().splitlines())
    assert 4 <= made <= 32  # at least the first session was edited; the edits in flight finished and were recorded
    monkeypatch.setattr(EmbeddingService, "aget", real_aget)
    report = run(plugins, compose, *overrides)
    done = calls.read_text().splitlines()
    assert len(done) == len(set(done)) == 32  # the rerun edited only what was left: no edit paid twice
    assert report["counts"]["steps"] == {"ok": 32}


def test_contact_sheets_show_the_reference_photo_then_every_step_and_a_rerun_draws_only_a_changed_one_again(
        plugins, compose, synthetic):
    from PIL import Image

    from faceedit_bench.report.contact_sheet import TILE, drawn_sheet_key, render

    overrides = (*synthetic, "testset=pose", "run.max_faces=1", "run.max_sessions=1")
    exp = build_experiment(compose(*overrides), plugins)
    run_experiment(exp, plugins)
    (sheet,) = (exp.info.output_dir / "contact_sheets").iterdir()
    assert Image.open(sheet).width == 6 * TILE  # the reference photo, then I0..I4
    drawn = sheet.stat().st_ino  # every write replaces the file (a new inode)
    rerun = build_experiment(compose(*overrides), plugins)
    run_experiment(rerun, plugins)
    assert rerun.info.output_dir == exp.info.output_dir and sheet.stat().st_ino == drawn
    sheet.write_bytes(render("another session", [], key="0" * 64))
    run_experiment(build_experiment(compose(*overrides), plugins), plugins)
    assert sheet.stat().st_ino != drawn and drawn_sheet_key(sheet) is not None


def test_a_resumed_run_draws_its_stored_sessions_sheets_once_its_first_new_call_has_returned(
        plugins, compose, synthetic, monkeypatch):
    from faceedit_bench.report import artifacts

    overrides = (*synthetic, "testset=pose", "run.max_sessions=1")
    run(plugins, compose, *overrides, "run.max_faces=1")
    exp = build_experiment(compose(*overrides, "run.max_faces=2"), plugins)  # a new run folder: no sheet kept
    events = []
    editor, draw = exp.components["editor"], artifacts.render_session
    edit = editor.edit
    editor.edit = lambda request: (events.append("edit"), edit(request))[1]
    monkeypatch.setattr(artifacts, "render_session", lambda *args, **kwargs: (events.append("sheet"),
                                                                               draw(*args, **kwargs))[1])
    report = run_experiment(exp, plugins)
    assert report["counts"]["steps"] == {"ok": 8}
    assert events[0] == "edit" and events.count("sheet") == 2  # the stored session's sheet waited
    assert len(list((exp.info.output_dir / "contact_sheets").iterdir())) == 2


def test_an_edited_image_is_embedded_when_its_step_is_done_not_when_its_session_is(tmp_path):
    """The flow queues each edited image's embedding as soon as the step is done; the session's scoring
    later waits for that same work instead of starting it (so the last sessions leave no backlog)."""
    import asyncio

    from faceedit_bench.records import Outcome
    from faceedit_bench.scoring.identity import EmbeddingService
    from faceedit_bench.storage.ledger import Ledger
    from faceedit_bench.storage.store import ImageStore
    from faceedit_bench.testing import PixelEmbedder, gradient_image

    class Counting(PixelEmbedder):
        calls = 0

        def embed(self, rgb):
            Counting.calls += 1
            return super().embed(rgb)

    store, ledger = ImageStore(tmp_path / "store"), Ledger(tmp_path / "ledger.sqlite")
    service = EmbeddingService(Counting(), "fp", Counting, store, ledger, 1, frozenset({Outcome.FAILED}))
    edited = store.put(gradient_image(1))

    async def step_then_session() -> tuple[bool, dict]:
        service.prefetch([edited])  # the step is done; nobody waits for its embedding yet
        for _ in range(500):  # the session's further steps take their time meanwhile
            if ledger.get_embeddings("fp", [edited]):
                break
            await asyncio.sleep(0.01)
        embedded_before_the_session_ended = bool(ledger.get_embeddings("fp", [edited]))
        return embedded_before_the_session_ended, await service.aget([edited])  # the session's scoring

    try:
        early, got = asyncio.run(step_then_session())
    finally:
        service.close()
        ledger.close()
    assert early and got[edited].outcome is Outcome.OK
    assert Counting.calls == 1  # embedded once: the scoring found it done


def test_the_flow_hands_each_edited_image_to_scoring_as_its_step_ends():
    from types import SimpleNamespace

    from faceedit_bench.run.flow import Flow

    edit, score = SimpleNamespace(on_image=None), SimpleNamespace(image_edited=lambda image_hash: None)
    flow = Flow(SimpleNamespace(), edit, score, (), lambda result: None)
    try:
        assert edit.on_image == score.image_edited
    finally:
        flow.close()


@pytest.mark.timeout(60)
def test_closing_ends_a_task_that_takes_a_cancellation_and_waits_again():
    # Ctrl-C: the engine cancels what is left; a task that waits again on its way out is cancelled again,
    # so closing can never hang (it waited on such a task for good before).
    import asyncio
    from types import SimpleNamespace

    from faceedit_bench.run.engine import Engine

    engine = Engine(admission=None, edit=SimpleNamespace(close=lambda: None), score=None)  # type: ignore[arg-type]
    never = engine._loop.create_future()
    cancellations = []

    async def stubborn() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancellations.append(1)
            await never  # its own clean-up, waiting on what nothing will finish

    async def start() -> asyncio.Task[None]:
        task = asyncio.ensure_future(stubborn())
        await asyncio.sleep(0)
        return task

    task = engine.run_async(start())
    engine.close()
    assert task.cancelled() and len(cancellations) == 1 and engine._loop.is_closed()


@pytest.mark.parametrize("fails", [False, True])
def test_the_editors_prepare_runs_once_in_a_worker_thread_and_a_failure_is_left_to_the_calls(
        plugins, compose, synthetic, fails):
    import threading

    exp = build_experiment(compose(*synthetic, "testset=pose", "run.max_faces=2"), plugins)
    threads = []

    def prepare() -> None:
        threads.append(threading.get_ident())
        if fails:
            raise RuntimeError("no SDK")

    exp.components["editor"].prepare = prepare
    report = run_experiment(exp, plugins)
    assert len(threads) == 1 and threads[0] != threading.get_ident()
    assert report["counts"]["steps"] == {"ok": 40}  # 2 faces x 5 sessions x 4 steps: the edits decide
    rerun = build_experiment(compose(*synthetic, "testset=pose", "run.max_faces=2"), plugins)
    rerun.components["editor"].prepare = prepare
    run_experiment(rerun, plugins)
    assert len(threads) == 1  # every face embedded already: a rerun that may make no call prepares nothing


def test_a_prepare_that_is_not_a_method_is_refused_when_the_run_starts(plugins, compose, synthetic):
    from faceedit_bench.errors import ConfigError

    exp = build_experiment(compose(*synthetic, "testset=pose", "run.max_faces=1"), plugins)
    exp.components["editor"].prepare = "soon"
    with pytest.raises(ConfigError, match=r"editor IdentityEditor: prepare='soon' must be a method or None"):
        run_experiment(exp, plugins)
