"""Requests with retries done properly, for every HTTP API rewardsmith calls.

:func:`send_with_retries` sends one request (through a
:class:`~rewardsmith.http.transport.HTTPSender`) until it succeeds or fails
for good. Judges and evaluation jobs use it for chat completions
(:func:`rewardsmith.http.chat.post_chat`), the Fireworks integration for its
REST calls. What is retried:

* ``429``, ``408``, ``409``, ``425`` and every ``5xx`` status;
* timeouts (the server accepted the request and never answered) and
  connection errors;
* a ``2xx`` whose body cannot be read (truncated or broken answers).

Waits grow exponentially (``backoff * 2**n``, capped at ``max_backoff``) with
jitter (a random 50-100 % of that), so that many clients do not retry in step.
A ``Retry-After`` header (seconds or an HTTP date) or ``retry-after-ms`` is
honoured: the wait is at least what the server asked for, unless it asks for
more than ``max_wait``, in which case the request fails at once rather than
stalling a training step. Other ``4xx`` statuses (a bad request, a rejected
key, an unknown model) fail at once: retrying cannot fix them.

Error messages quote the server's own message (it usually says what is wrong)
with the API key removed, should a server echo it; so is every answer body
handed on (:func:`redact`): a server that echoes the ``Authorization`` header
must not get the key into a cache, a results file, a report or a log.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import email.utils
import functools
import random
import re
import time
import urllib.parse
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, TypeVar

from rewardsmith.core.errors import RewardsmithError

__all__ = [
    "EndpointRequestError",
    "RetryPolicy",
    "parse_retry_after",
    "redact",
    "redact_response",
    "send_with_retries",
]

RETRY_STATUSES = frozenset({408, 409, 425, 429})

T = TypeVar("T")


class EndpointRequestError(RewardsmithError, RuntimeError):
    """A request failed for good: a status that retrying cannot fix, or every retry used up.

    ``status`` is the last HTTP status (``None`` for timeouts and connection
    errors), ``message`` the server's own error message (key removed).
    """

    def __init__(
        self,
        message: str,
        *,
        attempts: int,
        status: int | None = None,
        connection: bool = False,
        server_message: str = "",
    ) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.status = status
        self.connection = connection
        self.server_message = server_message


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
    """``text`` with the secret replaced by ``***``: as written, in any case, and in the encodings an echo takes.

    Covered: the secret itself, case-insensitively (``Bearer SK-ABC...``), its
    base64 forms (standard and URL-safe, at any alignment, as in a Basic
    authorisation header), its hex form, and its URL-encoded form. Secrets
    shorter than 4 characters are not searched for (they would match everywhere).

    >>> redact("invalid key sk-abc123 given", "sk-abc123")
    'invalid key *** given'
    >>> redact("you sent: Bearer SK-ABC123", "sk-abc123")
    'you sent: Bearer ***'
    >>> import base64
    >>> redact("auth " + base64.b64encode(b"user:sk-abc123456").decode(), "sk-abc123456")
    'auth dXNlcjpz***0NTY='
    """
    if not secret or len(secret) < 4 or not text:
        return text
    return _secret_pattern(secret).sub("***", text)


@functools.lru_cache(maxsize=8)
def _secret_pattern(secret: str) -> re.Pattern[str]:
    raw = secret.encode("utf-8")
    forms = {secret, urllib.parse.quote(secret, safe=""), raw.hex()}
    for shift in range(3):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            encoded = encode(b"\0" * shift + raw).decode("ascii").rstrip("=")
            # the characters that depend on the secret alone: not the group shared with the bytes before it,
            # nor the last group, which depends on the bytes after it
            core = encoded[4 if shift else 0 : len(encoded) - 4]
            if len(core) >= 8:
                forms.add(core)
    alternatives = sorted((f for f in forms if len(f) >= 4), key=len, reverse=True)
    return re.compile("|".join(map(re.escape, alternatives)), re.IGNORECASE)


def redact_response(response: Any, secret: str | None) -> Any:
    """The response with the secret redacted from its body (the same response when the body does not hold it)."""
    if not secret or len(secret) < 4:
        return response
    try:
        text = response.text
    except Exception:  # an undecodable body holds no text to redact
        return response
    cleaned = redact(text, secret)
    if cleaned == text:
        return response
    import httpx

    headers = [(k, v) for k, v in response.headers.items() if k.lower() not in ("content-length", "content-encoding")]
    redacted = httpx.Response(response.status_code, headers=headers, content=cleaned.encode("utf-8"))
    with contextlib.suppress(RuntimeError):  # a response straight from a transport has no request set
        redacted.request = response.request
    return redacted


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


async def send_with_retries(
    acquire: Callable[[], AbstractAsyncContextManager[Any]],
    send: Callable[[Any], Awaitable[Any]],
    read: Callable[[Any, int], T],
    *,
    policy: RetryPolicy,
    timeout: float,
    secret: str | None = None,
    on_retry: Callable[[str], None] | None = None,
    endpoint: str = "the endpoint",
    error: type[EndpointRequestError] = EndpointRequestError,
    retryable: Callable[[int, str], bool] | None = None,
    advice: Callable[[int], str] | None = None,
) -> T:
    """Send one request until it succeeds or fails for good, as the module describes.

    ``send(sender)`` sends it with what ``acquire()`` gives, and returns the
    ``httpx.Response``; ``read(response, attempts)`` turns a 2xx response into
    the result, raising ``ValueError`` (or ``KeyError``/``TypeError``) for a
    malformed body, which is retried. An error status is retried when
    ``retryable(status, server_message)`` says so (default: the statuses the
    module lists); others raise ``error`` at once, with ``advice(status)``
    appended to the message.

    >>> import asyncio, contextlib, httpx
    >>> from rewardsmith.http.testing import LocalChatServer, Reply
    >>> from rewardsmith.http.transport import HTTPSender
    >>> async def ask(url):
    ...     sender = HTTPSender({})
    ...     try:
    ...         return await send_with_retries(
    ...             lambda: contextlib.nullcontext(sender),  # a plain context manager works too
    ...             lambda s: s.request("POST", url, 5.0, json={"messages": []}),
    ...             lambda response, attempts: (response.json()["choices"][0]["message"]["content"], attempts),
    ...             policy=RetryPolicy(backoff=0.01), timeout=5.0)
    ...     finally:
    ...         await sender.aclose()
    >>> with LocalChatServer(lambda request: "hello") as server:
    ...     server.script.append(Reply.error(503))
    ...     asyncio.run(ask(server.base_url + "/chat/completions"))
    ('hello', 2)
    """
    call = _Call(acquire, send, read, timeout, endpoint, error, retryable or _retryable, advice or _advice, secret)
    attempts = 0
    while True:
        attempts += 1
        outcome = await _attempt(call, attempts)
        if not isinstance(outcome, _Failure):
            return outcome.value
        _give_up_if_final(outcome, attempts, policy, call)
        if on_retry is not None:
            on_retry(outcome.problem)
        await asyncio.sleep(policy.wait(attempts, outcome.retry_after))


@dataclass(frozen=True)
class _Call:
    """What one call of :func:`send_with_retries` was told: what it sends, who it talks to, how it judges failures."""

    acquire: Callable[[], AbstractAsyncContextManager[Any]]
    send: Callable[[Any], Awaitable[Any]]
    read: Callable[[Any, int], Any]
    timeout: float
    endpoint: str
    error: type[EndpointRequestError]
    retryable: Callable[[int, str], bool]
    advice: Callable[[int], str]
    secret: str | None


@dataclass(frozen=True)
class _Success:
    value: Any


@dataclass(frozen=True)
class _Failure:
    """One attempt that failed in a way that may be retried."""

    problem: str
    status: int | None = None
    connection: bool = False
    message: str = ""
    retry_after: float | None = None


async def _attempt(call: _Call, attempts: int) -> _Success | _Failure:
    """Send the request once: the result, or what went wrong (raising at once for a failure retries cannot fix)."""
    import httpx

    try:
        async with _entered(call.acquire()) as sender:
            response = await call.send(sender)
    except httpx.TimeoutException:
        return _Failure(f"no answer within request_timeout={call.timeout:g}s")
    except httpx.TransportError as exc:
        problem = redact(f"connection failed ({type(exc).__name__}: {exc})", call.secret)
        return _Failure(problem, connection=isinstance(exc, httpx.ConnectError))
    status = response.status_code
    response = redact_response(response, call.secret)
    if 200 <= status < 300:
        try:
            return _Success(call.read(response, attempts))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            return _Failure(f"malformed answer: {exc}", status=status)
    message = redact(_server_message(response), call.secret)
    problem = f"HTTP {status}" + (f": {message}" if message else "")
    if not call.retryable(status, message):
        raise call.error(
            f"{call.endpoint} refused the request ({problem}); {call.advice(status)}",
            attempts=attempts,
            status=status,
            server_message=message,
        )
    return _Failure(problem, status=status, message=message, retry_after=parse_retry_after(response.headers))


def _give_up_if_final(failure: _Failure, attempts: int, policy: RetryPolicy, call: _Call) -> None:
    """Raise when the retries are spent, or when the server asks for a longer wait than the policy allows."""
    if attempts > policy.max_retries:
        raise call.error(
            f"the request to {call.endpoint} failed after {attempts} attempts; last: {failure.problem}",
            attempts=attempts,
            status=failure.status,
            connection=failure.connection,
            server_message=failure.message,
        )
    if failure.retry_after is not None and failure.retry_after > policy.max_wait:
        raise call.error(
            f"{call.endpoint} asked to retry after {failure.retry_after:g}s, more than "
            f"max_wait={policy.max_wait:g}s ({failure.problem}); raise max_wait or lower requests_per_minute / "
            "max_concurrency",
            attempts=attempts,
            status=failure.status,
            server_message=failure.message,
        )


@contextlib.asynccontextmanager
async def _entered(manager: Any) -> AsyncIterator[Any]:
    """Enter an async context manager, or a plain one."""
    if hasattr(manager, "__aenter__"):
        async with manager as value:
            yield value
    else:
        with manager as value:
            yield value


def _retryable(status: int, message: str) -> bool:
    return status in RETRY_STATUSES or status >= 500


def _advice(status: int) -> str:
    if status in (401, 403):
        return "check the API key in the environment variable named by api_key_env, and that it may use this model"
    if status == 404:
        return "check base_url (it usually ends in /v1) and the model name"
    return "check the settings (model, max_tokens, extra_body) against what this endpoint accepts"
