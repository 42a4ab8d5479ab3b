"""The reward server's HTTP API: an ASGI application on Starlette.

Endpoints (every answer is JSON, errors included):

* ``GET /health``: ``{"status": "ok", "rewards": [...], "columns": {...}, "in_flight": n}``;
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

Errors: ``400`` for a body that is not JSON or a batch with the wrong shape
(the message says what to send), ``401`` without the bearer token when one is
set, ``413`` for a body over ``max_body_bytes``, ``503`` (with
``Retry-After``) when ``max_queue`` batches already wait, ``500`` only for a
bug, with a one-line message and no traceback (it goes to the server's log).
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
import hmac
import json
import logging
from dataclasses import dataclass
from typing import Any

from rewardsmith.core.errors import RewardConfigError, RewardsmithError
from rewardsmith.core.extras import require_extra
from rewardsmith.integrations.named import NamedScores
from rewardsmith.integrations.openrlhf import label_columns, openrlhf_answer, response_of
from rewardsmith.serve.nemo_gym import responses_to_messages, verify_columns, verify_response
from rewardsmith.serve.service import RewardService

__all__ = ["ServerSettings", "create_app"]

logger = logging.getLogger("rewardsmith.serve")


@dataclass(frozen=True)
class ServerSettings:
    """Limits and options of the server (``rewardsmith serve`` flags)."""

    max_concurrency: int = 4
    max_queue: int = 64
    max_body_bytes: int = 64 * 1024 * 1024
    token: str | None = None
    label_column: str = "answer"
    none_score: float = 0.0


class _HTTPError(RewardsmithError):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def _error_response(status: int, message: str, headers: dict[str, str] | None = None) -> Any:
    from starlette.responses import JSONResponse

    return JSONResponse({"error": {"message": message, "status": status}}, status_code=status, headers=headers)


async def _read_json(request: Any, limit: int) -> Any:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _HTTPError(413, f"the body has {int(declared):,} bytes, over the server's limit of {limit:,}")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _HTTPError(413, f"the body is over the server's limit of {limit:,} bytes; send smaller batches")
        chunks.append(chunk)
    try:
        return json.loads(b"".join(chunks))
    except (ValueError, UnicodeDecodeError) as exc:
        raise _HTTPError(400, f"the body is not valid JSON ({exc}); send application/json") from None


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


def create_app(service: RewardService, settings: ServerSettings | None = None) -> Any:
    """The Starlette application serving ``service`` (run it with uvicorn, or :func:`rewardsmith.serve.run_server`)."""
    require_extra("serve", "rewardsmith serve")
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    settings = settings or ServerSettings()
    state = {"in_flight": 0, "waiting": 0}
    semaphore = asyncio.Semaphore(settings.max_concurrency)

    def authorise(request: Any) -> None:
        if settings.token is None:
            return
        given = request.headers.get("authorization", "")
        scheme, _, token = given.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(token.strip().encode(), settings.token.encode()):
            raise _HTTPError(401, "missing or wrong bearer token; send 'Authorization: Bearer <token>'")

    async def scored(
        prompts: list[Any] | None, completions: list[Any], columns: dict[str, Any], only: list[str] | None = None
    ) -> Any:
        if semaphore.locked() and state["waiting"] >= settings.max_queue:
            raise _HTTPError(503, "too many batches waiting; retry shortly", {"Retry-After": "1"})
        state["waiting"] += 1
        try:
            await semaphore.acquire()
        finally:
            state["waiting"] -= 1
        state["in_flight"] += 1
        try:
            return await service.score(prompts, completions, columns, only)
        except RewardConfigError as exc:
            raise _HTTPError(400, str(exc)) from None
        finally:
            state["in_flight"] -= 1
            semaphore.release()

    async def health(request: Any) -> Any:
        return JSONResponse(
            {"status": "ok", "rewards": service.names, "columns": service.columns, "in_flight": state["in_flight"]}
        )

    async def score(request: Any) -> Any:
        authorise(request)
        allowed = ("prompts", "completions", "columns", "rewards")
        body = _check_keys(await _read_json(request, settings.max_body_bytes), allowed)
        completions = _list_field(body, "completions", required=True)
        prompts = _list_field(body, "prompts", required=False)
        columns = body.get("columns") or {}
        if not isinstance(columns, dict):
            raise _HTTPError(400, f"'columns' must be an object of column name -> list, got {type(columns).__name__}")
        only = _list_field(body, "rewards", required=False)
        served = await scored(prompts, completions or [], columns, only)
        return JSONResponse(served.to_json())

    async def get_reward(request: Any) -> Any:
        authorise(request)
        body = await _read_json(request, settings.max_body_bytes)
        if not isinstance(body, dict):
            raise _HTTPError(400, "the body must be a JSON object with 'query' (and 'prompts', 'labels')")
        queries = _list_field(body, "query", required=True) or []
        prompts = _list_field(body, "prompts", required=False)
        if prompts is not None and len(prompts) != len(queries):
            raise _HTTPError(400, f"'prompts' has {len(prompts)} entries for {len(queries)} queries")
        labels = _list_field(body, "labels", required=False)
        split = [response_of(q, prompts[i] if prompts else None) for i, q in enumerate(queries)]
        try:
            columns = label_columns(labels, len(queries), settings.label_column)
        except RewardConfigError as exc:
            raise _HTTPError(400, str(exc)) from None
        served = await scored(prompts, [c for c, _ in split], columns)
        named = NamedScores(served.rewards, served.scores)
        return JSONResponse(openrlhf_answer(named, [ok for _, ok in split], settings.none_score))

    async def verify(request: Any) -> Any:  # NeMo-Gym's resources-server verify (rewardsmith.serve.nemo_gym)
        authorise(request)
        body = await _read_json(request, settings.max_body_bytes)
        if not isinstance(body, dict) or not isinstance(body.get("response"), dict):
            raise _HTTPError(400, "a verify request is a JSON object with 'response' (a Responses API object)")
        params = body.get("responses_create_params")
        prompt = responses_to_messages(params.get("input") if isinstance(params, dict) else None)
        completion = responses_to_messages(body["response"].get("output"))
        served = await scored([prompt], [completion], verify_columns(body))
        reasons = "; ".join(f"{name}: {texts[0]}" for name, texts in served.reasons.items())
        return JSONResponse(verify_response(body, served.scores[0], reasons))

    async def on_http_error(request: Any, exc: Exception) -> Any:
        assert isinstance(exc, _HTTPError)
        return _error_response(exc.status, exc.message, exc.headers)

    async def on_starlette_error(request: Any, exc: Exception) -> Any:
        status = getattr(exc, "status_code", 500)
        return _error_response(status, str(getattr(exc, "detail", "")) or "request failed")

    async def on_bug(request: Any, exc: Exception) -> Any:
        logger.exception("rewardsmith serve: unexpected error on %s", request.url.path)
        return _error_response(500, f"internal error ({type(exc).__name__}); the server's log has the details")

    from starlette.exceptions import HTTPException

    async def lifespan(app: Any) -> Any:
        yield
        service.close()

    from contextlib import asynccontextmanager

    return Starlette(
        routes=[
            Route("/health", health, methods=["GET"]),
            Route("/score", score, methods=["POST"]),
            Route("/get_reward", get_reward, methods=["POST"]),
            Route("/verify", verify, methods=["POST"]),
        ],
        exception_handlers={_HTTPError: on_http_error, HTTPException: on_starlette_error, Exception: on_bug},
        lifespan=asynccontextmanager(lifespan),
    )
