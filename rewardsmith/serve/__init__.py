"""``rewardsmith serve``: rewards over HTTP, for trainers that call a remote reward (OpenRLHF) or the ``remote`` reward.

Built on Starlette (the ASGI toolkit FastAPI itself is built on; the API is
three routes, so FastAPI's validation and OpenAPI layers would add a
dependency and per-request work without use) and served by uvicorn, whose
graceful shutdown stops accepting connections on SIGTERM / Ctrl-C and lets the
batches in flight finish (for up to ``graceful_timeout`` seconds).

* :class:`~rewardsmith.serve.service.RewardService`: the rewards and weights, and how a batch is scored;
* :func:`~rewardsmith.serve.app.create_app`: the HTTP API (``/health``, ``/score``, OpenRLHF's ``/get_reward``);
* :func:`run_server`: serve it with uvicorn.

>>> from rewardsmith.serve import RewardService
>>> RewardService.from_spec("think_format").names
['think_format']
"""

from __future__ import annotations

from typing import Any

from rewardsmith.core.extras import require_extra
from rewardsmith.serve.app import ServerSettings, create_app
from rewardsmith.serve.service import BatchRequestError, RewardService, ServedBatch, load_service

__all__ = [
    "BatchRequestError",
    "RewardService",
    "ServedBatch",
    "ServerSettings",
    "create_app",
    "load_service",
    "run_server",
]


def run_server(
    service: RewardService,
    host: str = "127.0.0.1",
    port: int = 8000,
    settings: ServerSettings | None = None,
    *,
    graceful_timeout: float = 60.0,
    log_level: str = "info",
) -> None:
    """Serve ``service`` until SIGTERM or Ctrl-C, then finish the batches in flight and stop.

    >>> callable(run_server)
    True
    """
    require_extra("serve", "rewardsmith serve")
    import uvicorn

    from rewardsmith.serve.guard import guarded_protocol

    settings = settings or ServerSettings()
    config: Any = uvicorn.Config(
        create_app(service, settings),
        host=host,
        port=port,
        log_level=log_level,
        timeout_graceful_shutdown=graceful_timeout,
        access_log=False,
        http=guarded_protocol(settings.header_timeout, settings.max_connections),
    )
    uvicorn.Server(config).run()
