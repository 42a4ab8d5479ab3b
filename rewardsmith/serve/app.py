"""The reward server's HTTP API: an ASGI application on Starlette.

Endpoints (every answer is JSON, errors included):

* ``GET /health``: ``{"status": "ok", "rewards": [...], "columns": {...}, "in_flight": n}``;
* ``GET /metrics``: requests, samples, latency, failures and queue depth in Prometheus' text format
  (:mod:`rewardsmith.serve.metrics`);
* ``POST /score``: ``{"prompts": [...] (optional), "completions": [...], "columns": {"answer": [...]},
  "rewards": [names] (optional: score only these)}`` gives ``{"scores": [...], "rewards": {name: [...]},
  "reasons": {...}, "metrics": {...}, "errors": {...}}``:
  ``scores`` is the weighted sum of the rewards that apply (TRL's rule), ``null`` where none applies;
* ``POST /get_reward``: OpenRLHF's remote reward protocol. OpenRLHF sends
  ``{"query": [...], "prompts": [...], "labels": [...]}`` (``query`` is prompt
  plus response, ``labels`` the dataset's ``--data.label_key`` values) and reads
  ``rewards``, ``scores`` and ``extra_logs`` (per-sample lists). How queries and
  labels become completions and columns: :mod:`rewardsmith.integrations.openrlhf`
  (the column of plain labels is ``label_column``; a sample no reward applies to
  scores ``none_score``, as OpenRLHF needs a number).

Errors: ``400`` for a body that is not JSON, JSON nested too deeply, a batch
with the wrong shape or a reserved column name (the message says what to
send), ``401`` without the bearer token when one is set, ``408`` for a body
that does not arrive within ``body_timeout``, ``413`` for a body over
``max_body_bytes``, a batch over ``max_samples`` or a string over
``max_text_bytes``, ``503`` (with
``Retry-After``) when ``max_queue`` batches already wait or the bodies held
reach ``max_pending_bytes``, ``500`` only for a bug, with a one-line message
and no traceback (it goes to the server's log).
At most ``max_concurrency`` batches are scored at once; the rest wait in turn.

>>> from rewardsmith.serve.service import RewardService
>>> from starlette.testclient import TestClient
>>> app = create_app(RewardService.from_spec("think_format"))
>>> with TestClient(app) as client:
...     client.post("/score", json={"completions": ["<think>a</think><answer>1</answer>"]}).json()["scores"]
[1.0]
"""

from __future__ import annotations

import asyncio
import gc
import hmac
import logging
import sys
import threading
import time
from dataclasses import dataclass
from functools import partial
from typing import Any

from rewardsmith.core.errors import RewardConfigError, RewardsmithError
from rewardsmith.core.extras import require_extra
from rewardsmith.core.tool_calls import text_parts
from rewardsmith.integrations.named import NamedScores
from rewardsmith.integrations.openrlhf import label_columns, openrlhf_answer, response_of
from rewardsmith.serve.answer import echo_object, encode_chunks
from rewardsmith.serve.body import (
    BodyError,
    Document,
    TooLongText,
    TooManyEntries,
    TooManyValues,
    depth_over,
    read_document,
    texts_over,
)
from rewardsmith.serve.freeing import dismantle
from rewardsmith.serve.metrics import ServerMetrics
from rewardsmith.serve.nemo_gym import VERIFY_SINKS, verify_fields, verify_request
from rewardsmith.serve.service import RewardService

__all__ = ["ServerSettings", "create_app"]

logger = logging.getLogger("rewardsmith.serve")


@dataclass(frozen=True)
class ServerSettings:
    """Limits and options of the server (``rewardsmith serve`` flags).

    Memory is bounded by bytes and by samples: one request's body by ``max_body_bytes`` and its batch by
    ``max_samples`` (413 above: a few bytes per empty completion would otherwise cost the server a hundred times
    more), and the bodies held at once (read, waiting and being scored) by ``max_pending_bytes`` (503 with
    ``Retry-After`` above). One string of a body (a completion, a message's text, a key) takes at most
    ``max_text_bytes`` bytes of UTF-8 (413 above, refused before the string is built): joining a string of
    tens of MB, and a reward's regular expression over it, each hold the GIL, and ``/health`` would wait
    (1 MiB is twice a completion of 128k tokens, about 0.5 MB). A body must arrive within
    ``body_timeout`` seconds (408), request headers within
    ``header_timeout`` and at most ``max_connections`` connections are open (:mod:`rewardsmith.serve.guard`);
    JSON nested deeper than ``max_depth`` is refused (400).
    """

    max_concurrency: int = 4
    max_queue: int = 64
    max_body_bytes: int = 64 * 1024 * 1024
    token: str | None = None
    label_column: str = "answer"
    none_score: float = 0.0
    max_samples: int = 8192
    max_pending_bytes: int = 256 * 1024 * 1024
    body_timeout: float = 60.0
    header_timeout: float = 10.0
    max_connections: int = 256
    max_depth: int = 64
    max_text_bytes: int = 1024 * 1024


class _HTTPError(RewardsmithError):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def _error_response(status: int, message: str, headers: dict[str, str] | None = None) -> Any:
    from starlette.responses import JSONResponse

    return JSONResponse({"error": {"message": message, "status": status}}, status_code=status, headers=headers)


class _Budget:
    """The bytes of request bodies the server holds at once, bounded: a request over the budget waits no queue."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held = 0

    def take(self, n: int) -> None:
        if self.held + n > self.limit:
            raise _HTTPError(
                503, "the server holds as many request bytes as it may; retry shortly", {"Retry-After": "1"}
            )
        self.held += n

    def give(self, n: int) -> None:
        self.held -= n


@dataclass
class _Held:
    """What one request holds while it is served: bytes counted in the server's budget, whether the body is big
    (:class:`_BigBodies`), and its parsed document."""

    bytes: int = 0
    big: bool = False
    document: Document | None = None


async def _read_body(request: Any, settings: ServerSettings, budget: _Budget, taken: _Held) -> bytearray:
    """The body, within the size limit, the server's byte budget (``taken.bytes``: bytes counted) and the time
    limit."""
    limit = settings.max_body_bytes
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _HTTPError(413, f"the body has {int(declared):,} bytes, over the server's limit of {limit:,}")
    received = bytearray()
    try:
        async with asyncio.timeout(settings.body_timeout):
            async for chunk in request.stream():
                budget.take(len(chunk))
                taken.bytes += len(chunk)
                if taken.bytes > limit:
                    raise _HTTPError(
                        413, f"the body is over the server's limit of {limit:,} bytes; send smaller batches"
                    )
                received += chunk
    except TimeoutError:
        raise _HTTPError(408, f"the body did not arrive within {settings.body_timeout:g} s; send it at once") from None
    return received


#: The lists of each endpoint's body that hold one entry per sample (bounded by ``max_samples`` as they are read).
_PER_SAMPLE = {
    "/score": {("completions",), ("prompts",), ("columns", "*")},
    "/get_reward": {("query",), ("prompts",), ("labels",)},
}


def _parse_json(held: list[bytearray], settings: ServerSettings, endpoint: str) -> Document:
    """The body's JSON, read in bounded steps (:mod:`rewardsmith.serve.body`; run it off the event loop).

    ``held`` holds the only reference to the bytes: the document keeps them for ``/verify`` (its answer echoes
    them); for the other routes they are freed here, on the thread, once read.
    """
    lists = _PER_SAMPLE.get(endpoint, set())
    max_depth, max_samples, max_text = settings.max_depth, settings.max_samples, settings.max_text_bytes

    def limit_for(path: tuple[str, ...]) -> int | None:
        if path in lists or (len(path) == 2 and (path[0], "*") in lists):
            return max_samples
        return None

    sinks = None
    if endpoint == "/verify":  # (a message's text parts are joined as it is read: their sum is bounded too)
        sinks = {path: partial(sink, max_text=max_text, path=path) for path, sink in VERIFY_SINKS.items()}
    document = error = None
    try:
        document = read_document(held.pop(), limit_for, max_depth, sinks, max_text)
        if endpoint == "/score":
            _check_messages(document.value, max_text)
        if depth_over(document.value, max_depth):
            raise RecursionError
    except (RecursionError, RewardsmithError) as exc:
        error = _refusal(exc, settings)
        if document is not None:  # freed here, a part at a time, not with the error on the event loop
            dismantle(document.value)
            document = None
    if error is not None:
        raise error  # (outside the handler: the error holds no reference to the reader's frames)
    if endpoint != "/verify":
        document.raw = b""
    return document


def _refusal(exc: BaseException, settings: ServerSettings) -> _HTTPError:
    """The answer to a body the reader refused: 413 for what is over a limit, 400 for what is not JSON."""
    if isinstance(exc, RecursionError):
        return _HTTPError(400, f"the body's JSON is nested too deeply (at most {settings.max_depth} levels)")
    if isinstance(exc, TooManyEntries):
        samples = f"more than {exc.limit:,}" if exc.count is None else f"{exc.count:,}"
        return _HTTPError(413, f"{'.'.join(exc.path)!r} has {samples} entries: the batch has {samples} samples, "
                          f"over the server's limit of {exc.limit:,}; send smaller batches")  # fmt: skip
    if isinstance(exc, TooManyValues):
        return _HTTPError(413, f"{exc}; send fewer, longer values or smaller batches")
    if isinstance(exc, TooLongText):
        limit = f"{exc.limit / 2**20:g} MiB"
        advice = "send shorter texts, or raise it with 'rewardsmith serve --max-text-mb'"
        return _HTTPError(413, f"{exc}, over the server's limit on one text (max_text_bytes, {limit}); {advice}")
    if isinstance(exc, BodyError):
        return _HTTPError(400, f"the body is not valid JSON ({exc}); send application/json")
    raise exc


def _check_messages(body: Any, limit: int) -> None:
    """Refuse a chat message of ``/score``'s completions or prompts whose text parts, joined (as a reward reads
    them), take more than ``limit`` bytes of UTF-8 (:class:`TooLongText`): each part is bounded as it is read.
    """
    if not isinstance(body, dict):
        return
    for key in ("completions", "prompts"):
        samples = body.get(key)
        for sample in samples if isinstance(samples, list) else ():
            for message in sample if isinstance(sample, list) else ():
                content = message.get("content") if isinstance(message, dict) else None
                if isinstance(content, list) and texts_over(text_parts(content), limit):
                    raise TooLongText((key, "[]", "[]"), limit, joined=True)


class _Chunked:
    """A JSON answer sent as its chunks, one after another (uvicorn waits while the client is behind): no step
    copies the whole answer, and each chunk is let go once sent."""

    def __init__(self, chunks: list[bytes | memoryview], status_code: int = 200) -> None:
        self.chunks = chunks
        self.status_code = status_code

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        chunks, self.chunks = self.chunks, []
        length = sum(map(len, chunks))
        headers = [(b"content-type", b"application/json"), (b"content-length", str(length).encode())]
        await send({"type": "http.response.start", "status": self.status_code, "headers": headers})
        chunks.reverse()
        while chunks:
            chunk = chunks.pop()
            await send({"type": "http.response.body", "body": bytes(chunk), "more_body": bool(chunks)})
            del chunk
        if not length:
            await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _answer(payload: Any) -> Any:
    """``payload`` as a JSON response, written off the event loop."""
    return _Chunked(await asyncio.to_thread(encode_chunks, payload))


def _list_field(body: dict[str, Any], key: str, *, required: bool) -> list[Any] | None:
    value = body.get(key)
    if value is None:
        if required:
            raise _HTTPError(400, f"the body needs {key!r}: a list with one entry per sample")
        return None
    if not isinstance(value, list):
        raise _HTTPError(400, f"{key!r} must be a list with one entry per sample, got {type(value).__name__}")
    return value


def _check_keys(body: Any, allowed: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise _HTTPError(400, f"the body must be a JSON object with the keys {', '.join(allowed)}")
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        raise _HTTPError(400, f"unknown key(s) {', '.join(map(repr, unknown))}; the body takes {', '.join(allowed)}")
    return body


class _BigBodies:
    """While big bodies are held: the cyclic garbage collector paused, and the GIL handed over more often.

    Reading a big body creates millions of objects, and the collector, woken by so many, walks all of them in
    one pass that holds the GIL (up to a second for a 56 MB body, the event loop stopped). Those objects hold no
    cycles and are freed by their reference counts; the collector runs again when no big body is held.

    The thread reading a body holds the GIL until the loop's thread has waited the switch interval for it (5 ms
    by default), and a health check needs the GIL a few times: at 1 ms, ``/health`` waits about half as long
    (p50 3.5 ms instead of 8.5 ms, max 28-42 ms instead of 46 ms during a 56 MB ``/verify`` here).
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.holders = 0
        self.interval = sys.getswitchinterval()

    def take(self) -> None:
        with self.lock:
            self.holders += 1
            if self.holders == 1:
                gc.disable()
                self.interval = sys.getswitchinterval()
                sys.setswitchinterval(min(self.interval, 0.001))

    def give(self) -> None:
        with self.lock:
            self.holders -= 1
            if self.holders == 0:
                gc.enable()
                sys.setswitchinterval(self.interval)


#: Bodies from this size on pause the collector while they are held.
_BIG_BODY = 1 << 20
_BIG_BODIES = _BigBodies()


class _Handlers:
    """The routes of one server: authorisation, admission (queue, bytes, samples), scoring."""

    def __init__(self, service: RewardService, settings: ServerSettings) -> None:
        self.service = service
        self.settings = settings
        self.state = {"in_flight": 0, "waiting": 0}
        self.semaphore = asyncio.Semaphore(settings.max_concurrency)
        self.budget = _Budget(settings.max_pending_bytes)
        self.metrics = ServerMetrics(lambda: (self.state["in_flight"], self.state["waiting"]))

    def timed(self, endpoint: str, handler: Any) -> Any:
        """``handler`` with its answers counted in :attr:`metrics` (status, time, samples)."""

        async def route(request: Any) -> Any:
            start = time.perf_counter()
            status = 500
            try:
                response = await handler(request)
                status = response.status_code
                return response
            except _HTTPError as exc:
                status = exc.status
                raise
            except RecursionError:
                status = 400
                raise
            finally:
                self.metrics.request(endpoint, status, time.perf_counter() - start)

        return route

    async def metrics_text(self, request: Any) -> Any:
        from starlette.responses import Response

        return Response(self.metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")

    def authorise(self, request: Any) -> None:
        token = self.settings.token
        if token is None:
            return
        given = request.headers.get("authorization", "")
        scheme, _, sent = given.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(sent.strip().encode(), token.encode()):
            raise _HTTPError(401, "missing or wrong bearer token; send 'Authorization: Bearer <token>'")

    async def body(self, request: Any, taken: _Held) -> Document:
        """The request's JSON body, authorised, bounded, and parsed on a thread in steps the loop can interleave."""
        self.authorise(request)
        held = [await _read_body(request, self.settings, self.budget, taken)]
        if len(held[0]) >= _BIG_BODY:
            _BIG_BODIES.take()
            taken.big = True
        taken.document = await asyncio.to_thread(_parse_json, held, self.settings, request.url.path)
        return taken.document

    async def release(self, taken: _Held) -> None:
        """Give back what a request held: its bytes, its values (a big body's freed off the loop, a part at a time,
        however the request ended) and its part in :class:`_BigBodies`."""
        self.budget.give(taken.bytes)
        if taken.big:
            if taken.document is not None and taken.document.value is not None:
                await asyncio.to_thread(dismantle, taken.document.value)
            _BIG_BODIES.give()

    def samples(self, n: int) -> None:
        if n > self.settings.max_samples:
            raise _HTTPError(413, f"the batch has {n:,} samples, over the server's limit of "
                             f"{self.settings.max_samples:,}; send smaller batches")  # fmt: skip

    async def scored(
        self,
        endpoint: str,
        prompts: list[Any] | None,
        completions: list[Any],
        columns: dict[str, Any],
        only: list[str] | None = None,
    ) -> Any:
        self.samples(len(completions))
        if self.semaphore.locked() and self.state["waiting"] >= self.settings.max_queue:
            raise _HTTPError(503, "too many batches waiting; retry shortly", {"Retry-After": "1"})
        self.state["waiting"] += 1
        try:
            await self.semaphore.acquire()
        finally:
            self.state["waiting"] -= 1
        self.state["in_flight"] += 1
        try:
            served = await self.service.score(prompts, completions, columns, only)
            for name, values in served.rewards.items():
                self.metrics.reward(name, len(values), served.errors.get(name, 0), served.seconds.get(name, 0.0))
            self.metrics.samples[endpoint] += len(completions)
            return served
        except RewardConfigError as exc:
            raise _HTTPError(400, str(exc)) from None
        finally:
            self.state["in_flight"] -= 1
            self.semaphore.release()

    async def health(self, request: Any) -> Any:
        from starlette.responses import JSONResponse

        service = self.service
        return JSONResponse(
            {"status": "ok", "rewards": service.names, "columns": service.columns, "in_flight": self.state["in_flight"]}
        )

    async def score(self, request: Any) -> Any:
        taken = _Held()
        try:
            keys = ("prompts", "completions", "columns", "rewards")
            body = _check_keys((await self.body(request, taken)).value, keys)
            completions = _list_field(body, "completions", required=True)
            prompts = _list_field(body, "prompts", required=False)
            columns = body.get("columns") or {}
            if not isinstance(columns, dict):
                got = type(columns).__name__
                raise _HTTPError(400, f"'columns' must be an object of column name -> list, got {got}")
            only = _list_field(body, "rewards", required=False)
            served = await self.scored("/score", prompts, completions or [], columns, only)
            answer = await _answer(served.to_json())
            garbage = [body, completions, prompts, columns, served]
            del body, completions, prompts, columns, served
            await asyncio.to_thread(dismantle, garbage)
            return answer
        finally:
            await self.release(taken)

    async def get_reward(self, request: Any) -> Any:
        taken = _Held()
        try:
            body = (await self.body(request, taken)).value
            if not isinstance(body, dict):
                raise _HTTPError(400, "the body must be a JSON object with 'query' (and 'prompts', 'labels')")
            queries = _list_field(body, "query", required=True) or []
            self.samples(len(queries))
            prompts = _list_field(body, "prompts", required=False)
            if prompts is not None and len(prompts) != len(queries):
                raise _HTTPError(400, f"'prompts' has {len(prompts)} entries for {len(queries)} queries")
            labels = _list_field(body, "labels", required=False)
            split = [response_of(q, prompts[i] if prompts else None) for i, q in enumerate(queries)]
            try:
                columns = label_columns(labels, len(queries), self.settings.label_column)
            except RewardConfigError as exc:
                raise _HTTPError(400, str(exc)) from None
            served = await self.scored("/get_reward", prompts, [c for c, _ in split], columns)
            named = NamedScores(served.rewards, served.scores)
            return await _answer(openrlhf_answer(named, [ok for _, ok in split], self.settings.none_score))
        finally:
            await self.release(taken)

    async def verify(self, request: Any) -> Any:
        """NeMo-Gym's resources-server verify (:mod:`rewardsmith.serve.nemo_gym`).

        The output items become messages as the body is read; the answer is the request's own text with the
        verify fields added (:func:`~rewardsmith.serve.answer.echo_object`), never the request written again.
        """
        taken = _Held()
        try:
            document = await self.body(request, taken)
            try:
                prompt, completion, columns = await asyncio.to_thread(verify_request, document.value)
            except ValueError as exc:
                raise _HTTPError(400, str(exc)) from None
            garbage = [completion, prompt, document.value]  # dismantled from the end: the body first
            document.value = prompt = completion = None
            served = await self.scored("/verify", garbage[1:2], garbage[0:1], columns)
            await asyncio.to_thread(dismantle, garbage)  # the messages, freed before the answer is written
            reasons = "; ".join(f"{name}: {texts[0]}" for name, texts in served.reasons.items())
            components = {name: scores[0] for name, scores in served.rewards.items()}
            fields = verify_fields(served.scores[0], reasons, components)
            return _Chunked(await asyncio.to_thread(echo_object, document, fields))
        finally:
            await self.release(taken)


async def _on_http_error(request: Any, exc: Exception) -> Any:
    assert isinstance(exc, _HTTPError)
    return _error_response(exc.status, exc.message, exc.headers)


async def _on_starlette_error(request: Any, exc: Exception) -> Any:
    status = getattr(exc, "status_code", 500)
    return _error_response(status, str(getattr(exc, "detail", "")) or "request failed")


async def _on_bug(request: Any, exc: Exception) -> Any:
    if isinstance(exc, RecursionError):
        return _error_response(400, "the request nests its values too deeply; send flat values")
    logger.exception("rewardsmith serve: unexpected error on %s", request.url.path)
    return _error_response(500, f"internal error ({type(exc).__name__}); the server's log has the details")


def create_app(service: RewardService, settings: ServerSettings | None = None) -> Any:
    """The Starlette application serving ``service`` (run it with uvicorn, or :func:`rewardsmith.serve.run_server`)."""
    require_extra("serve", "rewardsmith serve")
    from contextlib import asynccontextmanager

    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.routing import Route

    handlers = _Handlers(service, settings or ServerSettings())

    async def lifespan(app: Any) -> Any:
        yield
        service.close()

    return Starlette(
        routes=[
            Route("/health", handlers.health, methods=["GET"]),
            Route("/metrics", handlers.metrics_text, methods=["GET"]),
            Route("/score", handlers.timed("/score", handlers.score), methods=["POST"]),
            Route("/get_reward", handlers.timed("/get_reward", handlers.get_reward), methods=["POST"]),
            Route("/verify", handlers.timed("/verify", handlers.verify), methods=["POST"]),
        ],
        exception_handlers={_HTTPError: _on_http_error, HTTPException: _on_starlette_error, Exception: _on_bug},
        lifespan=asynccontextmanager(lifespan),
    )
