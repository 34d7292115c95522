"""The contract mixins of faceedit_bench.testing can fail: a sound component passes every
check, and each way of breaking one is caught by the check that guards against it."""

from __future__ import annotations

import dataclasses
import inspect
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _pytest.outcomes import Failed, Skipped

from faceedit_bench.api import testing as public_testing
from faceedit_bench.execution.limits import CallLimits
from faceedit_bench.records import Face, FaceEmbedding, JudgeReply, Outcome
from faceedit_bench.storage.images import decode_rgb
from faceedit_bench.testing import DatasetContract, EmbedderContract, JudgeContract, PixelEmbedder, gradient_image


def outcomes(contract: type, **fixtures: Any) -> dict[str, str]:
    """``{check: "passed" | "failed" | "skipped"}`` for every check (and parametrization) of
    ``contract``, run on the given fixture values; a check fails on any exception."""
    results: dict[str, str] = {}
    instance = contract()
    for name, method in inspect.getmembers(instance, inspect.ismethod):
        if not name.startswith("test_"):
            continue
        params = [m.args for m in getattr(method, "pytestmark", []) if m.name == "parametrize"]
        combos = [{argname: value} for argname, values in params for value in values] or [{}]
        for combo in combos:
            wanted = {p: fixtures[p] for p in inspect.signature(method).parameters if p in fixtures}
            try:
                method(**wanted, **combo)
                verdict = "passed"
            except Skipped:
                verdict = "skipped"
            except (Exception, Failed):
                verdict = "failed"
            results[name] = "failed" if "failed" in (verdict, results.get(name)) else verdict
    return results


def failed(contract: type, **fixtures: Any) -> set[str]:
    return {name for name, verdict in outcomes(contract, **fixtures).items() if verdict == "failed"}


def test_the_mixins_are_public_in_one_home():
    for name in ("EmbedderContract", "JudgeContract", "DatasetContract", "EditorContract", "FaceDetectorContract",
                 "TestSetLoaderContract", "TrackerContract", "SectionContract", "ImageMetricContract"):
        assert name in public_testing.__all__ and getattr(public_testing, name).__name__ == name


# -- embedders ------------------------------------------------------------------------------


class SoundEmbedder(PixelEmbedder):
    """PixelEmbedder gives a NaN vector for an image under 8x8 (on purpose); this one does not."""

    def embed(self, rgb: np.ndarray) -> FaceEmbedding:
        if min(rgb.shape[:2]) < 8:
            return FaceEmbedding(Outcome.NO_FACE, reason="image too small for a face")
        return super().embed(rgb)


FACE = decode_rgb(gradient_image(1))


def broken_embedder(**methods: Any) -> SoundEmbedder:
    return type("BrokenEmbedder", (SoundEmbedder,), methods)()


def ok_with(**changes: Any) -> Any:
    """An ``embed`` whose ok embeddings have ``changes`` applied (callables are called)."""
    def embed(self: SoundEmbedder, rgb: np.ndarray) -> FaceEmbedding:
        result = SoundEmbedder.embed(self, rgb)
        if result.outcome is not Outcome.OK:
            return result
        return dataclasses.replace(result, **{k: v() if callable(v) else v for k, v in changes.items()})
    return embed


class _CountingDescribe(SoundEmbedder):
    calls = 0

    def describe(self) -> dict[str, Any]:
        self.calls += 1
        return {**super().describe(), "calls": self.calls}


ANY_IMAGE, BLANK = "test_any_image_gets_an_outcome_and_never_a_broken_vector", "test_a_blank_image_has_no_face"
SAME, SIMILARITY = "test_a_face_embeds_the_same_every_time", "test_similarity_is_highest_with_itself_and_symmetric"
EMBEDDER_DESCRIBE = "test_is_an_embedder_that_states_version_and_scale"
BROKEN_EMBEDDERS = {  # what is broken: (the embedder, the check that must catch it)
    "nan_vector": (PixelEmbedder, ANY_IMAGE),
    "2d_vector": (lambda: broken_embedder(embed=ok_with(vector=np.zeros((8, 8), np.float32))), SAME),
    "int_vector": (lambda: broken_embedder(embed=ok_with(vector=np.arange(64))), ANY_IMAGE),
    "ok_without_faces": (lambda: broken_embedder(embed=ok_with(n_faces=0)), ANY_IMAGE),
    "failure_without_reason": (lambda: broken_embedder(embed=lambda self, rgb: FaceEmbedding(Outcome.NO_FACE)),
                               ANY_IMAGE),
    "blank_is_a_face": (lambda: broken_embedder(embed=lambda self, rgb: FaceEmbedding(
        Outcome.OK, np.full(64, 0.125, np.float32), n_faces=1)), BLANK),
    "misses_the_face": (lambda: broken_embedder(embed=lambda self, rgb: FaceEmbedding(Outcome.NO_FACE, reason="none")),
                        SAME),
    "not_deterministic": (lambda: broken_embedder(embed=ok_with(
        vector=lambda: np.random.default_rng().normal(size=64).astype(np.float32))), SAME),
    "similarity_over_one": (lambda: broken_embedder(similarity=lambda self, a, b: 2 * float(a @ b)), SIMILARITY),
    "distance_not_similarity": (lambda: broken_embedder(similarity=lambda self, a, b: float(np.abs(a - b).sum())),
                                SIMILARITY),
    "asymmetric": (lambda: broken_embedder(similarity=lambda self, a, b: float(a @ b) * (0.9 if a[0] > b[0] else 1)),
                   SIMILARITY),
    "similarity_an_array": (lambda: broken_embedder(similarity=lambda self, a, b: (a @ b)[None]), SIMILARITY),
    "no_scale_in_describe": (lambda: broken_embedder(describe=lambda self: {"name": "x", "version": "1"}),
                             EMBEDDER_DESCRIBE),
    "describe_not_json": (lambda: broken_embedder(describe=lambda self: {**SoundEmbedder.describe(self),
                                                                         "model_dir": Path("/m")}), EMBEDDER_DESCRIBE),
    "describe_changes": (_CountingDescribe, EMBEDDER_DESCRIBE),
}


def test_a_sound_embedder_passes_every_check():
    assert outcomes(EmbedderContract, embedder=SoundEmbedder(), face_rgb=FACE) == dict.fromkeys(
        [BLANK, SAME, ANY_IMAGE, EMBEDDER_DESCRIBE, SIMILARITY], "passed")


def test_without_a_face_the_embedding_checks_are_skipped_not_passed():
    verdicts = outcomes(EmbedderContract, embedder=SoundEmbedder(), face_rgb=None)
    assert verdicts == {**dict.fromkeys([BLANK, ANY_IMAGE, EMBEDDER_DESCRIBE], "passed"),
                        SAME: "skipped", SIMILARITY: "skipped"}


@pytest.mark.parametrize("broken", sorted(BROKEN_EMBEDDERS))
def test_a_broken_embedder_is_caught(broken):
    make, check = BROKEN_EMBEDDERS[broken]
    assert check in failed(EmbedderContract, embedder=make(), face_rgb=FACE)


def test_a_check_fails_when_any_of_its_cases_fails():
    # PixelEmbedder fails on the tiny images only; the check must not pass on the larger one
    verdicts = outcomes(EmbedderContract, embedder=PixelEmbedder(), face_rgb=FACE)
    assert verdicts[ANY_IMAGE] == "failed" and verdicts[BLANK] == "passed"


# -- judges ---------------------------------------------------------------------------------


class SoundJudge:
    limits = CallLimits(provider_key="fake:judge", max_attempts=1)
    prices = {"input_tokens": 1e-6, "output_tokens": 2e-6, "as_of": "2025-11"}

    def __init__(self, reply: JudgeReply | None = None, attempts: int = 1, **describe: Any) -> None:
        self.reply = reply or JudgeReply(Outcome.OK, text='{"score": 5}', usage={"input_tokens": 12, "output_tokens": 3})
        self.attempts, self.calls = attempts, 0
        self._describe = {"model": "fake-judge-1", "temperature": 0.0, **describe}

    def describe(self) -> dict[str, Any]:
        return {k: v for k, v in self._describe.items() if v is not None}

    async def ajudge(self, request: Any) -> JudgeReply:
        assert request.images and request.schema
        self.calls += self.attempts
        return self.reply


def _judge_outcomes(judge: Any, **fixtures: Any) -> dict[str, str]:
    return outcomes(JudgeContract, judge=judge, judge_request=JudgeContract().request(),
                    judge_calls=lambda: judge.calls, **fixtures)


def _with(**attrs: Any) -> SoundJudge:
    judge = SoundJudge()
    for name, value in attrs.items():
        setattr(judge, name, value)
    return judge


class _SyncJudge(SoundJudge):
    def ajudge(self, request: Any) -> JudgeReply:  # not a coroutine function
        return self.reply


DESCRIBE, LIMITS, CALL = ("test_describe_names_the_model_and_decoding", "test_limits_and_prices",
                          "test_ajudge_makes_one_attempt_and_returns_an_outcome")
BROKEN_JUDGES = {
    "no_model": (lambda: SoundJudge(model=None), DESCRIBE),
    "no_temperature": (lambda: SoundJudge(temperature=None), DESCRIBE),
    "describe_not_json": (lambda: SoundJudge(started=object()), DESCRIBE),
    "not_async": (_SyncJudge, DESCRIBE),
    "limits_a_dict": (lambda: _with(limits={"max_concurrency": 4}), LIMITS),
    "unknown_price_key": (lambda: _with(prices={"tokens": 1e-6, "as_of": "2025-11"}), LIMITS),
    "negative_price": (lambda: _with(prices={"input_tokens": -1.0, "as_of": "2025-11"}), LIMITS),
    "prices_without_date": (lambda: _with(prices={"input_tokens": 1e-6}), LIMITS),
    "prices_a_list": (lambda: _with(prices=[("input_tokens", 1e-6)]), LIMITS),
    "two_attempts": (lambda: SoundJudge(attempts=2), CALL),
    "ok_without_text": (lambda: SoundJudge(JudgeReply(Outcome.OK)), CALL),
    "refused_without_reason": (lambda: SoundJudge(JudgeReply(Outcome.REFUSED)), CALL),
    "parses_itself": (lambda: SoundJudge(JudgeReply(Outcome.PARSE_ERROR, reason="not JSON")), CALL),
    "negative_usage": (lambda: SoundJudge(JudgeReply(Outcome.OK, text="{}", usage={"output_tokens": -3})), CALL),
    "not_a_reply": (lambda: SoundJudge({"outcome": "ok", "text": "{}"}), CALL),
}


def test_a_sound_judge_passes_every_check():
    assert _judge_outcomes(SoundJudge()) == dict.fromkeys([CALL, DESCRIBE, LIMITS], "passed")
    assert _judge_outcomes(SoundJudge(JudgeReply(Outcome.REFUSED, reason="safety")))[CALL] == "passed"
    assert _judge_outcomes(_with(prices={}))[LIMITS] == "passed"  # no price table: cost unknown


@pytest.mark.parametrize("broken", sorted(BROKEN_JUDGES))
def test_a_broken_judge_is_caught(broken):
    make, check = BROKEN_JUDGES[broken]
    verdicts = _judge_outcomes(make())
    assert verdicts[check] == "failed", verdicts


# -- datasets -------------------------------------------------------------------------------


class SoundDataset:
    def __init__(self, root: Path, n: int = 3, **damage: Any) -> None:
        self.damage = damage
        self.paths = [root / f"{i}.png" for i in range(2 * n)]
        for i, path in enumerate(self.paths):
            path.write_bytes(gradient_image(i))

    def describe(self) -> dict[str, Any]:
        return {"name": "sound", "n_faces": self.damage.get("n_faces", len(self.paths) // 2),
                **self.damage.get("describe", {})}

    def _faces(self) -> list[Face]:
        faces = [Face(f"sound/{i}", f"person{i}", self.paths[2 * i], (self.paths[2 * i + 1],),
                      {"gender": "female" if i % 2 else None}) for i in range(len(self.paths) // 2)]
        change = self.damage.get("face")
        return [dataclasses.replace(f, **change(f)) for f in faces] if change else faces

    def faces(self) -> Any:
        faces = self._faces()
        if self.damage.get("shuffle"):
            random.shuffle(faces)
        return faces if self.damage.get("as_list") else iter(faces)


LAZY, FORMED = "test_faces_are_lazy_and_reproducible", "test_faces_are_well_formed"
BROKEN_DATASETS = {
    "a_list": ({"as_list": True}, LAZY),
    "shuffled": ({"shuffle": True, "n": 12}, LAZY),
    "no_faces": ({"n": 0}, FORMED),
    "wrong_n_faces": ({"n_faces": 5}, FORMED),
    "duplicate_ids": ({"face": lambda f: {"face_id": "sound/x"}}, FORMED),
    "missing_image": ({"face": lambda f: {"image": f.image.with_name("gone.png")}}, FORMED),
    "missing_reference": ({"face": lambda f: {"references": (f.image.with_name("gone.png"),)}}, FORMED),
    "base_as_reference": ({"face": lambda f: {"references": (f.image.parent / ".." / f.image.parent.name
                                                             / f.image.name,)}}, FORMED),
    "references_a_list": ({"face": lambda f: {"references": list(f.references)}}, FORMED),
    "image_a_string": ({"face": lambda f: {"image": str(f.image)}}, FORMED),
    "numeric_label": ({"face": lambda f: {"demographics": {"age": 31}}}, FORMED),
    "no_identity": ({"face": lambda f: {"identity": ""}}, FORMED),
    "describe_not_json": ({"describe": {"root": Path("/data")}}, "test_describe_is_json"),
}


def test_a_sound_dataset_passes_every_check(tmp_path):
    assert outcomes(DatasetContract, dataset=SoundDataset(tmp_path)) == dict.fromkeys(
        ["test_describe_is_json", "test_capabilities_are_valid", LAZY, FORMED], "passed")


@pytest.mark.parametrize("broken", sorted(BROKEN_DATASETS))
def test_a_broken_dataset_is_caught(broken, tmp_path):
    damage, check = BROKEN_DATASETS[broken]
    damage = dict(damage)
    random.seed(0)
    assert check in failed(DatasetContract, dataset=SoundDataset(tmp_path, n=damage.pop("n", 3), **damage))
