"""The contract mixins for editors' and datasets' optional capabilities, face detectors, test-set loaders and
trackers can fail: a sound component passes every check, and each way of breaking one is caught."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import numpy as np
import pytest

from faceedit_bench import hookimpl
from faceedit_bench.errors import ConfigError
from faceedit_bench.execution.limits import CallLimits
from faceedit_bench.plugin.protocols import capability
from faceedit_bench.records import DetectedFace, EditRequest, EditResult
from faceedit_bench.testing import (
    EditorContract,
    FaceDetectorContract,
    TestSetLoaderContract,
    TrackerContract,
)
from faceedit_bench.testing.tracking import contract_report, contract_run
from faceedit_bench.testsets import load_testset
from tests.test_contracts import failed, outcomes

# -- optional capabilities ------------------------------------------------------------------


class SoundEditor:
    def describe(self) -> dict[str, Any]:
        return {"name": "sound", "version": "1"}

    def edit(self, request: EditRequest) -> EditResult:
        return EditResult.ok(request.image)


class SoundAsyncEditor:
    limits = CallLimits("local:sound")
    prices: dict[str, Any] = {}

    def describe(self) -> dict[str, Any]:
        return {"name": "sound-async", "version": "1"}

    async def aedit(self, request: EditRequest) -> EditResult:
        return EditResult.ok(request.image)


CAPABLE = "test_is_an_editor_with_valid_capabilities"


@pytest.mark.parametrize("editor", [SoundEditor(), SoundAsyncEditor()], ids=["sync", "async"])
def test_a_sound_editor_passes_every_check(editor):
    assert set(outcomes(EditorContract, editor=editor).values()) == {"passed"}


@pytest.mark.parametrize("attrs", [{"max_input_images": 0}, {"max_input_images": "3"}, {"max_input_images": True},
                                   {"prices": ["0.04"]}, {"prices": {"output_image": -1.0, "as_of": "2026-01"}}])
def test_an_editor_declaring_a_capability_wrongly_is_caught(attrs):
    assert CAPABLE in failed(EditorContract, editor=type("Broken", (SoundEditor,), attrs)())


def test_an_async_editor_without_prices_is_caught():
    broken = type("NoPrices", (), {k: v for k, v in vars(SoundAsyncEditor).items() if k != "prices"})()
    assert CAPABLE in failed(EditorContract, editor=broken)


def test_capabilities_default_when_absent_and_a_wrong_one_is_a_config_error_naming_it():
    assert capability(SoundEditor(), "editor", "max_input_images") == 1
    assert capability(SoundEditor(), "editor", "prices") is None
    dataset = type("Faces", (), {"faces": lambda self: iter(())})()
    assert capability(dataset, "dataset", "partners") == dataset.faces  # the declared fallback
    assert capability(dataset, "dataset", "measures_identity") is True
    with pytest.raises(ConfigError, match=r"editor Broken: max_input_images='3' must be an int >= 1"):
        capability(type("Broken", (SoundEditor,), {"max_input_images": "3"})(), "editor", "max_input_images")
    with pytest.raises(ConfigError, match="min_base_fss=1.5 must be a number in"):
        capability(type("Broken", (), {"min_base_fss": 1.5})(), "dataset", "min_base_fss")


# -- face detectors -------------------------------------------------------------------------


class SoundDetector:
    """'Finds' one face covering a non-uniform image, eyes left and right of its centre."""

    def __init__(self, **damage: Any) -> None:
        self.damage = damage

    def describe(self) -> dict[str, Any]:
        return {"name": "sound-detector", "version": "1"}

    def detect(self, rgb: np.ndarray) -> list[DetectedFace]:
        if rgb.std() < 1.0 and not self.damage.get("sees_ghosts"):
            return []
        h, w = rgb.shape[:2]
        eyes = {"left_eye": (w * 0.3, h * 0.4), "right_eye": (w * 0.7, h * 0.4), "nose_tip": (w * 0.5, h * 0.6)}
        landmarks = {k: v for k, v in {**eyes, **self.damage.get("landmarks", {})}.items() if k != self.damage.get("drop")}
        face = DetectedFace((0.0, 0.0, float(w), float(h)), 0.9, landmarks)
        small = DetectedFace((0.0, 0.0, w / 4, h / 4), 0.5, eyes)
        faces = [face, small][: 2 if self.damage.get("two") else 1]
        faces = faces[::-1] if self.damage.get("smallest_first") else faces
        return [dataclasses.replace(f, **self.damage.get("face", {})) for f in faces]


FACE_RGB = np.asarray(np.random.default_rng(0).integers(0, 256, (96, 80, 3)), dtype=np.uint8)
FOUND = "test_a_face_is_found_with_box_score_and_named_landmarks"
BROKEN_DETECTORS = {
    "finds_a_face_in_a_blank_image": ({"sees_ghosts": True}, "test_a_blank_image_has_no_face"),
    "no_nose": ({"drop": "nose_tip"}, FOUND),
    "eyes_swapped": ({"landmarks": {"left_eye": (70.0, 40.0), "right_eye": (10.0, 40.0)}}, FOUND),
    "smallest_first": ({"two": True, "smallest_first": True}, FOUND),
    "inverted_box": ({"face": {"box": (50.0, 0.0, 10.0, 90.0)}}, FOUND),
    "nan_score": ({"face": {"score": float("nan")}}, FOUND),
}


def test_a_sound_detector_passes_every_check_and_the_face_checks_need_a_face():
    assert set(outcomes(FaceDetectorContract, detector=SoundDetector(), face_rgb=FACE_RGB).values()) == {"passed"}
    assert outcomes(FaceDetectorContract, detector=SoundDetector(), face_rgb=None)[FOUND] == "skipped"


@pytest.mark.parametrize("broken", sorted(BROKEN_DETECTORS))
def test_a_broken_detector_is_caught(broken):
    damage, check = BROKEN_DETECTORS[broken]
    assert check in failed(FaceDetectorContract, detector=SoundDetector(**damage), face_rgb=FACE_RGB)


# -- test-set loaders -----------------------------------------------------------------------


def test_a_builtin_test_set_loader_passes_every_check():
    loader = functools.partial(load_testset, "hair")
    assert set(outcomes(TestSetLoaderContract, loader=loader).values()) == {"passed"}


def _changed(test_set: Any, **changes: Any) -> Any:
    return dataclasses.replace(test_set, **changes)


HAIR = load_testset("hair")
BROKEN_LOADERS = {
    "not_a_test_set": (lambda: {"sessions": []}, "test_gives_the_same_frozen_test_set_each_time"),
    "changes_between_calls": (iter([HAIR, _changed(HAIR, sessions=HAIR.sessions[1:])] * 2).__next__,
                              "test_gives_the_same_frozen_test_set_each_time"),
    "no_sessions": (lambda: _changed(HAIR, sessions=()), "test_sessions_are_well_formed"),
    "duplicate_sessions": (lambda: _changed(HAIR, sessions=HAIR.sessions[:1] * 2), "test_sessions_are_well_formed"),
    "empty_instruction": (lambda: _changed(HAIR, sessions=(dataclasses.replace(HAIR.sessions[0], steps=(
        dataclasses.replace(HAIR.sessions[0].steps[0], instruction=" "),)),)), "test_sessions_are_well_formed"),
}


@pytest.mark.parametrize("broken", sorted(BROKEN_LOADERS))
def test_a_broken_test_set_loader_is_caught(broken):
    loader, check = BROKEN_LOADERS[broken]
    assert check in failed(TestSetLoaderContract, loader=loader)


def test_the_loader_mixin_itself_is_not_collected_but_its_subclasses_are():
    assert TestSetLoaderContract.__test__ is False
    assert type("TestMine", (TestSetLoaderContract,), {}).__test__ is True


# -- trackers -------------------------------------------------------------------------------


class SoundTracker:
    """Keeps what it was told, by run key."""

    def __init__(self) -> None:
        self.runs: dict[str, str] = {}

    def describe(self) -> dict[str, Any]:
        return {"name": "memory"}

    @hookimpl
    def faceedit_run_start(self, run: Any) -> None:
        self.runs[run.run_key] = "RUNNING"

    @hookimpl
    def faceedit_run_end(self, run: Any, report: Any) -> None:
        self.runs[run.run_key] = "FINISHED"

    @hookimpl
    def faceedit_run_error(self, run: Any, error: BaseException) -> None:
        self.runs[run.run_key] = "FAILED"


class _Raising(SoundTracker):
    @hookimpl
    def faceedit_run_error(self, run: Any, error: BaseException) -> None:
        raise RuntimeError("lost the store")


class _WrongArgument(SoundTracker):
    @hookimpl
    def faceedit_run_end(self, run: Any, results: Any) -> None:  # no hook has 'results'
        pass


class _Forgetful(SoundTracker):
    @hookimpl
    def faceedit_run_end(self, run: Any, report: Any) -> None:
        self.runs.pop(run.run_key)


def _tracker_outcomes(tracker: Any, tmp_path: Any) -> dict[str, str]:
    fixtures = {"tracker": tracker, "run_info": contract_run(tmp_path), "run_report": contract_report(),
                "recorded": lambda key: key in getattr(tracker, "runs", {})}
    return outcomes(TrackerContract, **fixtures)


def test_a_sound_tracker_passes_every_check(tmp_path):
    assert set(_tracker_outcomes(SoundTracker(), tmp_path).values()) == {"passed"}


@pytest.mark.parametrize("tracker, check", [
    (_Raising(), "test_a_run_stopped_by_an_error_is_recorded_and_the_hook_does_not_raise"),
    (_WrongArgument(), "test_is_a_tracker_whose_hooks_match_the_specifications"),
    (_Forgetful(), "test_a_whole_run_is_recorded"),
    (type("Silent", (), {"describe": lambda self: {"name": "silent"}})(),
     "test_is_a_tracker_whose_hooks_match_the_specifications"),
], ids=["raises_on_error", "wrong_argument", "forgets_the_run", "no_hooks"])
def test_a_broken_tracker_is_caught(tracker, check, tmp_path):
    assert _tracker_outcomes(tracker, tmp_path)[check] == "failed"
