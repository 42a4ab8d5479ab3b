"""What every LLM judge shares: the endpoint, the manners, the cache, the accounting.

:class:`ChatJudge` is the base of the judges that ask an OpenAI-compatible
chat endpoint (``llm_judge``, ``reference_fidelity``, ``principles``). Per
batch it opens one connection per concurrency slot and scores the samples
concurrently:

* at most ``max_concurrency`` requests in flight, and at most
  ``requests_per_minute`` sent (retries included);
* retries with exponential back-off and jitter on 429, 5xx, timeouts and
  broken answers, honouring ``Retry-After`` (:mod:`rewardsmith.http.retry`);
* a persistent SQLite cache (:mod:`rewardsmith.judges.cache`) and, within a
  batch, one request for identical questions (GRPO samples the same
  completion more than once);
* a sample whose judge fails for good, or answers without a readable
  verdict, is an error of that sample: it scores ``None`` (``on_error``
  decides), is counted in ``<name>/errors`` and logged once per kind;
* token counts, the estimated cost (when prices are set) and cache hits are
  in each sample's metrics (``explain``), in :attr:`ChatJudge.usage`, and
  logged per batch through TRL's ``log_metric``; the judge's reasons go to
  TRL's completions table (``log_extra``) as the column ``<name>_reason``.

The API key is read from the environment variable named by ``api_key_env``
when a batch starts, and held only by that batch's connections: it is not a
setting, so it is never in a repr, a pickle, a config dump or a log line.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
from collections.abc import AsyncIterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from rewardsmith.core.async_reward import AsyncReward
from rewardsmith.core.errors import RewardConfigError, RewardsmithError
from rewardsmith.core.inputs import Batch
from rewardsmith.core.result import Failure, RewardResult
from rewardsmith.http.chat import ChatAnswer, EndpointAdvice, check_chat_endpoint, post_chat
from rewardsmith.http.ratelimit import RateLimiter
from rewardsmith.http.retry import EndpointRequestError, RetryPolicy
from rewardsmith.http.transport import HTTPSender, proxy_for
from rewardsmith.judges.cache import CachedAnswer, JudgeCache, default_cache_path, request_key
from rewardsmith.judges.verdict import Verdict, parse_verdict

__all__ = ["ChatJudge", "JudgeRequestError", "JudgeUsage", "JudgeVerdictError", "Judgement"]

_SESSION: ContextVar[_Session | None] = ContextVar("rewardsmith_judge_session", default=None)


class JudgeVerdictError(RewardsmithError, ValueError):
    """The judge answered, but its answer holds no usable verdict."""


class JudgeRequestError(EndpointRequestError):
    """A judge request failed for good: a status that retrying cannot fix, or every retry used up."""


@dataclass
class JudgeUsage:
    """Counts of what a judge did: HTTP attempts, retries, cache hits, failures, tokens and cost."""

    requests: int = 0
    retries: int = 0
    cache_hits: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0

    def add(self, other: JudgeUsage) -> None:
        """Add another count to this one."""
        for f in dataclasses.fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def as_dict(self) -> dict[str, float]:
        """The counts as a dict."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Judgement:
    """One question answered: the verdict, the raw answer, its tokens, and whether it cost a request."""

    verdict: Verdict
    content: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    cached: bool
    attempts: int
    cost_usd: float | None

    def metrics(self) -> dict[str, float]:
        """Token counts, cost and cache hit as a metrics dict (absent values left out)."""
        out: dict[str, float] = {"cached": float(self.cached), "attempts": float(self.attempts)}
        if self.prompt_tokens is not None:
            out["prompt_tokens"] = float(self.prompt_tokens)
        if self.completion_tokens is not None:
            out["completion_tokens"] = float(self.completion_tokens)
        if self.cost_usd is not None:
            out["cost_usd"] = self.cost_usd
        return out


class _Session:
    """One batch's connections (one per concurrency slot), in-batch deduplication and counts."""

    def __init__(self, judge: ChatJudge, secret: str | None, limiter: RateLimiter | None) -> None:
        self.judge = judge
        self.secret = secret
        self.limiter = limiter
        self.proxy = proxy_for(judge.base_url)
        self.semaphore = asyncio.Semaphore(judge.max_concurrency)
        self.idle: list[HTTPSender] = []
        self.senders: list[HTTPSender] = []
        self.tasks: dict[str, asyncio.Task[ChatAnswer]] = {}
        self.usage = JudgeUsage()
        self.dead: str | None = None
        self.succeeded = False

    def _new_sender(self) -> HTTPSender:
        headers = {"Authorization": f"Bearer {self.secret}"} if self.secret else {}
        sender = HTTPSender(headers, self.proxy)
        self.senders.append(sender)
        return sender

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[HTTPSender]:
        async with self.semaphore:
            if self.limiter is not None:
                await self.limiter.acquire()
            self.usage.requests += 1
            sender = self.idle.pop() if self.idle else self._new_sender()
            try:
                yield sender
            finally:
                self.idle.append(sender)

    def _retried(self, problem: str) -> None:
        self.usage.retries += 1

    async def post(self, body: dict[str, Any]) -> ChatAnswer:
        if self.dead is not None:
            raise JudgeRequestError(self.dead, attempts=0, connection=True)
        judge = self.judge
        try:
            answer = await post_chat(
                self.slot,
                judge.base_url.rstrip("/") + "/chat/completions",
                body,
                policy=judge.retry_policy,
                timeout=judge.request_timeout,
                secret=self.secret,
                on_retry=self._retried,
                endpoint="the judge endpoint",
                error=JudgeRequestError,
            )
        except JudgeRequestError as exc:
            if exc.connection and not self.succeeded and self.dead is None:
                # Nothing in this batch got through: fail the rest at once instead of retrying each.
                self.dead = f"{exc} (check base_url={judge.base_url!r}; is the server running?)"
            raise
        self.succeeded = True
        return answer

    async def ask(self, body: dict[str, Any], key: str) -> tuple[ChatAnswer, bool]:
        """The answer for ``body``; ``True`` if another sample of this batch already asked the same."""
        task = self.tasks.get(key)
        shared = task is not None
        if task is None:
            task = self.tasks[key] = asyncio.ensure_future(self.post(body))
        return await asyncio.shield(task), shared

    async def close(self) -> None:
        pending = [t for t in self.tasks.values() if not t.done()]
        for task in pending:
            task.cancel()
        # retrieve every outcome, so that none is reported as never retrieved
        await asyncio.gather(*self.tasks.values(), return_exceptions=True)
        for sender in self.senders:
            await sender.aclose()


@dataclass(kw_only=True, eq=False)
class ChatJudge(AsyncReward):
    """Base of the judges that ask an OpenAI-compatible chat endpoint; its fields are the shared settings.

    * ``base_url``: the endpoint, up to ``/v1`` (OpenAI, vLLM, SGLang, Ollama, LiteLLM, Together, ...).
    * ``model``: the judge model's name at that endpoint (required).
    * ``api_key_env``: the environment variable holding the API key (``None``: send no key).
    * ``temperature``, ``max_tokens``, ``json_mode`` (ask for a JSON object with
      ``response_format``), ``extra_body`` (more request fields, e.g. ``{"seed": 0}``).
    * ``scale``: the judge's score scale ``(low, high)``; scores are mapped to [0, 1].
    * ``max_concurrency`` (requests in flight), ``requests_per_minute``.
    * ``max_retries``, ``backoff``, ``max_backoff``, ``max_wait`` (longest ``Retry-After`` honoured),
      ``request_timeout`` (seconds per attempt, for the whole exchange: connecting, sending and reading the
      whole answer, so that a server trickling its answer cannot hold a request open).
    * ``cache``: the SQLite file, ``"default"`` (``~/.cache/rewardsmith/judges.sqlite``, or under
      ``$REWARDSMITH_CACHE_DIR``), or ``None`` for no cache.
    * ``input_price``, ``output_price``: USD per million prompt / completion tokens, for the cost estimate.
    """

    score_range = (0.0, 1.0)

    base_url: str = "https://api.openai.com/v1"
    model: str = ""
    api_key_env: str | None = "OPENAI_API_KEY"
    temperature: float = 0.0
    max_tokens: int = 512
    json_mode: bool = False
    extra_body: dict[str, Any] = field(default_factory=dict)
    scale: tuple[float, float] = (1, 10)
    requests_per_minute: float | None = None
    max_retries: int = 4
    backoff: float = 0.5
    max_backoff: float = 20.0
    max_wait: float = 60.0
    request_timeout: float = 60.0
    cache: str | None = "default"
    input_price: float | None = None
    output_price: float | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if isinstance(self.scale, list):
            self.scale = tuple(self.scale)  # type: ignore[assignment]
        name = self.name
        if (
            not isinstance(self.scale, tuple)
            or len(self.scale) != 2
            or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in self.scale)
            or not self.scale[0] < self.scale[1]
        ):
            raise RewardConfigError(f"reward {name!r}: scale must be (low, high) with low < high, got {self.scale!r}")
        if not isinstance(self.base_url, str) or not self.base_url.startswith(("http://", "https://")):
            raise RewardConfigError(
                f"reward {name!r}: base_url must be an http(s) URL up to /v1, like 'http://localhost:8000/v1', "
                f"got {self.base_url!r}"
            )
        for setting in ("backoff", "max_backoff", "max_wait", "request_timeout"):
            value = getattr(self, setting)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise RewardConfigError(f"reward {name!r}: {setting} must be a positive number, got {value!r}")
        if isinstance(self.max_retries, bool) or not isinstance(self.max_retries, int) or self.max_retries < 0:
            raise RewardConfigError(f"reward {name!r}: max_retries must be a whole number >= 0")
        if self.requests_per_minute is not None and not self.requests_per_minute > 0:
            raise RewardConfigError(f"reward {name!r}: requests_per_minute must be positive or None")
        if not isinstance(self.extra_body, dict):
            raise RewardConfigError(f"reward {name!r}: extra_body must be a dict of request fields")

    # -- state that lives in this process only --------------------------------------------------------

    def _state(self) -> dict[str, Any]:
        state = self.__dict__.get("_judge")
        if state is None:
            state = self.__dict__["_judge"] = {"usage": JudgeUsage(), "templates": {}}
            if self.requests_per_minute:
                state["limiter"] = RateLimiter(self.requests_per_minute)
            if self.cache:
                path = default_cache_path() if self.cache == "default" else self.cache
                state["cache"] = JudgeCache(path)
        return state

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state.pop("_judge", None)
        return state

    @property
    def usage(self) -> JudgeUsage:
        """What this judge has done so far in this process: requests, retries, cache hits, tokens, cost."""
        return self._state()["usage"]

    @property
    def retry_policy(self) -> RetryPolicy:
        """The retry settings as a :class:`~rewardsmith.http.retry.RetryPolicy`."""
        return RetryPolicy(self.max_retries, self.backoff, self.max_backoff, self.max_wait)

    def template_for(self, source: str, what: str) -> Any:
        """The compiled Jinja template of ``source`` (compiled once per judge; ``what`` names it in errors)."""
        from rewardsmith.judges.templates import compile_template

        templates = self._state()["templates"]
        if source not in templates:
            templates[source] = compile_template(source, what)
        return templates[source]

    # -- asking ---------------------------------------------------------------------------------------

    def check_ready(self) -> str | None:
        """Raise a clear error for what would make every request fail; return the API key (or ``None``)."""
        if not isinstance(self.model, str) or not self.model.strip():
            raise RewardConfigError(
                f"reward {self.name!r}: set model= to the judge model's name at {self.base_url} "
                "(for example 'gpt-4o-mini' on OpenAI, or the model name a vLLM server was started with)"
            )
        if not self.api_key_env:
            return None
        key = os.environ.get(self.api_key_env, "").strip()
        if not key:
            raise RewardConfigError(
                f"reward {self.name!r} reads the judge's API key from the environment variable "
                f"{self.api_key_env}, which is not set. Export it (export {self.api_key_env}=...), set "
                "api_key_env to the variable that holds your key, or api_key_env=None for a server that needs none."
            )
        return key

    def request_body(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        """The JSON body of the chat request for ``messages``."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        if self.json_mode:
            body["response_format"] = {"type": "json_object"}
        body.update(self.extra_body)
        return body

    @property
    def _priced(self) -> bool:
        return self.input_price is not None and self.output_price is not None

    def _cost(self, prompt_tokens: int | None, completion_tokens: int | None) -> float | None:
        """The estimated cost of one request in USD (``None`` without prices or token counts)."""
        if not self._priced:
            return None
        if prompt_tokens is None or completion_tokens is None:
            return None
        return (prompt_tokens * self.input_price + completion_tokens * self.output_price) / 1e6

    async def judge(self, messages: list[dict[str, str]], quoted: Sequence[str] = ()) -> Judgement:
        """Ask the judge ``messages`` (from the cache when it was asked before) and read the verdict.

        ``quoted``: the texts in the request that a policy wrote (the completion, as written and as sent): a
        verdict copied from them is not the judge's (:func:`~rewardsmith.judges.verdict.parse_verdict`).

        Call it while a batch is being scored (from ``score``); raises
        :class:`~rewardsmith.judges.base.JudgeRequestError` when the request fails for good.
        """
        session = _SESSION.get()
        if session is None:
            raise RuntimeError("judge() runs inside a scoring call; score a batch with the reward instead")
        body = self.request_body(messages)
        key = request_key(self.base_url, body)
        cache: JudgeCache | None = self._state().get("cache")
        stored = cache.get(key) if cache is not None else None
        if stored is not None:
            session.usage.cache_hits += 1
            verdict = await _read_verdict(stored.content, self.scale, quoted)
            cost = 0.0 if self._priced else None  # it costs nothing now
            return Judgement(verdict, stored.content, stored.prompt_tokens, stored.completion_tokens, True, 0, cost)
        try:
            answer, shared = await session.ask(body, key)
        except JudgeRequestError:
            session.usage.failures += 1
            raise
        verdict = await _read_verdict(answer.content, self.scale, quoted)
        if shared:
            session.usage.cache_hits += 1
            cost = 0.0 if self._priced else None
            attempts = 0
        else:
            cost = self._cost(answer.prompt_tokens, answer.completion_tokens)
            session.usage.prompt_tokens += answer.prompt_tokens or 0
            session.usage.completion_tokens += answer.completion_tokens or 0
            session.usage.cost_usd += cost or 0.0
            attempts = answer.attempts
            if verdict.score is not None and cache is not None and answer.content is not None:
                cache.put(key, self.model, CachedAnswer(answer.content, answer.prompt_tokens, answer.completion_tokens))
        return Judgement(
            verdict, answer.content, answer.prompt_tokens, answer.completion_tokens, shared, attempts, cost
        )

    @staticmethod
    def require_verdict(judgement: Judgement, what: str = "the judge") -> float:
        """The judgement's score; :class:`JudgeVerdictError` (the sample scores ``None``) when there is none."""
        if judgement.verdict.score is None:
            snippet = (judgement.content or "")[:200]
            raise JudgeVerdictError(f"{what} gave no usable verdict: {judgement.verdict.problem}. Answer: {snippet!r}")
        return judgement.verdict.score

    def check_endpoint(self) -> str:
        """Send one small real request to the judge endpoint: what answered, or an error saying what to fix.

        For checking a setup before a run (``rewardsmith train --check-endpoints``).
        Raises :class:`~rewardsmith.core.errors.RewardConfigError` when no request can be
        sent (no model, the key's variable unset) and :class:`JudgeRequestError` when the
        request fails (no server, a rejected key, an unknown model).

        >>> from rewardsmith.http.testing import LocalChatServer
        >>> from rewardsmith.judges import LLMJudge
        >>> with LocalChatServer(lambda request: "OK") as server:
        ...     judge = LLMJudge(base_url=server.base_url, model="judge", api_key_env=None, cache=None)
        ...     print(judge.check_endpoint().replace(server.base_url, "URL"))
        model 'judge' at URL answered
        """
        secret = self.check_ready()
        body = {**self.request_body([{"role": "user", "content": "Reply with OK."}]), "max_tokens": 1}
        advice = EndpointAdvice(self.base_url, self.model, self.api_key_env)
        timeout = min(self.request_timeout, 30.0)
        check_chat_endpoint(self.base_url, body, advice, secret=secret, timeout=timeout, error=JudgeRequestError)
        return f"model {self.model!r} at {self.base_url} answered"

    # -- batches --------------------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _session(self, secret: str | None) -> AsyncIterator[_Session]:
        session = _Session(self, secret, self._state().get("limiter"))
        token = _SESSION.set(session)
        try:
            yield session
        finally:
            _SESSION.reset(token)
            await session.close()
            self.usage.add(session.usage)

    async def ascore_batch(self, batch: Batch) -> Sequence[Any]:
        secret = self.check_ready()
        rows = self.injection.rows(batch)
        if rows:
            self.preflight(rows[0])
        cache = self._state().get("cache")
        if cache is not None:
            cache.open()
        async with self._session(secret) as session:
            results = await self.arun_samples(rows)
        self._log_batch(batch, session.usage, results)
        return results

    def preflight(self, row: dict[str, Any]) -> None:
        """Build the first sample's request before any is sent, so that a broken template is a config error."""

    def batch_metrics(self, results: Sequence[Any]) -> dict[str, float]:
        """Extra per-batch metrics to log (subclasses add theirs)."""
        return {}

    def _log_batch(self, batch: Batch, usage: JudgeUsage, results: Sequence[Any]) -> None:
        name = self.name
        log_extra = batch.extras.get("log_extra")
        if callable(log_extra):  # the judge's reasons, as a column of TRL's completions table
            log_extra(f"{name}_reason", [_reason_text(r) for r in results])
        log = batch.log_metric
        if log is None:
            return
        log(f"{name}/requests", float(usage.requests))
        log(f"{name}/retries", float(usage.retries))
        log(f"{name}/cache_hits", float(usage.cache_hits))
        log(f"{name}/prompt_tokens", float(usage.prompt_tokens))
        log(f"{name}/completion_tokens", float(usage.completion_tokens))
        if self._priced:
            log(f"{name}/cost_usd", usage.cost_usd)
        for key, value in self.batch_metrics(results).items():
            log(f"{name}/{key}", value)


#: Answers longer than this are read on a worker thread, so that the event loop (other requests, timeouts) runs on.
_LONG_ANSWER = 64_000


async def _read_verdict(content: str | None, scale: tuple[float, float], quoted: Sequence[str] = ()) -> Verdict:
    """The verdict in an answer; a long answer is read off the event loop (reading is linear, but not free)."""
    if content is not None and len(content) + sum(map(len, quoted)) > _LONG_ANSWER:
        return await asyncio.to_thread(parse_verdict, content, scale, quoted)
    return parse_verdict(content, scale, quoted)


def _reason_text(result: Any) -> str:
    if isinstance(result, Failure):
        return f"{result.kind}: {result.message}"
    return result.reason if isinstance(result, RewardResult) else ""


def mean_metric(results: Sequence[Any], key: str) -> float | None:
    """The mean of ``metrics[key]`` over the results that have it (failures skipped)."""
    values = [
        r.metrics[key]
        for r in results
        if isinstance(r, RewardResult) and not isinstance(r, Failure) and r.metrics.get(key) is not None
    ]
    return sum(values) / len(values) if values else None
