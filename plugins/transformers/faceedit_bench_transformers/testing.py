"""Tiny randomly initialised Qwen-VL models built from configs in code: no download, no GPU.

They run the judge's real code path (loading from a local directory, chat template, image
processing, generation) in well under a second on a CPU. Their answers are noise: they test
the plumbing, never judging quality.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

_SPECIAL = ("<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>")

#: Enough of the Qwen chat template for image + text user turns.
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{% if m['content'] is string %}{{ m['content'] }}"
    "{% else %}{% for c in m['content'] %}{% if c['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% else %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def tiny_tokenizer() -> Any:
    """A character-level Qwen2 tokenizer (byte alphabet, no merges) with the Qwen-VL special tokens."""
    from transformers import Qwen2Tokenizer
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    vocab = {c: i for i, c in enumerate(bytes_to_unicode().values())}
    tokenizer = Qwen2Tokenizer(vocab=vocab, merges=[], model_max_length=4096, chat_template=CHAT_TEMPLATE)
    tokenizer.add_special_tokens({"additional_special_tokens": list(_SPECIAL)})
    return tokenizer


def _token_ids(tokenizer: Any) -> dict[str, int]:
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in _SPECIAL}
    return {"image_token_id": ids["<|image_pad|>"], "video_token_id": ids["<|video_pad|>"],
            "vision_start_token_id": ids["<|vision_start|>"], "vision_end_token_id": ids["<|vision_end|>"]}


def qwen2_5_vl() -> tuple[Any, Any, Any]:
    import torch
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration, Qwen2VLImageProcessorPil

    torch.manual_seed(0)
    tokenizer = tiny_tokenizer()
    config = Qwen2_5_VLConfig(
        text_config={"hidden_size": 16, "intermediate_size": 16, "num_hidden_layers": 2, "num_attention_heads": 2,
                     "num_key_value_heads": 2, "vocab_size": len(tokenizer),
                     "eos_token_id": tokenizer.convert_tokens_to_ids("<|im_end|>"),
                     "rope_scaling": {"mrope_section": [1, 1, 2], "rope_type": "default", "type": "default"}},
        vision_config={"depth": 1, "hidden_size": 16, "intermediate_size": 16, "num_heads": 2, "out_hidden_size": 16},
        **_token_ids(tokenizer),
    )
    image_processor = Qwen2VLImageProcessorPil(min_pixels=4 * 28 * 28, max_pixels=16 * 28 * 28)
    return Qwen2_5_VLForConditionalGeneration(config), tokenizer, image_processor


def qwen3_vl() -> tuple[Any, Any, Any]:
    import torch
    from transformers import Qwen2VLImageProcessorPil, Qwen3VLConfig, Qwen3VLForConditionalGeneration

    torch.manual_seed(0)
    tokenizer = tiny_tokenizer()
    config = Qwen3VLConfig(
        text_config={"hidden_size": 16, "intermediate_size": 16, "num_hidden_layers": 2, "num_attention_heads": 2,
                     "num_key_value_heads": 2, "head_dim": 8, "vocab_size": len(tokenizer),
                     "eos_token_id": tokenizer.convert_tokens_to_ids("<|im_end|>"),
                     "rope_parameters": {"rope_theta": 5000.0, "rope_type": "default", "mrope_section": [1, 1, 2],
                                         "mrope_interleaved": True}},
        vision_config={"depth": 2, "hidden_size": 16, "intermediate_size": 16, "num_heads": 2, "out_hidden_size": 16,
                       "patch_size": 16, "num_position_embeddings": 64, "deepstack_visual_indexes": [1]},
        **_token_ids(tokenizer),
    )
    image_processor = Qwen2VLImageProcessorPil(min_pixels=4 * 32 * 32, max_pixels=16 * 32 * 32, patch_size=16)
    return Qwen3VLForConditionalGeneration(config), tokenizer, image_processor


BUILDERS: dict[str, Callable[[], tuple[Any, Any, Any]]] = {"qwen2_5_vl": qwen2_5_vl, "qwen3_vl": qwen3_vl}


def save_tiny(name: str, directory: Path) -> Path:
    """Build the tiny model ``name`` and save it as a downloaded checkpoint is laid out."""
    model, tokenizer, image_processor = BUILDERS[name]()
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    image_processor.save_pretrained(directory)
    return directory


def tiny_clip(directory: Path) -> Path:
    """A tiny random CLIP (text and vision towers, 32x32 images) saved as a downloaded checkpoint is laid out."""
    import torch
    from transformers import CLIPConfig, CLIPImageProcessorPil, CLIPModel, CLIPTokenizer

    letters = [chr(c) for c in range(32, 127)]
    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1, **{t: i + 2 for i, t in enumerate(
        [*letters, *(f"{c}</w>" for c in letters)])}}
    tokenizer = CLIPTokenizer(vocab=vocab, merges=[], model_max_length=77)
    torch.manual_seed(0)
    tower = {"hidden_size": 32, "intermediate_size": 37, "num_hidden_layers": 2, "num_attention_heads": 4}
    config = CLIPConfig(text_config={**tower, "vocab_size": len(tokenizer), "max_position_embeddings": 77,
                                     "bos_token_id": 0, "eos_token_id": 1, "pad_token_id": 1},
                        vision_config={**tower, "image_size": 32, "patch_size": 8}, projection_dim=16)
    CLIPModel(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    CLIPImageProcessorPil(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}).save_pretrained(directory)
    return directory


def tiny_dino(directory: Path) -> Path:
    """A tiny random DINOv2 (32x32 images) saved as a downloaded checkpoint is laid out."""
    import torch
    from transformers import BitImageProcessorPil, Dinov2Config, Dinov2Model

    torch.manual_seed(0)
    config = Dinov2Config(image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                          intermediate_size=37)
    Dinov2Model(config).save_pretrained(directory)
    BitImageProcessorPil(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}).save_pretrained(directory)
    return directory
