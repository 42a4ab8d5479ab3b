"""The HTTP client of rewardsmith: one keep-alive connection per concurrency slot, through ``httpx``'s transport.

Judges, generation through an OpenAI-compatible endpoint, and the Fireworks
dataset upload all send their requests through :class:`HTTPSender` (with the
retries of :mod:`rewardsmith.http.retry`); there is no other HTTP client.

Each concurrency slot of a batch gets an :class:`HTTPSender`: an
``httpx.AsyncHTTPTransport`` limited to one connection, with the headers
fixed. Two measured reasons for this shape:

* ``httpcore``'s connection pool spends time in proportion to connections x
  queued requests on every hand-out, so one pool of 32 connections cost about
  5 ms of CPU per request here; one connection per transport keeps it constant;
* ``httpx.AsyncClient`` adds URL and header merging, cookie extraction, auth
  and redirect handling to each request (about 0.2 ms), none of which these
  endpoints need; requests are built once, as ``httpx.Request`` objects, and
  sent through the transport directly.

What the client would take from the environment is kept: the proxy
(``HTTPS_PROXY`` / ``HTTP_PROXY`` / ``ALL_PROXY``, honouring ``NO_PROXY``) and
the CA bundle (``SSL_CERT_FILE`` / ``SSL_CERT_DIR``). One SSL context serves the
whole process (building one costs about 40 ms).

The timeout of a request bounds the whole exchange: connecting, sending, and
reading the whole answer. ``httpx``'s own timeouts are per phase and per read,
so a server that trickles a byte a second would otherwise keep a request open
for ever.
"""

from __future__ import annotations

import asyncio
import ssl
import threading
from typing import Any

__all__ = ["HTTPSender", "json_body", "proxy_for", "shared_ssl_context"]

_SSL: dict[str, ssl.SSLContext] = {}
_SSL_LOCK = threading.Lock()
USER_AGENT = "rewardsmith"


def shared_ssl_context() -> ssl.SSLContext:
    """One SSL context per process for every connection (with the CA bundle the environment names)."""
    with _SSL_LOCK:
        if "default" not in _SSL:
            import httpx

            _SSL["default"] = httpx.create_ssl_context()
        return _SSL["default"]


def proxy_for(url: str, proxies: dict[str, str] | None = None) -> str | None:
    """The proxy for ``url`` from ``proxies`` (default: the environment's ``*_PROXY`` variables), or ``None``.

    ``NO_PROXY`` (``proxies["no"]``) exempts hosts, as ``httpx`` and ``requests`` do.

    >>> env = {"https": "http://proxy:3128", "no": "internal.example,localhost"}
    >>> proxy_for("https://api.openai.com/v1", env), proxy_for("https://internal.example/v1", env)
    ('http://proxy:3128', None)
    >>> proxy_for("http://localhost:8000/v1", env) is None, proxy_for("https://x/v1", {}) is None
    (True, True)
    """
    from urllib.parse import urlsplit
    from urllib.request import getproxies_environment, proxy_bypass_environment

    proxies = getproxies_environment() if proxies is None else proxies
    parts = urlsplit(url)
    if not proxies or (parts.hostname and proxy_bypass_environment(parts.hostname, proxies)):
        return None
    return proxies.get(parts.scheme) or proxies.get("all")


def json_body(value: Any) -> bytes:
    """``value`` as a compact UTF-8 JSON body; text that is not valid Unicode (a lone surrogate) as JSON escapes.

    >>> json_body({"text": "é"}), json_body({"text": "a\\ud800"})
    (b'{"text":"\\xc3\\xa9"}', b'{"text":"a\\\\ud800"}')
    """
    import json

    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode("ascii")


class HTTPSender:
    """HTTP requests (JSON ``POST`` above all) over one keep-alive connection, with fixed headers."""

    def __init__(self, headers: dict[str, str], proxy: str | None = None) -> None:
        import httpx

        self._httpx = httpx
        self.headers = {"User-Agent": USER_AGENT, **headers}
        self.transport = httpx.AsyncHTTPTransport(
            limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
            verify=shared_ssl_context(),
            proxy=proxy,
        )

    async def post(self, url: str, json: Any, timeout: float) -> Any:
        """Send ``json`` to ``url`` and return the ``httpx.Response`` with its body read.

        Raises ``httpx.TimeoutException`` when the whole exchange (connect,
        write, reading the whole answer) takes longer than ``timeout`` seconds,
        ``httpx.TransportError`` when the connection fails.
        """
        return await self.request("POST", url, timeout, json=json)

    async def request(
        self,
        method: str,
        url: str,
        timeout: float,
        *,
        json: Any = None,
        content: Any = None,
        files: Any = None,
        headers: dict[str, str] | None = None,
    ) -> Any:
        """Send any request (``json``, raw ``content`` or multipart ``files``, as ``httpx`` takes them).

        ``headers`` are added to the fixed ones for this request only. The
        response comes back with its body read, all within ``timeout``
        seconds; errors as for :meth:`post`.
        """
        httpx = self._httpx
        extra = dict(headers or {})
        if json is not None:
            content, json = json_body(json), None
            extra.setdefault("Content-Type", "application/json")
        request = httpx.Request(
            method,
            url,
            json=json,
            content=content,
            files=files,
            headers={**self.headers, **extra} if extra else self.headers,
            extensions={"timeout": httpx.Timeout(timeout).as_dict()},
        )
        try:
            return await asyncio.wait_for(self._exchange(request), timeout)
        except asyncio.TimeoutError:
            raise httpx.ReadTimeout(
                f"no complete answer within {timeout:g}s (the whole exchange is bounded)", request=request
            ) from None

    async def _exchange(self, request: Any) -> Any:
        response = await self.transport.handle_async_request(request)
        try:
            await response.aread()
        finally:
            await response.aclose()
        return response

    async def aclose(self) -> None:
        """Close the connection."""
        await self.transport.aclose()

    def __repr__(self) -> str:  # the headers hold the API key: never show them
        return "HTTPSender()"
