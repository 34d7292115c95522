"""Tiny randomly initialised pipelines built from configs in code: no download, no GPU.

They run the plugin's real code path (loading from a local directory, argument mapping,
batching, seeding) in about a second on a CPU. Their images are noise: they test the
plumbing, never editing quality. Used by the plugin's tests and ``benchmarks/gpu_smoke.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from faceedit_bench.api import ModelSource

#: Special tokens the Qwen-VL chat templates and processors refer to.
QWEN_SPECIAL_TOKENS = ("<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>",
                       "<|video_pad|>", "<|endoftext|>")


def _byte_alphabet() -> list[str]:
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    return list(bytes_to_unicode().values())


def tiny_clip_tokenizer() -> Any:
    """A character-level CLIP tokenizer (byte alphabet, no merges) from an in-memory vocab."""
    from transformers import CLIPTokenizer

    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1}
    for suffix in ("", "</w>"):
        for char in _byte_alphabet():
            vocab.setdefault(char + suffix, len(vocab))
    return CLIPTokenizer(vocab=vocab, merges=[], model_max_length=77)


def tiny_t5_tokenizer() -> Any:
    from transformers import T5Tokenizer

    pieces = [("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0)]
    pieces += [(c, -1.0) for c in "▁abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'.,-"]
    return T5Tokenizer(vocab=pieces, extra_ids=0, model_max_length=512)


def tiny_qwen_tokenizer() -> Any:
    """A character-level Qwen2 tokenizer with the Qwen-VL special tokens."""
    from transformers import Qwen2Tokenizer

    tokenizer = Qwen2Tokenizer(vocab={c: i for i, c in enumerate(_byte_alphabet())}, merges=[])
    tokenizer.add_special_tokens({"additional_special_tokens": list(QWEN_SPECIAL_TOKENS[:-1])})
    return tokenizer


def _clip_text_encoder(vocab_size: int) -> Any:
    from transformers import CLIPTextConfig, CLIPTextModel

    return CLIPTextModel(CLIPTextConfig(
        bos_token_id=0, eos_token_id=1, pad_token_id=1, hidden_size=32, intermediate_size=37, num_attention_heads=4,
        num_hidden_layers=2, vocab_size=vocab_size, projection_dim=32, max_position_embeddings=77,
    ))


def instruct_pix2pix() -> Any:
    import torch
    from diffusers import (
        AutoencoderKL,
        EulerAncestralDiscreteScheduler,
        StableDiffusionInstructPix2PixPipeline,
        UNet2DConditionModel,
    )

    torch.manual_seed(0)
    tokenizer = tiny_clip_tokenizer()
    unet = UNet2DConditionModel(
        block_out_channels=(8, 16), layers_per_block=1, sample_size=16, in_channels=8, out_channels=4,
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"), up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
        cross_attention_dim=32, norm_num_groups=4, attention_head_dim=4,
    )
    vae = AutoencoderKL(  # three levels: 64 px images give 16x16 latents
        block_out_channels=(4, 8, 8), in_channels=3, out_channels=3, latent_channels=4, norm_num_groups=4,
        layers_per_block=1, down_block_types=("DownEncoderBlock2D",) * 3, up_block_types=("UpDecoderBlock2D",) * 3,
    )
    return StableDiffusionInstructPix2PixPipeline(
        vae=vae, text_encoder=_clip_text_encoder(len(tokenizer)), tokenizer=tokenizer, unet=unet,
        scheduler=EulerAncestralDiscreteScheduler(), safety_checker=None, feature_extractor=None,
        requires_safety_checker=False,
    )


def _flux_parts() -> dict[str, Any]:
    import torch
    from diffusers import AutoencoderKL, FlowMatchEulerDiscreteScheduler, FluxTransformer2DModel
    from transformers import T5Config, T5EncoderModel

    torch.manual_seed(0)
    tokenizer, tokenizer_2 = tiny_clip_tokenizer(), tiny_t5_tokenizer()
    transformer = FluxTransformer2DModel(
        patch_size=1, in_channels=16, num_layers=1, num_single_layers=1, attention_head_dim=16,
        num_attention_heads=2, joint_attention_dim=32, pooled_projection_dim=32, axes_dims_rope=[4, 4, 8],
        guidance_embeds=True,
    )
    t5 = T5EncoderModel(T5Config(vocab_size=len(tokenizer_2), d_model=32, d_kv=8, d_ff=37, num_layers=1,
                                 num_heads=4, relative_attention_num_buckets=8))
    vae = AutoencoderKL(
        block_out_channels=(4, 8), in_channels=3, out_channels=3, latent_channels=4, norm_num_groups=1,
        down_block_types=("DownEncoderBlock2D", "DownEncoderBlock2D"),
        up_block_types=("UpDecoderBlock2D", "UpDecoderBlock2D"), use_quant_conv=False, use_post_quant_conv=False,
        shift_factor=0.0609, scaling_factor=1.5035,
    )
    return {"scheduler": FlowMatchEulerDiscreteScheduler(), "vae": vae, "transformer": transformer,
            "text_encoder": _clip_text_encoder(len(tokenizer)), "tokenizer": tokenizer,
            "text_encoder_2": t5, "tokenizer_2": tokenizer_2}


def flux1_dev() -> Any:
    from diffusers import FluxImg2ImgPipeline

    return FluxImg2ImgPipeline(**_flux_parts())


def flux_kontext_dev() -> Any:
    from diffusers import FluxKontextPipeline

    return FluxKontextPipeline(**_flux_parts(), image_encoder=None, feature_extractor=None)


def _qwen_processor(tokenizer: Any) -> Any:
    from transformers import Qwen2VLImageProcessorPil, Qwen2VLProcessor

    image_processor = Qwen2VLImageProcessorPil(min_pixels=8 * 28 * 28, max_pixels=16 * 28 * 28)
    return ModelSource.image_only_processor(Qwen2VLProcessor, tokenizer, image_processor)


def _qwen_vl_text_encoder(tokenizer: Any) -> Any:
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration

    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in QWEN_SPECIAL_TOKENS[:-1]}
    config = Qwen2_5_VLConfig(
        text_config={"hidden_size": 16, "intermediate_size": 16, "num_hidden_layers": 2, "num_attention_heads": 2,
                     "num_key_value_heads": 2, "vocab_size": len(tokenizer), "rope_theta": 1000000.0,
                     "rope_scaling": {"mrope_section": [1, 1, 2], "rope_type": "default", "type": "default"}},
        vision_config={"depth": 2, "hidden_size": 16, "intermediate_size": 16, "num_heads": 2,
                       "out_hidden_size": 16},
        hidden_size=16, vocab_size=len(tokenizer), image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"], vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
    )
    return Qwen2_5_VLForConditionalGeneration(config)


def qwen_image_edit(plus: bool = False) -> Any:
    import torch
    from diffusers import (
        AutoencoderKLQwenImage,
        FlowMatchEulerDiscreteScheduler,
        QwenImageEditPipeline,
        QwenImageEditPlusPipeline,
        QwenImageTransformer2DModel,
    )

    torch.manual_seed(0)
    tokenizer = tiny_qwen_tokenizer()
    transformer = QwenImageTransformer2DModel(
        patch_size=2, in_channels=16, out_channels=4, num_layers=1, attention_head_dim=16, num_attention_heads=2,
        joint_attention_dim=16, guidance_embeds=False, axes_dims_rope=(8, 4, 4),
    )
    vae = AutoencoderKLQwenImage(base_dim=24, z_dim=4, dim_mult=[1, 2, 4], num_res_blocks=1,
                                 temperal_downsample=[False, True], latents_mean=[0.0] * 4, latents_std=[1.0] * 4)
    cls = QwenImageEditPlusPipeline if plus else QwenImageEditPipeline
    return cls(scheduler=FlowMatchEulerDiscreteScheduler(), vae=vae, text_encoder=_qwen_vl_text_encoder(tokenizer),
               tokenizer=tokenizer, processor=_qwen_processor(tokenizer), transformer=transformer)


#: A chat template for the tiny Mistral tokenizer: Flux2 only needs apply_chat_template on text.
_MISTRAL_TEMPLATE = (
    "{% for m in messages %}{% if m['content'] is string %}{{ m['content'] }}"
    "{% else %}{% for c in m['content'] %}{% if c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}"
    "{% endif %}{% endfor %}"
)


def flux2_dev() -> Any:
    import torch
    from diffusers import AutoencoderKLFlux2, FlowMatchEulerDiscreteScheduler, Flux2Pipeline, Flux2Transformer2DModel
    from transformers import Mistral3Config, Mistral3ForConditionalGeneration, PreTrainedTokenizerFast, Qwen2Tokenizer

    torch.manual_seed(0)
    base = Qwen2Tokenizer(vocab={c: i for i, c in enumerate(_byte_alphabet())}, merges=[])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=base.backend_tokenizer, pad_token="<pad>",
                                        bos_token="<s>", eos_token="</s>", chat_template=_MISTRAL_TEMPLATE)
    tokenizer.add_special_tokens({"pad_token": "<pad>", "bos_token": "<s>", "eos_token": "</s>"})
    transformer = Flux2Transformer2DModel(
        patch_size=1, in_channels=4, num_layers=1, num_single_layers=1, attention_head_dim=16, num_attention_heads=2,
        joint_attention_dim=48, timestep_guidance_channels=256, axes_dims_rope=[4, 4, 4, 4],
    )
    # 30 layers: Flux2Pipeline reads hidden states 10, 20 and 30 of the text encoder.
    config = Mistral3Config(
        text_config={"model_type": "mistral", "vocab_size": len(tokenizer), "hidden_size": 16,
                     "intermediate_size": 37, "max_position_embeddings": 512, "num_attention_heads": 4,
                     "num_hidden_layers": 30, "num_key_value_heads": 2, "rms_norm_eps": 1e-05,
                     "rope_theta": 1000000000.0, "sliding_window": None,
                     "pad_token_id": tokenizer.pad_token_id},
        vision_config={"model_type": "pixtral", "hidden_size": 16, "num_hidden_layers": 1, "num_attention_heads": 4,
                       "intermediate_size": 37, "image_size": 30, "patch_size": 6, "num_channels": 3},
        image_seq_length=4, vision_feature_layer=-1, image_token_index=1,
    )
    vae = AutoencoderKLFlux2(
        sample_size=32, in_channels=3, out_channels=3, down_block_types=("DownEncoderBlock2D",),
        up_block_types=("UpDecoderBlock2D",), block_out_channels=(4,), layers_per_block=1, latent_channels=1,
        norm_num_groups=1, use_quant_conv=False, use_post_quant_conv=False,
    )
    return Flux2Pipeline(scheduler=FlowMatchEulerDiscreteScheduler(), vae=vae,
                         text_encoder=Mistral3ForConditionalGeneration(config), tokenizer=tokenizer,
                         transformer=transformer)


#: Editor name -> builder of its tiny pipeline. Step1X-Edit has no pipeline in released diffusers.
BUILDERS: dict[str, Callable[[], Any]] = {
    "instruct_pix2pix": instruct_pix2pix,
    "flux1_dev": flux1_dev,
    "flux_kontext_dev": flux_kontext_dev,
    "qwen_image_edit": qwen_image_edit,
    "qwen_image_edit_plus": lambda: qwen_image_edit(plus=True),
    "flux2_dev": flux2_dev,
}


def save_tiny(name: str, directory: Path) -> Path:
    """Build the tiny pipeline for ``name`` and save it (diffusers layout) under ``directory``."""
    pipe = BUILDERS[name]()
    processor = getattr(pipe, "processor", None)
    if processor is None:
        pipe.save_pretrained(directory)
        return directory
    # An image-only Qwen-VL processor cannot save itself (no video half): save its parts
    # where the real checkpoints keep them and name the real class in model_index.json.
    pipe.register_modules(processor=None)
    pipe.save_pretrained(directory)
    processor.tokenizer.save_pretrained(directory / "processor")
    processor.image_processor.save_pretrained(directory / "processor")
    index_path = directory / "model_index.json"
    index = json.loads(index_path.read_text())
    index["processor"] = ["transformers", "Qwen2VLProcessor"]
    index_path.write_text(json.dumps(index, indent=2))
    return directory


@contextmanager
def small_qwen_internal_size(side: int = 64) -> Iterator[None]:
    """QwenImageEdit(Plus) resizes every input to about 1024x1024 inside the pipeline (about 95 s
    per call for a tiny model on a CPU); cap that internal size at ``side``² while active."""
    from diffusers.pipelines.qwenimage import pipeline_qwenimage_edit as edit
    from diffusers.pipelines.qwenimage import pipeline_qwenimage_edit_plus as plus

    saved = edit.calculate_dimensions, plus.calculate_dimensions
    edit.calculate_dimensions = lambda area, ratio: saved[0](min(area, side * side), ratio)
    plus.calculate_dimensions = lambda area, ratio: saved[1](min(area, side * side), ratio)
    try:
        yield
    finally:
        edit.calculate_dimensions, plus.calculate_dimensions = saved
