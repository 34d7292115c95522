"""Every editor through the registry on its tiny pipeline: load from a local directory, batch
concurrent requests, seed each image, report usage; and the failure paths."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from faceedit_bench_diffusers.editor import DiffusersEditor, _reason, fit
from faceedit_bench_diffusers.pipelines import SPECS
from PIL import Image

from faceedit_bench.api import AsyncEditor, EditRequest, EditResult, Outcome
from faceedit_bench.api.images import decode_rgb
from faceedit_bench.api.testing import EditorContract, gradient_image
from faceedit_bench.testing import load_plugins

#: Editor name -> (tiny model, extra params, whether its pipeline batches).
CASES = {
    "instruct_pix2pix": ("instruct_pix2pix", {}, True),
    "flux1_dev": ("flux1_dev", {}, True),
    "flux_kontext_dev": ("flux_kontext_dev", {"auto_resize": False}, True),
    "qwen_image_edit": ("qwen_image_edit", {}, True),
    "qwen_image_edit_plus": ("qwen_image_edit_plus", {}, False),
    "flux2_dev": ("flux2_dev", {}, False),
}


def tiny_params(model: Path, **extra: Any) -> dict[str, Any]:
    return {"model": str(model), "steps": 2, "resolution": 64, "dtype": "float32", "device": "cpu",
            "batch_size": 4, "seed": None, **extra}


def request(seed: int, instruction: str = "make the person's hair red", image: int = 1, k: int = 1) -> EditRequest:
    return EditRequest(gradient_image(image, size=48), instruction, "face-1", f"s-{seed}", k, seed)


def run_all(editor: Any, requests: list[EditRequest]) -> list[EditResult]:
    async def gather() -> list[EditResult]:
        return list(await asyncio.gather(*(editor.aedit(r) for r in requests)))

    return asyncio.run(gather())


def create(name: str, params: dict[str, Any]) -> Any:
    registry_name = "qwen_image_edit" if name.startswith("qwen") else name
    return load_plugins().registry.create("editors", registry_name, params)


@pytest.mark.parametrize("case", list(CASES))
def test_editor_edits_a_batch_through_the_registry(case: str, tiny_model: Callable[[str], Path]) -> None:
    model, extra, batches = CASES[case]
    editor = create(case, tiny_params(tiny_model(model), **extra))
    assert isinstance(editor, AsyncEditor) and editor.prices == {}
    assert editor.limits.max_attempts == 1 and editor.limits.requests_per_minute is None
    results = run_all(editor, [request(1), request(2), request(3, "add glasses")])
    assert [r.outcome for r in results] == [Outcome.OK] * 3, [r.reason for r in results]
    for result in results:
        assert decode_rgb(result.image).shape == (64, 64, 3)
        assert result.usage["batch_size"] == (3 if batches else 1) and result.usage["seconds"] > 0
    assert results[0].image != results[1].image  # different per-step seeds, different noise


def test_a_request_gets_the_same_image_whatever_its_batch(tiny_model: Callable[[str], Path]) -> None:
    editor = create("instruct_pix2pix", tiny_params(tiny_model("instruct_pix2pix")))
    alone = run_all(editor, [request(5)])[0]
    _, batched = run_all(editor, [request(6, image=2), request(5)])
    assert batched.usage["batch_size"] == 2
    # Equal up to float rounding: the noise of each image comes from its own generator.
    assert np.abs(decode_rgb(batched.image).astype(int) - decode_rgb(alone.image).astype(int)).max() <= 2


def test_a_fixed_seed_overrides_the_per_step_seed(tiny_model: Callable[[str], Path]) -> None:
    fixed = create("flux1_dev", tiny_params(tiny_model("flux1_dev"), seed=42))
    a, b = run_all(fixed, [request(1), request(2)])
    assert a.image == b.image and fixed.describe()["seed"] == 42
    per_step = create("flux1_dev", tiny_params(tiny_model("flux1_dev")))
    c, d = run_all(per_step, [request(1), request(2)])
    assert c.image != d.image and per_step.describe()["seed"] == "per_step"


def test_images_of_different_sizes_go_to_different_batches(tiny_model: Callable[[str], Path]) -> None:
    editor = create("instruct_pix2pix", tiny_params(tiny_model("instruct_pix2pix"), resolution=None))
    wide = EditRequest(Image_png(64, 32), "make it red", "f", "s", 1, 3)
    results = run_all(editor, [request(1), wide, request(2)])
    assert [r.outcome for r in results] == [Outcome.OK] * 3
    assert [r.usage["batch_size"] for r in results] == [2, 1, 2]
    assert decode_rgb(results[1].image).shape == (32, 64, 3)


def Image_png(width: int, height: int) -> bytes:  # noqa: N802 - reads like a constructor
    import io

    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (200, 120, 90)).save(buffer, format="PNG")
    return buffer.getvalue()


def test_describe_names_model_pipeline_and_every_setting(tiny_model: Callable[[str], Path]) -> None:
    description = create("qwen_image_edit", tiny_params(tiny_model("qwen_image_edit_plus"))).describe()
    assert json.loads(json.dumps(description)) == description
    assert description["pipeline"] == "QwenImageEditPlusPipeline"  # from model_index.json
    assert {"steps": 2, "guidance_scale": 1.0, "true_cfg_scale": 4.0, "negative_prompt": " ",
            "resolution": 64, "dtype": "float32"}.items() <= description.items()
    assert "device" not in description and "batch_size" not in description
    assert str(tiny_model("qwen_image_edit_plus")) not in json.dumps(description)  # paths are not identity
    assert description["config_hash"] and description["version"]


def test_a_pipeline_error_fails_each_request_of_the_batch(tiny_model: Callable[[str], Path]) -> None:
    editor = create("flux1_dev", tiny_params(tiny_model("flux1_dev"), extra_args={"no_such_argument": 1}))
    results = run_all(editor, [request(1), request(2)])
    assert [r.outcome for r in results] == [Outcome.FAILED] * 2
    assert "no_such_argument" in results[0].reason and results[0].image is None


def test_a_batch_that_runs_out_of_memory_is_split_until_it_fits(tiny_model: Callable[[str], Path]) -> None:
    import torch

    editor = create("instruct_pix2pix", tiny_params(tiny_model("instruct_pix2pix")))
    requests = [request(1), request(2), request(3), request(4, "add glasses")]
    alone = [run_all(editor, [r])[0] for r in requests]
    real, sizes = editor._loaded(), []

    def small_device(**arguments: Any) -> Any:  # holds at most 2 images
        n = len(arguments["prompt"]) if isinstance(arguments["prompt"], list) else 1
        sizes.append(n)
        if n > 2:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return real(**arguments)

    editor._pipe = small_device
    results = run_all(editor, requests)
    assert sizes == [4, 2, 2]
    assert [r.outcome for r in results] == [Outcome.OK] * 4 and [r.usage["batch_size"] for r in results] == [2] * 4
    for split, one in zip(results, alone):  # each image from its own generator: the same images
        assert np.abs(decode_rgb(split.image).astype(int) - decode_rgb(one.image).astype(int)).max() <= 2


def test_out_of_memory_says_how_to_fit() -> None:
    reason = _reason(RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB"))
    assert "batch_size" in reason and "cpu_offload" in reason


def test_fit_keeps_the_aspect_ratio_on_multiples_of_16() -> None:
    assert fit(Image.new("RGB", (178, 218)), 1024).size == (928, 1136)
    assert fit(Image.new("RGB", (100, 50)), None).size == (96, 48)
    assert fit(Image.new("RGB", (64, 64)), 64).size == (64, 64)


def test_wrong_pipeline_class_is_refused(tiny_model: Callable[[str], Path]) -> None:
    with pytest.raises(ValueError, match="QwenImageEditPlusPipeline or QwenImageEditPipeline"):
        create("qwen_image_edit", tiny_params(tiny_model("flux2_dev")))


@pytest.mark.parametrize("bad", [{"resolution": 8}, {"seed": -1}, {"batch_size": 0}, {"steps": 0},
                                 {"dtype": "int8"}, {"timeout_s": 0}])
def test_bad_parameters_say_what_is_allowed(bad: dict[str, Any], tiny_model: Callable[[str], Path]) -> None:
    with pytest.raises(ValueError):
        create("flux1_dev", tiny_params(tiny_model("flux1_dev"), **bad))


class TestContractSyncPath(EditorContract):
    @pytest.fixture
    def editor(self, tiny_model: Callable[[str], Path]) -> DiffusersEditor:
        return create("flux_kontext_dev", tiny_params(tiny_model("flux_kontext_dev"), auto_resize=False))


def test_specs_cover_every_registered_editor() -> None:
    from faceedit_bench_diffusers import EDITORS

    assert set(SPECS) == set(EDITORS)


def test_true_cfg_sends_a_negative_prompt_only_when_on() -> None:
    from faceedit_bench_diffusers.pipelines import kontext_args, qwen_args

    on = qwen_args({"steps": 40, "guidance_scale": 1.0, "true_cfg_scale": 4.0, "negative_prompt": " "}, 2, 64, 48)
    assert on["negative_prompt"] == [" ", " "] and on["true_cfg_scale"] == 4.0
    assert (on["height"], on["width"], on["num_inference_steps"]) == (64, 48, 40)
    off = kontext_args({"steps": 28, "guidance_scale": 2.5, "true_cfg_scale": 1.0, "negative_prompt": "",
                        "auto_resize": True}, 1, 64, 32)
    assert "negative_prompt" not in off and off["max_area"] == 64 * 32 and off["_auto_resize"] is True


@pytest.mark.parametrize(("factory", "expected"), [
    ("flux2_dev", {"steps": 50, "guidance_scale": 4.0, "seed": 42, "dtype": "bfloat16"}),
    ("step1x_edit", {"steps": 28, "true_cfg_scale": 6.0, "seed": 42, "dtype": "bfloat16"}),
    ("qwen_image_edit", {"steps": 40, "guidance_scale": 1.0, "true_cfg_scale": 4.0, "seed": 0, "dtype": "bfloat16",
                         "model": "Qwen/Qwen-Image-Edit-2511"}),
])
def test_defaults_are_the_seed_papers(factory: str, expected: dict[str, Any]) -> None:
    """METHODOLOGY §4.1 (paper b, Table of inference settings)."""
    import inspect

    from faceedit_bench_diffusers import editors

    defaults = {n: p.default for n, p in inspect.signature(getattr(editors, factory)).parameters.items()}
    assert expected.items() <= defaults.items()


#: The pipelines that take several input images for one instruction, with the most they declare.
MULTI_IMAGE = {"flux2_dev": 6, "qwen_image_edit_plus": 3}


@pytest.mark.parametrize("case", list(MULTI_IMAGE))
def test_multi_image_pipelines_get_every_input_image_as_one_list(case: str,
                                                                 tiny_model: Callable[[str], Path]) -> None:
    model, extra, _ = CASES[case]
    editor = create(case, tiny_params(tiny_model(model), **extra))
    assert editor.max_input_images == MULTI_IMAGE[case]
    real, calls = editor._loaded(), []

    def recording(**arguments: Any) -> Any:
        calls.append(arguments["image"])
        return real(**arguments)

    editor._pipe = recording
    partner = gradient_image(7, size=32)  # another size: it is fitted to the resolution too
    two = EditRequest(gradient_image(1, size=48), "put the two people side by side", "face-1", "s-1", 1, 3,
                      extra_images=(partner,), extra_roles=("partner",))
    one = EditRequest(two.image, two.instruction, "face-1", "s-1", 1, 3)
    with_partner, alone = run_all(editor, [two]) + run_all(editor, [one])
    assert [with_partner.outcome, alone.outcome] == [Outcome.OK, Outcome.OK], [with_partner.reason, alone.reason]
    listed, single = calls
    assert isinstance(listed, list) and [im.size for im in listed] == [(64, 64), (64, 64)]
    assert np.array_equal(np.asarray(listed[0]), np.asarray(single))  # the edited image first, as alone
    assert isinstance(single, Image.Image)  # one image: the plain value, as before
    assert decode_rgb(with_partner.image).shape == (64, 64, 3)
    assert with_partner.image != alone.image  # the second image reached the model


@pytest.mark.parametrize(("case", "n_images"), [("qwen_image_edit_plus", 4), ("qwen_image_edit", 2),
                                                ("instruct_pix2pix", 2)])
def test_more_images_than_declared_is_unsupported_not_dropped(case: str, n_images: int,
                                                              tiny_model: Callable[[str], Path]) -> None:
    model, extra, _ = CASES[case]
    editor = create(case, tiny_params(tiny_model(model), **extra))
    assert editor.max_input_images == n_images - 1
    extras = tuple(gradient_image(10 + i, size=48) for i in range(n_images - 1))
    too_many = EditRequest(gradient_image(1, size=48), "edit", "face-1", "s-1", 1, 3, extra_images=extras)
    (result,) = run_all(editor, [too_many])
    assert result.outcome is Outcome.UNSUPPORTED and result.image is None
    assert f"at most {n_images - 1} input image" in result.reason
    assert editor.edit(too_many).outcome is Outcome.UNSUPPORTED


def test_max_input_images_follows_the_pipeline_class_and_keeps_the_identity(
        tiny_model: Callable[[str], Path]) -> None:
    """A single-image pipeline of a multi-image editor takes one image; describe() (the run key) is unchanged."""
    assert SPECS["qwen_image_edit"].max_input_images("QwenImageEditPipeline") == 1
    assert SPECS["qwen_image_edit"].max_input_images("QwenImageEditPlusPipeline") == 3
    assert all(spec.max_input_images(cls) == 1 for name, spec in SPECS.items()
               if name not in ("flux2_dev", "qwen_image_edit") for cls in spec.classes)
    description = create("flux2_dev", tiny_params(tiny_model("flux2_dev"))).describe()
    assert "max_input_images" not in description
