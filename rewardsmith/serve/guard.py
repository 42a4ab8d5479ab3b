"""Slow and numerous clients: a time limit on request headers, and a cap on open connections.

uvicorn times out a connection only while it is idle between requests; a
client that sends its request headers a few bytes at a time (slowloris), or
that opens connections and sends nothing, holds them open for ever, and
uvicorn's ``limit_concurrency`` answers 503 only once a request's headers are
complete. :func:`guarded_protocol` gives uvicorn an HTTP protocol (its own h11
protocol, extended) that:

* closes a connection whose request headers are not complete ``header_timeout``
  seconds after it opened, or after the previous answer on a kept-alive one;
* answers ``503`` (JSON, ``Retry-After``) and closes at once when
  ``max_connections`` connections are already open.

The body's own time limit is the application's (:mod:`rewardsmith.serve.app`).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

__all__ = ["guarded_protocol"]


def _busy_response() -> bytes:
    body = json.dumps({"error": {"message": "too many open connections; retry shortly", "status": 503}}).encode()
    head = (
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\n"
        f"connection: close\r\ncontent-length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def guarded_protocol(header_timeout: float, max_connections: int) -> type:
    """uvicorn's h11 protocol with a request-header time limit and a connection cap (pass it as ``http=``)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11Protocol(H11Protocol):  # type: ignore[misc]
        _header_timer: asyncio.TimerHandle | None = None
        _waiting_for: Any = None

        def connection_made(self, transport: Any) -> None:  # type: ignore[override]
            if len(self.connections) >= max_connections:
                transport.write(_busy_response())
                transport.close()
                return
            super().connection_made(transport)
            self._arm()

        def _arm(self) -> None:
            self._disarm()
            self._waiting_for = self.cycle
            self._header_timer = self.loop.call_later(header_timeout, self._headers_late)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_late(self) -> None:
            self._header_timer = None
            if self.cycle is self._waiting_for and not self.transport.is_closing():
                self.transport.close()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self._header_timer is not None and self.cycle is not self._waiting_for:
                self._disarm()  # a new request's headers are complete

        def on_response_complete(self) -> None:
            super().on_response_complete()
            pipelined = self.cycle is not None and not self.cycle.response_complete
            if not self.transport.is_closing() and not pipelined:
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            if self in self.connections or self.cycle is not None:
                super().connection_lost(exc)

    return GuardedH11Protocol
