"""``remote(url)``: a reward scored by a ``rewardsmith serve`` server, usable in TRL like any reward.

The batch TRL passes is cut into chunks of ``batch_size`` samples, sent to
``POST {url}/score`` at most ``max_concurrency`` at a time, each over its own
keep-alive connection of the one HTTP client (:mod:`rewardsmith.http`):
retries with back-off for timeouts, connection errors, ``429``/``503`` and
other ``5xx`` (``Retry-After`` honoured), ``request_timeout`` per attempt.
A chunk that fails for good (a ``4xx``, or every retry used) gives a failure
per sample: ``None`` under the default ``on_error``, counted in
``<name>/errors`` and logged once per kind, never an exception in training.
A score that is not a finite number (``Infinity``, ``1e400``, text) is a
failure of its sample the same way: one infinite score would make a whole
GRPO group's advantages NaN.

With ``reward=NAME``, the first call asks the server's ``/health`` which rewards
it serves and raises :class:`~rewardsmith.core.errors.RewardConfigError`
naming them when ``NAME`` is not one (it used to score ``None`` silently).

What is sent: the prompts, the completions (strings or messages) and every
dataset column whose values JSON can carry (others as text). What comes back
is the server's weighted score, or with ``reward=NAME`` the score of one
served reward, with its reason.

>>> r = remote("http://127.0.0.1:8000", reward="gsm8k_accuracy")
>>> r.name, r.endpoint
('gsm8k_accuracy', 'http://127.0.0.1:8000/score')
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

from rewardsmith.core.async_reward import AsyncReward
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.inputs import Batch
from rewardsmith.core.registry import register_reward
from rewardsmith.core.result import Failure, RewardResult
from rewardsmith.http import EndpointRequestError, HTTPSender, RetryPolicy, proxy_for, redact, send_with_retries

__all__ = ["RemoteReward", "RemoteRewardError", "remote"]


class RemoteRewardError(EndpointRequestError):
    """A batch the reward server could not score, for good (its message says why)."""


def _jsonable(value: Any) -> Any:
    """``value`` as JSON can carry it: containers kept, non-finite floats as ``None``, anything else as text."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    item = getattr(value, "item", None)  # numpy / torch scalars
    if callable(item):
        with contextlib.suppress(Exception):
            return _jsonable(item())
    tolist = getattr(value, "tolist", None)
    if callable(tolist):
        with contextlib.suppress(Exception):
            return _jsonable(tolist())
    return str(value)


@register_reward("remote")
@dataclass(kw_only=True, eq=False)
class RemoteReward(AsyncReward):
    """Scores from a ``rewardsmith serve`` server at ``url`` (see the module docs).

    Settings: ``url`` (the server, with or without ``/score``), ``reward``
    (one served reward's score instead of the weighted score), ``batch_size``
    (samples per request), ``max_concurrency`` (requests at once),
    ``request_timeout`` (seconds per attempt), ``max_retries``, ``token_env``
    (environment variable holding the server's bearer token).

    >>> RemoteReward(url="http://127.0.0.1:8000/score").endpoint
    'http://127.0.0.1:8000/score'
    """

    url: str = ""
    reward: str | None = None
    batch_size: int = 64
    max_concurrency: int = 8
    request_timeout: float = 120.0
    max_retries: int = 4
    token_env: str | None = None

    default_name = "remote"

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.url, str) or not self.url.startswith(("http://", "https://")):
            raise RewardConfigError(
                f"reward {self.name!r}: url must be the http(s) address of a rewardsmith serve server, got {self.url!r}"
            )
        if isinstance(self.batch_size, bool) or not isinstance(self.batch_size, int) or self.batch_size < 1:
            raise RewardConfigError(f"reward {self.name!r}: batch_size must be a whole number >= 1")
        if not isinstance(self.request_timeout, (int, float)) or not self.request_timeout > 0:
            raise RewardConfigError(f"reward {self.name!r}: request_timeout must be a number of seconds > 0")
        if self.token_env is not None and not isinstance(self.token_env, str):
            raise RewardConfigError(f"reward {self.name!r}: token_env names an environment variable")

    @property
    def name(self) -> str:
        return self.__dict__.get("_name") or self.reward or "remote"

    @property
    def endpoint(self) -> str:
        """The URL batches are posted to."""
        base = self.url.rstrip("/")
        return base if base.endswith("/score") else base + "/score"

    def _token(self) -> str | None:
        if self.token_env is None:
            return None
        token = os.environ.get(self.token_env)
        if not token:
            raise RewardConfigError(
                f"reward {self.name!r}: the environment variable {self.token_env!r} (token_env) is not set"
            )
        return token

    async def ascore_batch(self, batch: Batch) -> Sequence[Any]:
        token = self._token()
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        proxy = proxy_for(self.endpoint)
        idle: list[HTTPSender] = []
        made: list[HTTPSender] = []
        semaphore = asyncio.Semaphore(self.max_concurrency)

        @contextlib.asynccontextmanager
        async def slot() -> AsyncIterator[HTTPSender]:
            async with semaphore:
                sender = idle.pop() if idle else HTTPSender(headers, proxy)
                if sender not in made:
                    made.append(sender)
                try:
                    yield sender
                finally:
                    idle.append(sender)

        starts = range(0, len(batch), self.batch_size)
        try:
            if self.reward is not None and not self.__dict__.get("_served_checked"):
                async with slot() as sender:
                    await self._check_served(sender)
            parts = await asyncio.gather(
                *(self._post(slot, batch, list(range(s, min(s + self.batch_size, len(batch)))), token) for s in starts)
            )
        finally:
            await asyncio.gather(*(s.aclose() for s in made), return_exceptions=True)
        return [value for part in parts for value in part]

    async def _check_served(self, sender: HTTPSender) -> None:
        """Refuse, on the first call, a ``reward`` the server does not serve (its ``/health`` lists them).

        A server that cannot be asked now is asked again on the next call; the batch's own requests retry.
        """
        health = self.endpoint.removesuffix("/score") + "/health"
        try:
            response = await sender.request("GET", health, min(self.request_timeout, 30.0))
            served = response.json().get("rewards") if response.status_code == 200 else None
        except Exception:  # unreachable now: the scoring requests retry and count their failures
            return
        if not isinstance(served, list):
            return
        self.__dict__["_served_checked"] = True
        if self.reward not in served:
            raise RewardConfigError(
                f"reward {self.name!r}: the server at {self.url} does not serve {self.reward!r}; it serves "
                f"{', '.join(map(str, served))} (set reward= to one of them, or leave it out for the weighted score)"
            )

    def _body(self, batch: Batch, rows: list[int]) -> dict[str, Any]:
        body: dict[str, Any] = {"completions": _jsonable([batch.completions[i] for i in rows])}
        if self.reward is not None:
            body["rewards"] = [self.reward]
        if batch.prompts is not None:
            body["prompts"] = _jsonable([batch.prompts[i] for i in rows])
        body["columns"] = {
            name: _jsonable([values[i] for i in rows])
            for name, values in batch.raw_columns.items()
            if len(values) == len(batch)
        }
        return body

    async def _post(self, slot: Any, batch: Batch, rows: list[int], token: str | None) -> list[Any]:
        endpoint = self.endpoint

        def read(response: Any, attempts: int) -> list[Any]:
            answer = response.json()
            if self.reward is None:
                scores = answer["scores"]
                reasons = [""] * len(rows)
            else:
                if self.reward not in answer["rewards"]:
                    raise RemoteRewardError(
                        f"the server at {endpoint} serves {sorted(answer['rewards'])}, not {self.reward!r}",
                        attempts=attempts,
                    )
                scores = answer["rewards"][self.reward]
                reasons = answer.get("reasons", {}).get(self.reward) or [""] * len(rows)
            if not isinstance(scores, list) or len(scores) != len(rows):
                raise ValueError(f"expected {len(rows)} scores, got {scores!r:.200}")
            return [_result(s, redact(str(why), token)) for s, why in zip(scores, reasons)]

        try:
            return await send_with_retries(
                slot,
                lambda sender: sender.request("POST", endpoint, self.request_timeout, json=self._body(batch, rows)),
                read,
                policy=RetryPolicy(max_retries=self.max_retries),
                timeout=self.request_timeout,
                secret=token,
                endpoint=f"the reward server {endpoint}",
                error=RemoteRewardError,
                advice=_advice,
            )
        except RemoteRewardError as exc:
            failure = Failure("error", str(exc), "RemoteRewardError")
            return [failure] * len(rows)

    def to_result(self, raw: Any) -> RewardResult:
        return raw if isinstance(raw, RewardResult) else super().to_result(raw)


def _result(score: Any, reason: str) -> Any:
    """One score the server sent: ``None``, or a finite number; anything else (``Infinity``, ``1e400``, text) is
    a failure of that sample, counted, since one infinite score makes a whole GRPO group's advantages NaN.

    >>> _result(0.5, "ok").score, _result(None, "n/a").score
    (0.5, None)
    >>> _result(float("inf"), "").message
    'the server sent a score that is not a finite number: inf'
    """
    if score is None:
        return RewardResult(None, reason)
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
        return Failure("error", f"the server sent a score that is not a finite number: {score!r:.80}", "ValueError")
    return RewardResult(float(score), reason)


def _advice(status: int) -> str:
    if status == 401:
        return "set token_env to the environment variable holding the server's --token"
    if status == 413:
        return "lower batch_size, or raise the server's --max-body-mb"
    return "the server's message says what it needs (rewardsmith serve's /health lists the columns)"


def remote(url: str, reward: str | None = None, **settings: Any) -> RemoteReward:
    """A reward scored by the ``rewardsmith serve`` server at ``url`` (see the module docs for the settings).

    >>> r = remote("http://127.0.0.1:8000", batch_size=32, max_concurrency=4)
    >>> r.name, r.batch_size, r.max_concurrency
    ('remote', 32, 4)
    """
    return RemoteReward(url=url, reward=reward, **settings)
