"""Image metrics in the score stage: values kept in the ledger by step content and metric identity (a rerun computes
nothing, a changed parameter recomputes that metric alone), failures recorded and never a number, and the values
in every table a run writes."""

from __future__ import annotations

import asyncio
import csv
import json
from pathlib import Path

import numpy as np
import pytest

from faceedit_bench.api.images import ImageMetric
from faceedit_bench.api.testing import ImageMetricContract
from faceedit_bench.errors import ConfigError
from faceedit_bench.records import AdmittedFace, DetectedFace, Face, Outcome, Session, Step, StepState
from faceedit_bench.run.experiment import build_experiment, run_experiment
from faceedit_bench.run.image_metrics import image_metric_identities
from faceedit_bench.scoring.image_scoring import ImageScorer
from faceedit_bench.storage.images import encode_png
from faceedit_bench.storage.ledger import Ledger
from faceedit_bench.storage.store import ImageStore
from faceedit_bench.testing.image_metrics import contract_steps
from tests.test_contracts import failed, outcomes


class Brightness(ImageMetric):
    """The change of mean brightness from I_{k-1} to I_k, times ``scale``; raises on a step whose instruction
    says ``fail``."""

    name = "brightness"
    values = (ImageMetric.Value("brightness_change", None, "grey levels", "mean brightness change", bounds=(-255, 255)),
              ImageMetric.Value("brightness_end", None, "grey levels", "mean brightness of I_K", aggregate="last"))

    def __init__(self, scale: float = 1.0) -> None:
        self.scale = scale

    def describe(self):
        return {"version": "1", "scale": self.scale}

    def measure(self, step):
        if "fail" in step.instruction:
            raise RuntimeError("cannot measure this step")
        return {"brightness_change": self.scale * float(step.current.mean() - step.previous.mean()),
                "brightness_end": float(step.current.mean())}


class Contrast(Brightness):
    name = "contrast"
    values = (ImageMetric.Value("contrast_change", None, "grey levels", "standard deviation change"),)

    def measure(self, step):
        return {"contrast_change": float(step.current.std() - step.previous.std())}


class TestBrightnessContract(ImageMetricContract):
    @pytest.fixture
    def metric(self):
        return Brightness(scale=0.5)


class _Broken(Brightness):
    name = "brightness"


class OutOfBounds(_Broken):
    def measure(self, step):
        return {"brightness_change": 1000.0, "brightness_end": 1.0}


class Undeclared(_Broken):
    def measure(self, step):
        return {**super().measure(step), "surprise": 1.0}


class Drifting(_Broken):
    calls = 0

    def measure(self, step):
        Drifting.calls += 1
        return {"brightness_change": float(Drifting.calls), "brightness_end": 1.0}


class ShortBatch(_Broken):
    def measure_batch(self, steps):
        return [self.measure(step) for step in steps[:1]]


class HoldsALambda(_Broken):
    def __init__(self):
        super().__init__()
        self.transform = lambda x: x  # a worker process cannot receive it


def test_a_sound_metric_passes_every_check_of_the_contract():
    assert set(outcomes(ImageMetricContract, metric=Brightness(), steps=contract_steps()).values()) == {"passed"}


@pytest.mark.parametrize("broken,check", [
    (OutOfBounds, "test_measures_every_step_within_its_bounds"),
    (Undeclared, "test_measures_every_step_within_its_bounds"),
    (Drifting, "test_is_deterministic_and_batches_like_single_steps"),
    (ShortBatch, "test_is_deterministic_and_batches_like_single_steps"),
    (HoldsALambda, "test_travels_to_a_worker_by_pickle"),
])
def test_a_broken_metric_is_caught_by_the_contract(broken, check):
    assert check in failed(ImageMetricContract, metric=broken(), steps=contract_steps())


def stored_session(tmp_path: Path, instructions: list[str]):
    store, ledger = ImageStore(tmp_path / "store"), Ledger(tmp_path / "ledger.sqlite")
    hashes = [store.put(encode_png(np.full((32, 32, 3), 40 * i, np.uint8))) for i in range(len(instructions) + 1)]
    session = Session("s1", "toy", tuple(Step(k, text) for k, text in enumerate(instructions, start=1)))
    face = AdmittedFace(Face("f1", "id1", Path("x.png"), ()), hashes[0], [hashes[0]])
    states = [StepState(k, Outcome.OK, "", hashes[k - 1], hashes[k], False) for k in range(1, len(hashes))]
    return store, ledger, face, session, states


def scorer(metrics, store, ledger) -> ImageScorer:
    return ImageScorer(metrics, image_metric_identities(metrics, None), None, "", store, ledger, workers=1,
                       retry=frozenset({Outcome.FAILED}))


def test_values_are_kept_and_a_rerun_or_a_changed_parameter_recomputes_only_what_changed(tmp_path):
    store, ledger, face, session, states = stored_session(tmp_path, ["brighter", "brighter"])
    first = scorer([Brightness(), Contrast()], store, ledger)
    measured = asyncio.run(first.measure(face, session, states))
    assert first.computed == 4  # 2 metrics x 2 steps
    assert measured.values == {"brightness_change": 40.0, "brightness_end": 80.0, "contrast_change": 0.0}
    ledger.flush()

    again = scorer([Brightness(), Contrast()], store, ledger)
    assert asyncio.run(again.measure(face, session, states)).values == measured.values
    assert again.computed == 0  # everything read back

    rescaled = scorer([Brightness(scale=2.0), Contrast()], store, ledger)
    assert asyncio.run(rescaled.measure(face, session, states)).values["brightness_change"] == 80.0
    assert rescaled.computed == 2  # brightness's two steps; contrast read back


def test_a_failed_step_is_recorded_and_counted_never_a_number(tmp_path):
    store, ledger, face, session, states = stored_session(tmp_path, ["brighter", "fail here"])
    measured = asyncio.run(scorer([Brightness()], store, ledger).measure(face, session, states))
    first, second = measured.steps["brightness"]
    assert first.outcome is Outcome.OK and second.outcome is Outcome.FAILED
    assert "cannot measure this step" in second.reason
    assert measured.values == {"brightness_change": None, "brightness_end": None}  # no partial mean, no 0
    assert measured.why_undefined("brightness_change") == "image_failed"
    assert json.loads(json.dumps(measured.at(2)))["brightness"]["outcome"] == "failed"


def test_selection_errors_say_how_to_fix_them(plugins, compose, synthetic):
    with pytest.raises(ConfigError, match="background"):
        build_experiment(compose(*synthetic, "editor=identity", "testset=pose", "image_metrics=[backgruond]"), plugins)
    with pytest.raises(ConfigError, match="reads faces.*embedder=dlib"):
        build_experiment(compose(*synthetic, "editor=identity", "testset=pose", "image_metrics=[background]"), plugins)
    with pytest.raises(ConfigError, match="image_metric_params.background"):
        build_experiment(compose(*synthetic, "editor=identity", "testset=pose", "image_metrics=[]",
                                 "+image_metric_params.background.margin=0.3"), plugins)
    with pytest.raises(ConfigError, match="image_metric_params.background.margin"):
        build_experiment(compose("editor=identity", "testset=pose", "tracking=none", "image_metrics=[background]",
                                 "+image_metric_params.background.margin=-1"), plugins)
    # Without a detector, nothing is selected by default; an embedder without detect() runs as before.
    exp = build_experiment(compose(*synthetic, "editor=identity", "testset=pose"), plugins)
    assert exp.image_metrics == [] and "bg_ssim" not in {m.name for m in exp.metrics}


@pytest.mark.slow(seconds=20)
def test_a_default_run_measures_the_background_and_the_edit_and_a_rerun_computes_nothing(plugins, compose):
    cfg = compose("editor=identity", "dataset=sample", "embedder=dlib", "testset=pose", "tracking=none",
                  "run.max_faces=2", "run.max_sessions=1", "run.workers=1", "analysis.n_resamples=99")
    report = run_experiment(build_experiment(cfg, plugins), plugins)
    metrics = report["metrics"]
    # The identity editor keeps everything and edits nothing: what FSS alone cannot tell.
    assert metrics["bg_ssim"]["mean"] == 1.0 and metrics["bg_psnr"]["mean"] == 100.0 and metrics["bg_mad"]["mean"] == 0
    assert metrics["face_change"]["mean"] == 0.0 and metrics["face_change"]["n"] == 2
    assert metrics["bg_ssim"]["ci_low"] is not None and metrics["bg_ssim"]["higher_is_better"] is True
    assert report["counts"]["image_metrics"] == {"background": {"ok": 8}, "edit_magnitude": {"ok": 8}}
    assert [p["mean"] for p in report["trajectory"]["face_change"]] == [0.0] * 4
    assert report["measures"]["bg_ssim"]["requires"] == ["image_metrics"]
    for labels in report["groups"].values():
        assert all("bg_ssim" in g["metrics"] for g in labels.values())
    assert report["run"]["computed"]["image_values"] == 16
    (run_dir,) = (Path(cfg.run.workspace) / "runs").iterdir()
    steps = [r for r in csv.DictReader(open(run_dir / "steps.csv")) if r["k"] != "0"]
    assert json.loads(steps[0]["image_values"])["background"] == {
        "outcome": "ok", "bg_ssim": 1.0, "bg_psnr": 100.0, "bg_mad": 0.0, "bg_ssim_src": 1.0, "bg_psnr_src": 100.0,
        "bg_mad_src": 0.0}
    assert next(csv.DictReader(open(run_dir / "sessions.csv")))["face_change_src"] == "0"

    again = run_experiment(build_experiment(cfg, plugins), plugins)
    assert again["run"]["computed"]["image_values"] == 0
    assert again["metrics"]["bg_ssim"] == metrics["bg_ssim"]


def test_a_section_reads_the_runs_images_folder_and_components(plugins, compose, synthetic):
    """What a report section's collector is given (SectionRun): the run's images, read-only, its folder and its
    components; the images it reads are the ones the run measured."""
    from faceedit_bench.api import hookimpl
    from faceedit_bench.api.sections import ReportSection

    seen = {}

    class Reader:
        def __init__(self, run):
            seen["run"] = run

        def add_session(self, result):
            image = seen["run"].images.rgb(result.image_hashes[-1])
            seen.setdefault("shapes", []).append(image.shape)
            with pytest.raises(ValueError):
                image[0, 0, 0] = 1  # read-only: a section cannot change what others read

        def finish(self):
            return {"sessions": len(seen["shapes"])}

    class Plugin:
        @hookimpl
        def faceedit_register_sections(self, register):
            register("reader", ReportSection("reader", "Reader", {"type": "object"}, collector=Reader))

    plugins.add(Plugin(), name="reader")
    exp = build_experiment(compose(*synthetic, "editor=identity", "testset=pose", "run.max_faces=1",
                                   "run.max_sessions=2"), plugins)
    report = run_experiment(exp, plugins)
    run = seen["run"]
    assert report["reader"] == {"sessions": 2} and seen["shapes"][0][2] == 3
    assert run.run_dir == exp.info.output_dir and (run.run_dir / "report.json").is_file()
    assert run.components["embedder"] is exp.components["embedder"] and run.components["judge"] is None
    assert run.components["detector"] is None and not run.images.has_detector  # the pixel embedder finds no faces
    with pytest.raises(LookupError, match="no face detector"):
        run.images.faces(report["run"]["key"])


class FaceReader(Brightness):
    name = "face_reader"
    needs_faces = True


class NoFaces:
    def detect(self, rgb):
        return ()


def test_a_step_without_a_face_or_with_an_unreadable_image_is_counted_not_measured(tmp_path):
    store, ledger, face, session, states = stored_session(tmp_path, ["brighter", "brighter"])
    states[1].output_hash = store.put(b"not an image at all")
    metric = FaceReader()
    scorer = ImageScorer([metric], image_metric_identities([metric], {"name": "none"}), NoFaces(), "none", store,
                         ledger, workers=1, retry=frozenset())
    measured = asyncio.run(scorer.measure(face, session, states))
    first, second = measured.steps["face_reader"]
    assert first.outcome is Outcome.NO_FACE and "no face" in first.reason
    assert second.outcome is Outcome.INVALID_IMAGE
    assert measured.values == {"brightness_change": None, "brightness_end": None}


def test_the_background_values_are_the_librarys_for_changed_and_for_unchanged_pixels():
    # The metric writes out skimage's squared error and PSNR (their import costs every worker scipy.stats) and
    # skips the SSIM of unchanged pixels: both must give exactly what skimage.metrics gives.
    from skimage.metrics import mean_squared_error, peak_signal_noise_ratio, structural_similarity

    from faceedit_bench.builtin.pixel_metrics import LUMA, BackgroundPreservation
    from faceedit_bench.scoring.face_region import face_mask
    from faceedit_bench.scoring.image_metric import StepImages

    rng = np.random.default_rng(3)
    a = rng.integers(0, 256, (64, 64, 3), dtype=np.uint8)
    changed = np.clip(a.astype(int) + rng.integers(-20, 21, a.shape), 0, 255).astype(np.uint8)
    faces = (DetectedFace((16, 16, 40, 40), 1.0),)
    metric = BackgroundPreservation()
    background = ~face_mask(a.shape[:2], faces, hair=metric.hair, margin=metric.margin)
    for current in (changed, a.copy()):
        got = metric.measure(StepImages(1, "x", a, a, current, (), dict.fromkeys(("source", "previous", "current"),
                                                                                  faces)))
        _, ssim = structural_similarity(a @ LUMA, current @ LUMA, data_range=255.0, full=True)
        pa, pb = a[background], current[background]
        psnr = 100.0 if mean_squared_error(pa, pb) == 0 else float(peak_signal_noise_ratio(pa, pb, data_range=255))
        assert (got["bg_ssim"], got["bg_psnr"], got["bg_mad"]) == (
            float(ssim[background].mean()), psnr, float(np.abs(pa.astype(np.int16) - pb).mean()))


class CountingDetector:
    def __init__(self):
        self.calls = 0

    def detect(self, rgb):
        self.calls += 1
        return (DetectedFace((0.0, 0.0, 8.0, 8.0), 1.0),)


def test_each_images_faces_are_detected_once_however_many_sessions_read_it(tmp_path):
    store, ledger, face, session, states = stored_session(tmp_path, ["brighter", "brighter"])
    other = Session("s2", "toy", tuple(Step(s.k, f"{s.instruction} again") for s in session.steps))
    detector, metric = CountingDetector(), FaceReader()
    scorer = ImageScorer([metric], image_metric_identities([metric], {"name": "counting"}), detector, "counting",
                         store, ledger, workers=1, retry=frozenset())

    async def both():  # two sessions of one face at once: the same I_0, I_1 and I_2
        return await asyncio.gather(scorer.measure(face, session, states), scorer.measure(face, other, states))

    measured = asyncio.run(both())
    assert all(m.outcome is Outcome.OK for result in measured for m in result.steps["face_reader"])
    assert detector.calls == 3 and scorer.computed == 4
    third = Session("s3", "toy", tuple(Step(s.k, f"{s.instruction} once more") for s in session.steps))
    asyncio.run(scorer.measure(face, third, states))
    assert detector.calls == 3 and scorer.computed == 6  # the faces come from the ledger
