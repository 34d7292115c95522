"""A local Qwen-VL judge (Qwen2-VL, Qwen2.5-VL, Qwen3-VL) implementing
:class:`faceedit_bench.scoring.judge.service.Judge`.

One attempt per call: the images and the rendered prompt go in as one user turn, the model's
text comes back unparsed. The core validates it against the template's schema and records an
unparsable answer as ``parse_error``; nothing here repairs or guesses a score.

Greedy requests that arrive together (the engine asks about all sessions of a chunk at once)
share one ``generate`` call, left-padded, through :class:`faceedit_bench.execution.batching.MicroBatcher`.
Sampled requests run one at a time, so that each answer depends only on its own seed.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from faceedit_bench.api import CallLimits, JudgeReply, JudgeRequest, MicroBatcher, ModelSource, Outcome
from faceedit_bench.api.images import decode_rgb
from faceedit_bench_transformers import loading

log = logging.getLogger(__name__)

#: config.json model_type -> the processor class of that family.
PROCESSORS = {
    "qwen2_vl": "Qwen2VLProcessor",
    "qwen2_5_vl": "Qwen2_5_VLProcessor",
    "qwen3_vl": "Qwen3VLProcessor",
    "qwen3_vl_moe": "Qwen3VLProcessor",
}


class QwenVLJudge:
    """Construction only finds the model (failing with how to get it); weights load on the
    first call. Batches run one at a time in a worker thread."""

    def __init__(self, model: str = "Qwen/Qwen2.5-VL-7B-Instruct", revision: str | None = None,
                 dtype: str = "bfloat16", device: str = "auto", max_new_tokens: int = 1024,
                 temperature: float = 0.0, top_p: float = 1.0, batch_size: int = 8, batch_wait_s: float = 0.05,
                 timeout_s: float = 1800.0, allow_download: bool = False) -> None:
        ModelSource.check_dtype(dtype)
        if max_new_tokens < 1:
            raise ValueError("max_new_tokens must be at least 1")
        if temperature < 0 or not 0 < top_p <= 1:
            raise ValueError("temperature must be >= 0 (0: greedy) and top_p in (0, 1]")
        if timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.source = ModelSource.locate(model, index_file="config.json", revision=revision,
                                         allow_download=allow_download)
        self.family = self.source.index.get("model_type", "")
        if self.family not in PROCESSORS:
            raise ValueError(f"model {self.source.name!r} is a {self.family or 'unknown'!r} model; the qwen_vl judge "
                             f"runs {', '.join(sorted(PROCESSORS))} (Qwen2-VL, Qwen2.5-VL and Qwen3-VL families)")
        self.dtype, self.device = dtype, device
        self.max_new_tokens, self.temperature, self.top_p = max_new_tokens, temperature, top_p
        self._batcher: MicroBatcher[JudgeRequest, JudgeReply] = MicroBatcher(
            self._judge_batch, max_batch=batch_size if temperature == 0 else 1, wait_s=batch_wait_s)
        # Twice a batch in flight: the next batch fills while one runs.
        self.limits = CallLimits(provider_key=f"local:{self.source.name}", max_concurrency=2 * self._batcher.max_batch,
                                 requests_per_minute=None, max_attempts=1, timeout_s=timeout_s)
        self.prices: dict[str, float] = {}
        self._model: Any = None
        self._processor: Any = None
        self._load_error: Exception | None = None
        self._lock = threading.Lock()

    def describe(self) -> dict[str, Any]:
        # Not hashed: device, batching and timeout_s. GPU kernels and padding can change the last
        # bits of the logits and so, rarely, a greedy token; answers are reproducible per machine,
        # batch size and library set.
        greedy = self.temperature == 0
        return {
            "name": "qwen_vl",
            **self.source.describe(),
            "family": self.family,
            "dtype": self.dtype,
            "max_new_tokens": self.max_new_tokens,
            "decoding": "greedy" if greedy else "sampling, seeded per request",
            "temperature": self.temperature,
            "top_p": None if greedy else self.top_p,
            "libraries": {name: ModelSource.package_version(name) for name in ("transformers", "torch")},
            "version": f"{self.source.name}@{self.source.revision or 'config-' + self.source.config_hash}",
        }

    async def ajudge(self, request: JudgeRequest) -> JudgeReply:
        return await self._batcher.submit(request)

    def judge(self, request: JudgeRequest) -> JudgeReply:
        """One attempt, synchronously."""
        return self._judge_batch([request])[0]

    def _judge_batch(self, requests: list[JudgeRequest]) -> list[JudgeReply]:
        try:
            with self._lock:
                model, processor = self._loaded()
                return self._generate(model, processor, requests)
        except Exception as exc:  # the core records it; a later resume retries api_error
            if len(requests) > 1 and MicroBatcher.is_out_of_memory(exc):
                return self._split(requests)
            reason = f"{type(exc).__name__}: {exc}"
            if MicroBatcher.is_out_of_memory(exc):
                reason = (f"CUDA out of memory ({reason[:300]}): lower judge.params.batch_size, use a smaller model "
                          "or set judge.params.device")
            return [JudgeReply(Outcome.API_ERROR, reason=reason[:2000])] * len(requests)

    def _split(self, requests: list[JudgeRequest]) -> list[JudgeReply]:
        """A batch too big for the device: its halves, each on its own."""
        import torch

        half = len(requests) // 2
        log.warning("qwen_vl: a batch of %d questions ran out of device memory; asking them as %d + %d "
                    "(lower judge.params.batch_size to skip this retry)", len(requests), half, len(requests) - half)
        torch.cuda.empty_cache()
        return self._judge_batch(requests[:half]) + self._judge_batch(requests[half:])

    def _generate(self, model: Any, processor: Any, requests: list[JudgeRequest]) -> list[JudgeReply]:
        import torch
        from PIL import Image

        texts, images = [], []
        for request in requests:
            # The request's parts in order: each image (after its label, if any), then the prompt.
            opened = [Image.fromarray(decode_rgb(data, label="image sent to the judge")) for data in request.images]
            content = [{"type": "image"} if kind == "image" else {"type": "text", "text": data}
                       for kind, data in request.parts()]
            system = ([{"role": "system", "content": [{"type": "text", "text": request.system}]}]
                      if request.system else [])
            texts.append(processor.apply_chat_template([*system, {"role": "user", "content": content}], tokenize=False,
                                                       add_generation_prompt=True))
            images.extend(opened)
        inputs = processor(text=texts, images=images or None, padding=True, return_tensors="pt").to(model.device)
        cuda = torch.cuda.is_available() and model.device.type == "cuda"
        if cuda:
            torch.cuda.reset_peak_memory_stats()
        sampling: dict[str, Any] = {"do_sample": False, "temperature": None, "top_p": None, "top_k": None}
        if self.temperature > 0:  # batches of one (see __init__)
            torch.manual_seed(requests[0].seed)  # parse retries get a new seed, so a new sample
            sampling = {"do_sample": True, "temperature": self.temperature, "top_p": self.top_p, "top_k": None}
        started = time.perf_counter()
        with torch.inference_mode():
            output = model.generate(**inputs, max_new_tokens=self.max_new_tokens, **sampling)
        seconds = round(time.perf_counter() - started, 4)
        padded = inputs["input_ids"].shape[1]
        stops = _stop_ids(model)
        replies = []
        for row, prompt_tokens in zip(output, inputs["attention_mask"].sum(dim=1).tolist()):
            new_tokens = _until_stop(row[padded:].tolist(), stops)
            usage: dict[str, Any] = {"input_tokens": int(prompt_tokens), "output_tokens": len(new_tokens),
                                     "seconds": seconds, "batch_size": len(requests),
                                     "truncated": int(len(new_tokens) >= self.max_new_tokens)}
            if cuda:
                usage["peak_gpu_mem_bytes"] = int(torch.cuda.max_memory_allocated())
            answer = processor.tokenizer.decode(new_tokens, skip_special_tokens=True)
            replies.append(JudgeReply(Outcome.OK, text=answer, usage=usage))
        return replies

    def _loaded(self) -> tuple[Any, Any]:
        if self._model is None and self._load_error is None:
            try:
                self._model, self._processor = self._load()
            except Exception as exc:  # remembered: later calls fail the same way, at once
                self._load_error = exc
        if self._load_error is not None:
            raise self._load_error
        return self._model, self._processor

    def _load(self) -> tuple[Any, Any]:
        import torch
        from transformers import AutoModelForImageTextToText

        processor = loading.load_processor(self.source.path, PROCESSORS[self.family])
        # Batched prompts of different lengths: pad on the left, so every answer starts at the
        # same position and generation sees each prompt's own last token.
        processor.tokenizer.padding_side = "left"
        if processor.tokenizer.pad_token is None:
            processor.tokenizer.pad_token = processor.tokenizer.eos_token
        model = AutoModelForImageTextToText.from_pretrained(
            self.source.path, dtype=ModelSource.torch_dtype(torch, self.dtype),
            device_map=loading.device_map(self.device), local_files_only=True)
        model.eval()
        return model, processor


def _stop_ids(model: Any) -> set[int]:
    eos = model.generation_config.eos_token_id
    return set(eos if isinstance(eos, list) else [] if eos is None else [eos])


def _until_stop(tokens: list[int], stops: set[int]) -> list[int]:
    """A row's answer: its tokens up to and including the first stop token (what follows is
    padding of a batch whose other rows were still generating)."""
    for i, token in enumerate(tokens):
        if token in stops:
            return tokens[: i + 1]
    return tokens
