"""OpenAI-compatible chat completions: one request, with the retries of :mod:`rewardsmith.http.retry`.

Judges grade with it and evaluation jobs generate with it. A ``200`` whose body
is not the JSON of a chat completion is retried like a server error.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

from rewardsmith.http.retry import EndpointRequestError, RetryPolicy, redact, send_with_retries

__all__ = ["ChatAnswer", "EndpointAdvice", "check_chat_endpoint", "post_chat"]


@dataclass(frozen=True)
class ChatAnswer:
    """The assistant's text and the token counts the server reported (``None`` when it reports none)."""

    content: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    attempts: int
    finish_reason: str | None = None


def _read_answer(response: Any, attempts: int) -> ChatAnswer:
    """The answer in a 200 response; ``ValueError`` if the body is not a chat completion."""
    payload = json.loads(response.content)
    if not isinstance(payload, dict) or not isinstance(payload.get("choices"), list) or not payload["choices"]:
        raise ValueError("the body has no 'choices'")
    choice = payload["choices"][0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise ValueError("the first choice has no 'message'")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        content = json.dumps(content)
    usage = payload.get("usage") if isinstance(payload.get("usage"), dict) else {}
    prompt_tokens = usage.get("prompt_tokens")
    completion_tokens = usage.get("completion_tokens")
    return ChatAnswer(
        content,
        prompt_tokens if isinstance(prompt_tokens, int) else None,
        completion_tokens if isinstance(completion_tokens, int) else None,
        attempts,
        choice.get("finish_reason") if isinstance(choice.get("finish_reason"), str) else None,
    )


async def post_chat(
    acquire: Callable[[], AbstractAsyncContextManager[Any]],
    url: str,
    body: dict[str, Any],
    *,
    policy: RetryPolicy,
    timeout: float,
    secret: str | None = None,
    on_retry: Callable[[str], None] | None = None,
    endpoint: str = "the chat endpoint",
    error: type[EndpointRequestError] = EndpointRequestError,
    advice: Callable[[int], str] | None = None,
) -> ChatAnswer:
    """Send one chat request, retrying as the module describes.

    ``acquire()`` is entered for every attempt and gives what sends it (anything
    with ``await post(url, json=..., timeout=...)`` returning an ``httpx.Response``
    with its body read: a :class:`~rewardsmith.http.transport.HTTPSender` or an
    ``httpx.AsyncClient``). Concurrency slots and rate limiting go there; the slot
    is held for the attempt only, not for the waits between attempts.
    ``on_retry(reason)`` is called before every retry. Raises ``error``
    (:class:`~rewardsmith.http.retry.EndpointRequestError` by default) when the request fails for good;
    ``endpoint`` names the server in its message, ``advice(status)`` (e.g. an :class:`EndpointAdvice`)
    says what to check after a refused request. The answer's text never holds
    ``secret`` (see :func:`~rewardsmith.http.retry.redact`).
    """
    answer = await send_with_retries(
        acquire,
        lambda sender: sender.post(url, json=body, timeout=timeout),
        _read_answer,
        policy=policy,
        timeout=timeout,
        secret=secret,
        on_retry=on_retry,
        endpoint=endpoint,
        error=error,
        advice=advice,
    )
    if secret and answer.content:  # also an echo the JSON escaped, now that it is decoded
        answer = dataclasses.replace(answer, content=redact(answer.content, secret))
    return answer


@dataclass(frozen=True)
class EndpointAdvice:
    """What to check when a chat endpoint refuses a request or does not answer, naming the settings involved.

    Called with an HTTP status it gives the advice for a refused request (pass
    it as ``advice`` to :func:`post_chat`); :meth:`unreachable` is for a server
    that did not answer at all.

    >>> advice = EndpointAdvice("http://127.0.0.1:8000/v1", "m", "MY_KEY")
    >>> advice(401)
    'it was sent the key in MY_KEY; set api_key_env to the variable holding a key this endpoint accepts'
    >>> advice(404)
    "check base_url (it usually ends in /v1) and that the endpoint serves model 'm'"
    """

    base_url: str
    model: str
    api_key_env: str | None

    def __call__(self, status: int) -> str:
        if status in (401, 403):
            sent = f"the key in {self.api_key_env}" if self.api_key_env else "no key (api_key_env is None)"
            return f"it was sent {sent}; set api_key_env to the variable holding a key this endpoint accepts"
        if status == 404:
            return f"check base_url (it usually ends in /v1) and that the endpoint serves model {self.model!r}"
        return "check the settings (model, max_tokens, extra_body) against what this endpoint accepts"

    def unreachable(self) -> str:
        """The advice when nothing answered."""
        return f"Nothing answered at {self.base_url}: is the server running, and is base_url right?"


def check_chat_endpoint(
    base_url: str,
    body: dict[str, Any],
    advice: EndpointAdvice,
    *,
    secret: str | None,
    timeout: float = 30.0,
    error: type[EndpointRequestError] = EndpointRequestError,
) -> ChatAnswer:
    """Send one chat request to check an endpoint before a run (one quick retry at most); its answer, or ``error``.

    The error says what to fix (``advice``): a rejected key, an unknown model
    or path, or no server answering at ``base_url``.

    >>> from rewardsmith.http.testing import LocalChatServer
    >>> with LocalChatServer(lambda request: "OK") as server:
    ...     answer = check_chat_endpoint(server.base_url, {"model": "m", "messages": []},
    ...                                  EndpointAdvice(server.base_url, "m", None), secret=None)
    >>> answer.content
    'OK'
    """
    import contextlib

    from rewardsmith.core.async_reward import run_sync
    from rewardsmith.http.transport import HTTPSender, proxy_for

    async def ask() -> ChatAnswer:
        sender = HTTPSender({"Authorization": f"Bearer {secret}"} if secret else {}, proxy_for(base_url))
        try:
            return await post_chat(
                lambda: contextlib.nullcontext(sender),
                base_url.rstrip("/") + "/chat/completions",
                body,
                policy=RetryPolicy(max_retries=1, backoff=0.2, max_backoff=1.0, max_wait=5.0),
                timeout=timeout,
                secret=secret,
                endpoint=f"the endpoint {base_url}",
                error=error,
                advice=advice,
            )
        finally:
            await sender.aclose()

    try:
        return run_sync(ask())
    except EndpointRequestError as exc:
        if not exc.connection:
            raise
        raise error(f"{exc}. {advice.unreachable()}", attempts=exc.attempts, connection=True) from None
