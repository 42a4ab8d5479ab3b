"""Completions generated for an evaluation job: the settings, the requests and results every backend shares.

Three backends, one interface (``generate(requests) -> results``, in order),
chosen by :func:`rewardsmith.evaluation.backends.make_generator`:

* ``openai``: any OpenAI-compatible chat endpoint
  (:mod:`rewardsmith.evaluation.openai_backend`);
* ``transformers``: a local model, batched (:mod:`rewardsmith.evaluation.local`);
* ``vllm``: vLLM's offline engine, when it is installed (same module).

A sample whose request fails for good (a refused prompt, retries used up) is
recorded with its error and the job goes on; what would make *every*
request fail (no server at ``base_url``, a rejected key, an unknown model)
stops the job with a :class:`GenerationError` that says what to fix.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from rewardsmith.core.errors import RewardConfigError, RewardsmithError
from rewardsmith.core.names import did_you_mean

__all__ = ["Generated", "GenerationConfig", "GenerationError", "SampleRequest", "shaped"]

Backend = Literal["auto", "openai", "transformers", "vllm"]
_BACKENDS = ("auto", "openai", "transformers", "vllm")
#: Settings that change which completions a job gets (what makes two jobs the same job).
IDENTITY_FIELDS = ("model", "n", "temperature", "top_p", "max_tokens", "seed", "extra_body", "chat_template_kwargs")


class GenerationError(RewardsmithError):
    """Generation cannot work as set up (no server, a rejected key, an unknown model, a missing library)."""


@dataclass
class GenerationConfig:
    """How completions are generated: the model, the backend, sampling, and the endpoint's manners.

    * ``model``: the model's name at the endpoint, or a Hub id / local folder for ``transformers`` and ``vllm``.
    * ``backend``: ``"auto"`` (``openai`` when ``base_url`` is set, else ``transformers``), ``"openai"``,
      ``"transformers"`` or ``"vllm"``.
    * ``n``: samples per prompt; ``temperature`` (``None``: 0, greedy, for one sample; 1.0 for several),
      ``top_p``, ``max_tokens``, ``seed`` (sample ``s`` of prompt ``i`` gets ``seed + i * n + s``).
    * ``base_url`` (up to ``/v1``), ``api_key_env`` (the variable holding the key; unset sends no key),
      ``max_concurrency``, ``requests_per_minute``, ``max_retries``, ``backoff``, ``max_backoff``,
      ``max_wait``, ``request_timeout``, ``extra_body`` (more request fields).
    * ``device``, ``dtype``, ``batch_size``, ``chat_template_kwargs``: for local models;
      ``vllm_kwargs``: passed to ``vllm.LLM(...)``.

    >>> GenerationConfig(model="my-model", base_url="http://127.0.0.1:8000/v1", n=4).resolved_backend
    'openai'
    >>> GenerationConfig(model="my-model", n=4).sampling_temperature
    1.0
    """

    model: str
    backend: Backend = "auto"
    n: int = 1
    temperature: float | None = None
    top_p: float = 1.0
    max_tokens: int = 512
    seed: int | None = None
    base_url: str | None = None
    api_key_env: str | None = "OPENAI_API_KEY"
    max_concurrency: int = 32
    requests_per_minute: float | None = None
    max_retries: int = 4
    backoff: float = 0.5
    max_backoff: float = 20.0
    max_wait: float = 60.0
    request_timeout: float = 120.0
    extra_body: dict[str, Any] = field(default_factory=dict)
    device: str = "auto"
    dtype: str = "auto"
    batch_size: int = 8
    chat_template_kwargs: dict[str, Any] = field(default_factory=dict)
    vllm_kwargs: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.model, str) or not self.model.strip():
            raise RewardConfigError("generation needs model= (the model's name at the endpoint, or a local folder)")
        if self.backend not in _BACKENDS:
            raise RewardConfigError(
                f"generation backend must be one of {', '.join(_BACKENDS)}, got {self.backend!r}"
                f"{did_you_mean(str(self.backend), _BACKENDS)}"
            )
        for name in ("n", "max_tokens", "max_concurrency", "batch_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise RewardConfigError(f"generation {name} must be a whole number >= 1, got {value!r}")
        if self.temperature is not None and not (isinstance(self.temperature, (int, float)) and self.temperature >= 0):
            raise RewardConfigError(f"generation temperature must be >= 0, got {self.temperature!r}")
        if self.resolved_backend == "openai" and not (self.base_url or "").startswith(("http://", "https://")):
            raise RewardConfigError(
                f"the openai backend needs base_url= an http(s) URL up to /v1, like 'http://127.0.0.1:8000/v1' "
                f"(got {self.base_url!r})"
            )

    @classmethod
    def of(cls, value: GenerationConfig | Mapping[str, Any]) -> GenerationConfig:
        """A ``GenerationConfig`` from itself or from a mapping of its fields (unknown keys are an error).

        >>> GenerationConfig.of({"model": "m", "n": 2}).n
        2
        """
        if isinstance(value, GenerationConfig):
            return value
        if not isinstance(value, Mapping):
            raise RewardConfigError(f"generation takes a GenerationConfig or a mapping of its settings, got {value!r}")
        known = [f.name for f in dataclasses.fields(cls)]
        for key in value:
            if key not in known:
                raise RewardConfigError(
                    f"generation has no setting {key!r}.{did_you_mean(str(key), known)} Settings: {', '.join(known)}"
                )
        if not value.get("model"):
            raise RewardConfigError(
                f"generation settings {sorted(value)} name no model: give generation.model (--model) to generate "
                "completions, or drop them when scoring a completions_column"
            )
        return cls(**value)

    @property
    def resolved_backend(self) -> str:
        """The backend ``auto`` stands for."""
        if self.backend != "auto":
            return self.backend
        return "openai" if self.base_url else "transformers"

    @property
    def sampling_temperature(self) -> float:
        """The temperature used: ``temperature``, or 0 for one sample and 1.0 for several."""
        if self.temperature is not None:
            return float(self.temperature)
        return 0.0 if self.n == 1 else 1.0

    def seed_for(self, index: int, sample: int) -> int | None:
        """The seed of one sample (``None`` without ``seed``)."""
        return None if self.seed is None else self.seed + index * self.n + sample

    def identity(self) -> dict[str, Any]:
        """The settings that decide which completions a job gets."""
        out = {name: getattr(self, name) for name in IDENTITY_FIELDS}
        out["temperature"] = self.sampling_temperature
        return out


@dataclass(frozen=True)
class SampleRequest:
    """One completion to generate: sample ``sample`` of prompt ``index``."""

    index: int
    sample: int
    prompt: Any


@dataclass
class Generated:
    """One generated completion (plain text, or an assistant message for chat prompts), or why there is none."""

    completion: Any
    error: str | None = None
    latency_s: float | None = None
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None

    def info(self) -> dict[str, Any]:
        """What ``results.jsonl`` records about the generation."""
        return {
            "latency_s": self.latency_s,
            "error": self.error,
            "finish_reason": self.finish_reason,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }


def shaped(prompt: Any, text: str) -> Any:
    """The completion in the prompt's shape: an assistant message for chat prompts, else the text.

    >>> shaped([{"role": "user", "content": "hi"}], "hello"), shaped("hi", "hello")
    ([{'role': 'assistant', 'content': 'hello'}], 'hello')
    """
    return text if isinstance(prompt, str) else [{"role": "assistant", "content": text}]
