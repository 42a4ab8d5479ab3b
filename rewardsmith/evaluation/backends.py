"""Choosing the generation backend an evaluation job's settings ask for."""

from __future__ import annotations

from typing import Any

from rewardsmith.core.extras import require_extra
from rewardsmith.evaluation.generation import GenerationConfig, SampleRequest
from rewardsmith.evaluation.openai_backend import OpenAIGenerator

__all__ = ["ModelSampler", "make_generator"]


def make_generator(config: GenerationConfig) -> Any:
    """The generator for ``config``'s backend (``generate(requests)`` and ``close()``).

    >>> make_generator(GenerationConfig(model="m", base_url="http://127.0.0.1:9/v1")).__class__.__name__
    'OpenAIGenerator'
    """
    backend = config.resolved_backend
    if backend == "openai":
        return OpenAIGenerator(config)
    require_extra("models", f"generating with the {backend} backend")
    from rewardsmith.evaluation.local import TransformersGenerator, VLLMGenerator  # torch, only when asked for

    return TransformersGenerator(config) if backend == "transformers" else VLLMGenerator(config)


class ModelSampler:
    """``sampler(prompts, n)``: ``n`` completions per prompt from a model, in the prompts' order.

    What ``rewardsmith check --model`` gives the audit's signal check
    (:func:`rewardsmith.check.check`'s ``sample``); a sample whose generation
    failed is left out of its prompt's list. ``close()`` releases the backend.
    """

    def __init__(self, config: GenerationConfig | dict[str, Any]) -> None:
        self.config = GenerationConfig.of(config)
        self.generator = make_generator(self.config)

    def __call__(self, prompts: list[Any], n: int) -> list[list[Any]]:
        requests = [SampleRequest(i, s, prompt) for i, prompt in enumerate(prompts) for s in range(n)]
        out: list[list[Any]] = [[] for _ in prompts]
        for request, made in zip(requests, self.generator.generate(requests)):
            if made.completion is not None:
                out[request.index].append(made.completion)
        return out

    def close(self) -> None:
        """Release the generation backend."""
        self.generator.close()
