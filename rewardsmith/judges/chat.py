"""One chat-completions request to an OpenAI-compatible endpoint, with retries done properly.

:func:`post_chat` sends ``POST {base_url}/chat/completions`` (through a
:class:`~rewardsmith.judges.transport.ChatSender`) and retries what is worth
retrying:

* ``429``, ``408``, ``409``, ``425`` and every ``5xx`` status;
* timeouts (the server accepted the request and never answered) and
  connection errors;
* a ``200`` whose body is not the JSON of a chat completion (truncated or
  broken answers).

Waits grow exponentially (``backoff * 2**n``, capped at ``max_backoff``) with
jitter (a random 50-100 % of that), so that many clients do not retry in step.
A ``Retry-After`` header (seconds or an HTTP date) or ``retry-after-ms`` is
honoured: the wait is at least what the server asked for, unless it asks for
more than ``max_wait``, in which case the request fails at once rather than
stalling a training step. Other ``4xx`` statuses (a bad request, a rejected
key, an unknown model) fail at once: retrying cannot fix them.

Error messages quote the server's own message (it usually says what is wrong)
with the API key removed, should a server echo it.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ChatAnswer",
    "JudgeRequestError",
    "RetryPolicy",
    "parse_retry_after",
    "post_chat",
    "redact",
]

RETRY_STATUSES = frozenset({408, 409, 425, 429})


class JudgeRequestError(RuntimeError):
    """A judge request failed for good: a status that retrying cannot fix, or every retry used up."""

    def __init__(self, message: str, *, attempts: int, status: int | None = None, connection: bool = False) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.status = status
        self.connection = connection


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry.

    >>> policy = RetryPolicy(backoff=1.0, max_backoff=5.0)
    >>> [round(policy.backoff_cap(n), 1) for n in range(1, 6)]
    [1.0, 2.0, 4.0, 5.0, 5.0]
    >>> 0.5 <= policy.wait(1, None) <= 1.0
    True
    >>> 3.0 <= policy.wait(1, retry_after=3.0) <= 3.3
    True
    """

    max_retries: int = 4
    backoff: float = 0.5
    max_backoff: float = 20.0
    max_wait: float = 60.0

    def backoff_cap(self, retry: int) -> float:
        """The longest exponential wait before retry number ``retry`` (1-based)."""
        return min(self.max_backoff, self.backoff * 2 ** (retry - 1))

    def wait(self, retry: int, retry_after: float | None, rng: random.Random | None = None) -> float:
        """Seconds to wait before retry number ``retry``: jittered back-off, or what the server asked for."""
        draw = (rng or random).random()
        if retry_after is not None:
            return retry_after * (1.0 + 0.1 * draw)
        return self.backoff_cap(retry) * (0.5 + 0.5 * draw)


@dataclass(frozen=True)
class ChatAnswer:
    """The assistant's text and the token counts the server reported (``None`` when it reports none)."""

    content: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    attempts: int


def parse_retry_after(headers: Any, now: float | None = None) -> float | None:
    """Seconds the server asks us to wait: ``retry-after-ms``, or ``Retry-After`` in seconds or as an HTTP date.

    >>> parse_retry_after({"Retry-After": "2"}), parse_retry_after({"retry-after-ms": "250"})
    (2.0, 0.25)
    >>> parse_retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:05 GMT"}, now=1445412480.0)
    5.0
    >>> parse_retry_after({}) is None, parse_retry_after({"Retry-After": "soon"}) is None
    (True, True)
    """
    lowered = {str(k).lower(): str(v) for k, v in dict(headers).items()}
    millis = lowered.get("retry-after-ms")
    if millis is not None:
        try:
            value = float(millis) / 1000.0
            if value >= 0:
                return value
        except ValueError:
            pass
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    try:
        value = float(raw)
        return value if value >= 0 else None
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def redact(text: str, secret: str | None) -> str:
    """``text`` with every occurrence of ``secret`` replaced by ``***``.

    >>> redact("invalid key sk-abc123 given", "sk-abc123")
    'invalid key *** given'
    """
    if secret and len(secret) >= 4:
        return text.replace(secret, "***")
    return text


def _server_message(response: Any) -> str:
    """The error message in an error response's body (OpenAI's ``{"error": {"message": ...}}`` or plain text)."""
    try:
        payload = response.json()
    except ValueError:
        payload = None
    if isinstance(payload, dict):
        error = payload.get("error", payload)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"][:300]
        if isinstance(error, str):
            return error[:300]
    return response.text[:300].strip()


def _read_answer(response: Any, attempts: int) -> ChatAnswer:
    """The answer in a 200 response; ``ValueError`` if the body is not a chat completion."""
    payload = json.loads(response.content)
    if not isinstance(payload, dict) or not isinstance(payload.get("choices"), list) or not payload["choices"]:
        raise ValueError("the body has no 'choices'")
    message = payload["choices"][0].get("message") if isinstance(payload["choices"][0], dict) else None
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
) -> ChatAnswer:
    """Send one chat request, retrying as the module describes.

    ``acquire()`` is entered for every attempt and gives what sends it (anything
    with ``await post(url, json=..., timeout=...)`` returning an ``httpx.Response``
    with its body read: a :class:`~rewardsmith.judges.transport.ChatSender` or an
    ``httpx.AsyncClient``). Concurrency slots and rate limiting go there; the slot
    is held for the attempt only, not for the waits between attempts.
    ``on_retry(reason)`` is called before every retry. Raises
    :class:`JudgeRequestError` when the request fails for good.
    """
    import httpx

    attempts = 0
    while True:
        attempts += 1
        retry_after: float | None = None
        try:
            async with acquire() as sender:
                response = await sender.post(url, json=body, timeout=timeout)
        except httpx.TimeoutException:
            problem, status, connection = f"no answer within request_timeout={timeout:g}s", None, False
        except httpx.TransportError as exc:
            problem = redact(f"connection failed ({type(exc).__name__}: {exc})", secret)
            status, connection = None, isinstance(exc, httpx.ConnectError)
        else:
            status, connection = response.status_code, False
            if status == 200:
                try:
                    return _read_answer(response, attempts)
                except (ValueError, KeyError, TypeError, AttributeError) as exc:
                    problem = f"malformed answer: {exc}"
            else:
                message = redact(_server_message(response), secret)
                problem = f"HTTP {status}" + (f": {message}" if message else "")
                if status not in RETRY_STATUSES and status < 500:
                    raise JudgeRequestError(
                        f"the judge endpoint refused the request ({problem}); {_advice(status)}",
                        attempts=attempts,
                        status=status,
                    )
                retry_after = parse_retry_after(response.headers)
        if attempts > policy.max_retries:
            raise JudgeRequestError(
                f"the judge request failed after {attempts} attempts; last: {problem}",
                attempts=attempts,
                status=status,
                connection=connection,
            )
        if retry_after is not None and retry_after > policy.max_wait:
            raise JudgeRequestError(
                f"the judge endpoint asked to retry after {retry_after:g}s, more than max_wait={policy.max_wait:g}s "
                f"({problem}); raise max_wait or lower requests_per_minute / max_concurrency",
                attempts=attempts,
                status=status,
            )
        if on_retry is not None:
            on_retry(problem)
        await asyncio.sleep(policy.wait(attempts, retry_after))


def _advice(status: int) -> str:
    if status in (401, 403):
        return "check the API key in the environment variable named by api_key_env, and that it may use this model"
    if status == 404:
        return "check base_url (it usually ends in /v1) and the model name"
    return "check the judge's settings (model, max_tokens, extra_body) against what this endpoint accepts"
