"""Choosing the generation backend an evaluation job's settings ask for."""

from __future__ import annotations

from typing import Any

from rewardsmith.core.extras import require_extra
from rewardsmith.evaluation.generation import GenerationConfig
from rewardsmith.evaluation.openai_backend import OpenAIGenerator

__all__ = ["make_generator"]


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
