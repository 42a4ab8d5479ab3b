"""Completions from a local model: ``transformers`` (batched) or vLLM's offline engine.

``transformers``: prompts are grouped into batches of ``batch_size`` by
length (little compute wasted on padding), padded on the left, and generated
with ``model.generate``; chat prompts go through the tokenizer's chat template
with the generation prompt added, as TRL does. A completion that ends without
the end-of-sequence token after ``max_tokens`` is marked ``finish_reason:
"length"``. The device and dtype are chosen as for reward models
(:mod:`rewardsmith.judges.local_model`).

vLLM is used when it is installed (``pip install 'rewardsmith[vllm]'``, on a
CUDA machine); without it, asking for the backend is a clear error.
"""

from __future__ import annotations

import time
from typing import Any

from rewardsmith.evaluation.generation import Generated, GenerationConfig, GenerationError, SampleRequest, shaped
from rewardsmith.judges.local_model import length_sorted_batches, resolve_device, resolve_dtype

__all__ = ["TransformersGenerator", "VLLMGenerator"]


class TransformersGenerator:
    """Completions from a ``transformers`` causal LM, generated in batches on this machine.

    >>> from rewardsmith.train.tiny_model import build_tiny_model
    >>> import tempfile
    >>> model = build_tiny_model(tempfile.mkdtemp() + "/tiny")  # an offline random model: its text is noise
    >>> generator = TransformersGenerator(GenerationConfig(model=str(model), max_tokens=4, device="cpu"))
    >>> [g.completion_tokens <= 4 for g in generator.generate([SampleRequest(0, 0, "2+2=")])]
    [True]
    """

    def __init__(self, config: GenerationConfig) -> None:
        self.config = config
        self._loaded: tuple[Any, Any, str] | None = None

    def _load(self) -> tuple[Any, Any, str]:
        if self._loaded is None:
            from transformers import AutoModelForCausalLM, AutoTokenizer

            from rewardsmith.train.builtin_models import resolve_model

            config = self.config
            device = resolve_device(config.device)
            path = resolve_model(config.model)  # builtin: names and GGUF files become local folders
            try:
                tokenizer = AutoTokenizer.from_pretrained(path)
                model = AutoModelForCausalLM.from_pretrained(path, dtype=resolve_dtype(config.dtype, device))
            except OSError as exc:
                raise GenerationError(
                    f"cannot load the model {config.model!r}: {exc}. Give a local folder, or a Hub id this machine can "
                    "download; for a model behind a server, set base_url= (backend openai)"
                ) from exc
            if tokenizer.pad_token is None:
                tokenizer.pad_token = tokenizer.eos_token
            tokenizer.padding_side = "left"
            model.to(device)
            model.eval()
            self._loaded = (model, tokenizer, device)
        return self._loaded

    def _text(self, tokenizer: Any, prompt: Any) -> tuple[str, bool]:
        """The text the model continues, and whether it is chat-templated (its special tokens already in place)."""
        if isinstance(prompt, str):
            return prompt, False
        text = tokenizer.apply_chat_template(
            prompt, tokenize=False, add_generation_prompt=True, **self.config.chat_template_kwargs
        )
        return text, True

    def generate(self, requests: list[SampleRequest]) -> list[Generated]:
        """Generate every request, ``batch_size`` prompts per forward pass; results in the requests' order."""
        import torch

        model, tokenizer, device = self._load()
        config = self.config
        texts = [self._text(tokenizer, request.prompt) for request in requests]
        lengths = [len(text) for text, _ in texts]
        out: list[Generated | None] = [None] * len(requests)
        temperature = config.sampling_temperature
        options: dict[str, Any] = {"max_new_tokens": config.max_tokens, "pad_token_id": tokenizer.pad_token_id}
        if temperature > 0:
            options.update(do_sample=True, temperature=temperature, top_p=config.top_p)
        else:
            options.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        for batch in length_sorted_batches(lengths, config.batch_size):
            first = requests[batch[0]]
            seed = config.seed_for(first.index, first.sample)
            if seed is not None:
                torch.manual_seed(seed)
            templated = texts[batch[0]][1]
            encoded = tokenizer(
                [texts[i][0] for i in batch], return_tensors="pt", padding=True, add_special_tokens=not templated
            ).to(device)
            started = time.perf_counter()
            with torch.no_grad():
                generated = model.generate(**encoded, **options)
            latency = (time.perf_counter() - started) / len(batch)
            new_tokens = generated[:, encoded["input_ids"].shape[1] :]
            for row, i in enumerate(batch):
                ids = new_tokens[row].tolist()
                ended = tokenizer.eos_token_id in ids
                if ended:
                    ids = ids[: ids.index(tokenizer.eos_token_id)]
                ids = [t for t in ids if t != tokenizer.pad_token_id]
                text = tokenizer.decode(ids, skip_special_tokens=True)
                out[i] = Generated(
                    shaped(requests[i].prompt, text),
                    latency_s=latency,
                    finish_reason="stop" if ended else "length",
                    prompt_tokens=int(encoded["attention_mask"][row].sum()),
                    completion_tokens=len(ids),
                )
        return [g for g in out if g is not None]

    def close(self) -> None:
        """Let the model go."""
        self._loaded = None


class VLLMGenerator:
    """Completions from vLLM's offline engine (``vllm.LLM``), when vLLM is installed.

    >>> import importlib.util
    >>> if importlib.util.find_spec("vllm") is None:
    ...     try:
    ...         VLLMGenerator(GenerationConfig(model="m", backend="vllm"))
    ...     except GenerationError as exc:
    ...         print(str(exc)[:21])
    ... else:
    ...     print("vLLM is not installed")
    vLLM is not installed
    """

    def __init__(self, config: GenerationConfig) -> None:
        try:
            import vllm
        except ImportError as exc:
            raise GenerationError(
                f"vLLM is not installed ({exc}), so backend='vllm' cannot run. Install it on a CUDA machine "
                "(pip install 'rewardsmith[vllm]'), or serve the model (`vllm serve MODEL`) and pass its base_url "
                "(backend openai), or use backend='transformers'"
            ) from None
        self.config = config
        self._vllm = vllm
        self._llm: Any = None

    def generate(self, requests: list[SampleRequest]) -> list[Generated]:
        """Generate every request in one call to the engine (it batches them); results in the requests' order."""
        vllm, config = self._vllm, self.config
        if self._llm is None:
            from rewardsmith.train.builtin_models import resolve_model

            self._llm = vllm.LLM(model=resolve_model(config.model), dtype=config.dtype, **config.vllm_kwargs)
        params = [
            vllm.SamplingParams(
                temperature=config.sampling_temperature,
                top_p=config.top_p,
                max_tokens=config.max_tokens,
                seed=config.seed_for(r.index, r.sample),
            )
            for r in requests
        ]
        started = time.perf_counter()
        chats = [i for i, r in enumerate(requests) if not isinstance(r.prompt, str)]
        plain = [i for i, r in enumerate(requests) if isinstance(r.prompt, str)]
        outputs: dict[int, Any] = {}
        if chats:
            done = self._llm.chat(
                [requests[i].prompt for i in chats],
                [params[i] for i in chats],
                chat_template_kwargs=config.chat_template_kwargs or None,
            )
            outputs.update(zip(chats, done))
        if plain:
            done = self._llm.generate([requests[i].prompt for i in plain], [params[i] for i in plain])
            outputs.update(zip(plain, done))
        latency = (time.perf_counter() - started) / max(1, len(requests))
        results = []
        for i, request in enumerate(requests):
            first = outputs[i].outputs[0]
            results.append(
                Generated(
                    shaped(request.prompt, first.text),
                    latency_s=latency,
                    finish_reason=first.finish_reason,
                    prompt_tokens=len(outputs[i].prompt_token_ids or []),
                    completion_tokens=len(first.token_ids),
                )
            )
        return results

    def close(self) -> None:
        """Let the engine go."""
        self._llm = None
