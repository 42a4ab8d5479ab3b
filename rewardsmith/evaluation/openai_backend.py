"""The ``openai`` generation backend: any OpenAI-compatible chat endpoint.

OpenAI, vLLM's and SGLang's servers, Ollama, LiteLLM, Fireworks, Together,
...: one request per sample, at most ``max_concurrency`` in flight,
``requests_per_minute`` spacing, and retries with back-off and jitter on 429,
5xx, timeouts and broken answers honouring ``Retry-After``, through the one
HTTP client (:mod:`rewardsmith.http`), as the LLM judges do.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator
from typing import Any

from rewardsmith.core.async_reward import run_sync
from rewardsmith.core.inputs import as_messages
from rewardsmith.evaluation.generation import Generated, GenerationConfig, GenerationError, SampleRequest, shaped

__all__ = ["OpenAIGenerator"]

_FATAL_STATUSES = frozenset({401, 403, 404})


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
        from rewardsmith.http.chat import EndpointAdvice, post_chat
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
        advice = EndpointAdvice(config.base_url or "", config.model, config.api_key_env)
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
                advice=advice,
            )
        except EndpointRequestError as exc:
            if exc.status in _FATAL_STATUSES or (exc.connection and not self.succeeded):
                raise GenerationError(_fatal_message(exc, advice)) from None
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


def _fatal_message(exc: Any, advice: Any) -> str:
    return f"{exc}. {advice.unreachable()}" if exc.connection else str(exc)
