"""Completions generated for an evaluation job: settings, and the OpenAI-compatible backend.

Three backends, one interface (``generate(requests) -> results``, in order):

* ``openai``: any OpenAI-compatible chat endpoint (OpenAI, vLLM's and
  SGLang's servers, Ollama, LiteLLM, Fireworks, Together, ...), one request
  per sample, at most ``max_concurrency`` in flight, ``requests_per_minute``
  spacing, and retries with back-off and jitter on 429, 5xx, timeouts and
  broken answers honouring ``Retry-After``: the same HTTP client and retry
  code as the LLM judges (:mod:`rewardsmith.http.transport`,
  :mod:`rewardsmith.http.retry`);
* ``transformers``: a local model, batched (:mod:`rewardsmith.evaluate.local`);
* ``vllm``: vLLM's offline engine, when it is installed.

A sample whose request fails for good (a refused prompt, retries used up) is
recorded with its error and the job goes on; what would make *every*
request fail (no server at ``base_url``, a rejected key, an unknown model)
stops the job with a :class:`GenerationError` that says what to fix.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from rewardsmith.core.async_reward import run_sync
from rewardsmith.core.errors import RewardConfigError, RewardsmithError
from rewardsmith.core.inputs import as_messages
from rewardsmith.core.names import did_you_mean

__all__ = ["Generated", "GenerationConfig", "GenerationError", "SampleRequest", "make_generator"]

Backend = Literal["auto", "openai", "transformers", "vllm"]
_BACKENDS = ("auto", "openai", "transformers", "vllm")
_FATAL_STATUSES = frozenset({401, 403, 404})
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


def make_generator(config: GenerationConfig) -> Any:
    """The generator for ``config``'s backend (``generate(requests)`` and ``close()``).

    >>> make_generator(GenerationConfig(model="m", base_url="http://127.0.0.1:9/v1")).__class__.__name__
    'OpenAIGenerator'
    """
    backend = config.resolved_backend
    if backend == "openai":
        return OpenAIGenerator(config)
    from rewardsmith.evaluate.local import TransformersGenerator, VLLMGenerator

    return TransformersGenerator(config) if backend == "transformers" else VLLMGenerator(config)


class OpenAIGenerator:
    """Completions from an OpenAI-compatible chat endpoint, one request per sample, concurrently.

    >>> from rewardsmith.http.testing import LocalChatServer
    >>> with LocalChatServer(lambda request: "4") as server:
    ...     generator = OpenAIGenerator(GenerationConfig(model="m", base_url=server.base_url, api_key_env=None))
    ...     [g.completion for g in generator.generate([SampleRequest(0, 0, "2+2?")])]
    ['4']
    """

    def __init__(self, config: GenerationConfig) -> None:
        from rewardsmith.http.ratelimit import RateLimiter

        self.config = config
        self.limiter = RateLimiter(config.requests_per_minute) if config.requests_per_minute else None
        self.succeeded = False

    def generate(self, requests: list[SampleRequest]) -> list[Generated]:
        """Generate every request (at most ``max_concurrency`` at once); results in the requests' order."""
        return run_sync(self._generate(requests))

    async def _generate(self, requests: list[SampleRequest]) -> list[Generated]:
        from rewardsmith.http.transport import HTTPSender, proxy_for

        config = self.config
        key = os.environ.get(config.api_key_env, "").strip() if config.api_key_env else ""
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        proxy = proxy_for(config.base_url or "")
        semaphore = asyncio.Semaphore(config.max_concurrency)
        idle: list[HTTPSender] = []
        senders: list[HTTPSender] = []

        @contextlib.asynccontextmanager
        async def slot() -> AsyncIterator[HTTPSender]:
            async with semaphore:
                if self.limiter is not None:
                    await self.limiter.acquire()
                if not idle:
                    senders.append(HTTPSender(headers, proxy))
                    idle.append(senders[-1])
                sender = idle.pop()
                try:
                    yield sender
                finally:
                    idle.append(sender)

        tasks = [asyncio.ensure_future(self._one(slot, request, key)) for request in requests]
        try:
            return list(await asyncio.gather(*tasks))
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for sender in senders:
                await sender.aclose()

    async def _one(self, slot: Any, request: SampleRequest, key: str) -> Generated:
        from rewardsmith.http.chat import post_chat
        from rewardsmith.http.retry import EndpointRequestError, RetryPolicy

        config = self.config
        body: dict[str, Any] = {
            "model": config.model,
            "messages": as_messages(request.prompt, "user"),
            "temperature": config.sampling_temperature,
            "top_p": config.top_p,
            "max_tokens": config.max_tokens,
        }
        seed = config.seed_for(request.index, request.sample)
        if seed is not None:
            body["seed"] = seed
        body.update(config.extra_body)
        started = time.perf_counter()
        try:
            answer = await post_chat(
                slot,
                config.base_url.rstrip("/") + "/chat/completions",  # type: ignore[union-attr]
                body,
                policy=RetryPolicy(config.max_retries, config.backoff, config.max_backoff, config.max_wait),
                timeout=config.request_timeout,
                secret=key or None,
                endpoint=f"the generation endpoint {config.base_url}",
                error=EndpointRequestError,
            )
        except EndpointRequestError as exc:
            if exc.status in _FATAL_STATUSES or (exc.connection and not self.succeeded):
                raise GenerationError(_fatal_message(exc, config)) from None
            return Generated(None, error=str(exc), latency_s=time.perf_counter() - started)
        self.succeeded = True
        return Generated(
            shaped(request.prompt, answer.content or ""),
            latency_s=time.perf_counter() - started,
            finish_reason=answer.finish_reason,
            prompt_tokens=answer.prompt_tokens,
            completion_tokens=answer.completion_tokens,
        )

    def close(self) -> None:
        """Nothing to release: connections live for one batch."""


def _fatal_message(exc: Any, config: GenerationConfig) -> str:
    if exc.status in (401, 403):
        where = f"the key in {config.api_key_env}" if config.api_key_env else "no key (api_key_env is None)"
        return f"{exc}. Generation sent {where}; set api_key_env to the variable holding a key this endpoint accepts"
    if exc.status == 404:
        return f"{exc}. Check base_url (it usually ends in /v1) and that the endpoint serves model {config.model!r}"
    return f"{exc}. Nothing reached {config.base_url}: is the server running, and is base_url right?"
