"""Local HTTP servers on 127.0.0.1 for tests: a base class, and a scriptable OpenAI-compatible chat server.

Use :class:`LocalChatServer` to test judges and generation offline.

:class:`LocalChatServer` answers ``POST /v1/chat/completions`` from a
background thread of this process. What it answers is up to you: a function of
the request (``respond``), optionally preceded by a queue of scripted replies
(``script``): verdicts, delays, ``429`` with ``Retry-After``, ``500``, a body
that is not JSON, or a request that hangs. It records every request and counts
how many are in flight at once (also served as JSON at ``GET /v1/stats``), so a
test can check retries, concurrency limits and caching from the server's side.

>>> from rewardsmith.http.testing import LocalChatServer, Reply
>>> import httpx
>>> with LocalChatServer(lambda request: "Score: 8") as server:
...     server.script.append(Reply.error(503))
...     first = httpx.post(server.base_url + "/chat/completions", json={"messages": []})
...     second = httpx.post(server.base_url + "/chat/completions", json={"messages": []})
>>> first.status_code, second.json()["choices"][0]["message"]["content"], len(server.requests)
(503, 'Score: 8', 2)
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["LocalChatServer", "LocalServer", "RecordedRequest", "Reply"]


@dataclass
class Reply:
    """One scripted answer of :class:`LocalChatServer`.

    ``content`` is the assistant message of a normal answer (``finish_reason``
    says why it ended: ``"stop"``, or ``"length"`` for a cut answer). ``status``,
    ``headers`` and ``body`` replace the whole response when given (``body``
    as raw text, for malformed answers). ``delay`` is seconds before answering;
    ``hang`` keeps the connection open without answering until the server stops;
    ``trickle`` sends the headers at once, then the body one byte every
    ``trickle`` seconds (a server that never times out a read, but never finishes).
    """

    content: str | None = None
    status: int = 200
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    body: str | None = None
    hang: bool = False
    usage: tuple[int, int] | None = (120, 30)
    finish_reason: str = "stop"
    trickle: float = 0.0

    @classmethod
    def rate_limited(cls, retry_after: float | str | None = 1, *, header: str = "Retry-After") -> Reply:
        """``429 Too Many Requests``, with a ``Retry-After`` (or ``retry-after-ms``) header when given."""
        headers = {} if retry_after is None else {header: str(retry_after)}
        return cls(status=429, headers=headers, body='{"error": {"message": "rate limited", "type": "rate_limit"}}')

    @classmethod
    def error(cls, status: int = 500, message: str = "internal error") -> Reply:
        """An HTTP error with an OpenAI-style error body."""
        return cls(status=status, body=json.dumps({"error": {"message": message, "type": "server_error"}}))

    @classmethod
    def malformed(cls) -> Reply:
        """``200 OK`` whose body is not JSON (a truncated or broken answer)."""
        return cls(body='{"choices": [{"message": {"content": "Score')

    @classmethod
    def hanging(cls) -> Reply:
        """Accept the request and never answer (until the server stops)."""
        return cls(hang=True)


@dataclass
class RecordedRequest:
    """A request the server received: its JSON body, headers, and when it arrived and was answered."""

    body: dict[str, Any]
    headers: dict[str, str]
    started: float
    finished: float | None = None

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The chat messages of the request."""
        return list(self.body.get("messages") or [])

    @property
    def text(self) -> str:
        """All message contents of the request, joined."""
        return "\n".join(str(m.get("content", "")) for m in self.messages)

    def block(self, tag: str) -> str | None:
        """The text between ``<tag>`` and ``</tag>`` in the last message (stripped), or ``None``.

        >>> request = RecordedRequest({"messages": [{"role": "user", "content": "<response> hi </response>"}]}, {}, 0.0)
        >>> request.block("response")
        'hi'
        """
        messages = self.messages
        content = str(messages[-1].get("content", "")) if messages else ""
        start = content.find(f"<{tag}>")
        end = content.find(f"</{tag}>", start + 1)
        if start == -1 or end == -1:
            return None
        return content[start + len(tag) + 2 : end].strip()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 1024  # the listen backlog: the default of 5 drops connections opened at once (1 s stalls)


Responder = Callable[[RecordedRequest], "str | Reply"]


def send_answer(handler: BaseHTTPRequestHandler, status: int, headers: dict[str, str], data: bytes) -> None:
    """Write a whole response (status, headers, ``Content-Length``, body) from a request handler."""
    handler.send_response(status)
    for key, value in headers.items():
        handler.send_header(key, value)
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


class LocalServer:
    """An HTTP server on a free port of 127.0.0.1, served from a daemon thread: the base of the test servers.

    Subclasses return their request handler class from :meth:`handler`. Use it
    as a context manager, or call :meth:`start` and :meth:`stop`.
    """

    def __init__(self) -> None:
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def handler(self) -> type[BaseHTTPRequestHandler]:
        """The request handler class (subclasses say how they answer)."""
        raise NotImplementedError

    @property
    def root(self) -> str:
        """``http://127.0.0.1:PORT``."""
        if self._httpd is None:
            raise RuntimeError("the server is not running; call start() or use it as a context manager")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def start(self) -> LocalServer:
        """Listen on a free port of 127.0.0.1 and serve from a daemon thread."""
        httpd = _Server(("127.0.0.1", 0), self.handler())
        self._httpd = httpd
        self._stopping.clear()
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; hanging requests are released."""
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class LocalChatServer(LocalServer):
    """An OpenAI-compatible ``/v1/chat/completions`` server on 127.0.0.1, run in a background thread.

    ``respond(request)`` returns the assistant's text or a :class:`Reply`;
    replies in ``script`` are used first, one per request, in order. ``delay``
    is added before every answer. Use it as a context manager, or call
    :meth:`start` and :meth:`stop`.
    """

    def __init__(self, respond: Responder | None = None, *, delay: float = 0.0, model: str = "local-judge") -> None:
        super().__init__()
        self.respond: Responder = respond or (lambda request: "Score: 10")
        self.delay = delay
        self.model = model
        self.script: deque[Reply] = deque()
        self.requests: list[RecordedRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        """The ``base_url`` a client uses: ``http://127.0.0.1:PORT/v1``."""
        return self.root + "/v1"

    def handler(self) -> type[BaseHTTPRequestHandler]:
        return _make_handler(self)

    def reset(self) -> None:
        """Forget recorded requests and the in-flight maximum."""
        with self._lock:
            self.requests.clear()
            self.max_in_flight = 0

    # -- serving ------------------------------------------------------------------------------------

    def _next_reply(self, request: RecordedRequest) -> Reply:
        with self._lock:
            scripted = self.script.popleft() if self.script else None
        if scripted is not None:
            return scripted
        answer = self.respond(request)
        return answer if isinstance(answer, Reply) else Reply(content=str(answer))

    def _answer(self, request: RecordedRequest) -> tuple[int, dict[str, str], bytes, float]:
        reply = self._next_reply(request)
        wait = self.delay + reply.delay
        if wait > 0:
            self._stopping.wait(wait)
        if reply.hang:
            self._stopping.wait(300)
            return 503, {}, b"", 0.0
        if reply.body is not None:
            return reply.status, dict(reply.headers), reply.body.encode(), reply.trickle
        usage = None
        if reply.usage is not None:
            prompt, completion = reply.usage
            usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
        payload = {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.body.get("model", self.model),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.content},
                    "finish_reason": reply.finish_reason,
                }
            ],
            "usage": usage,
        }
        data = json.dumps(payload).encode()
        return reply.status, {"Content-Type": "application/json", **reply.headers}, data, reply.trickle


def _make_handler(server: LocalChatServer) -> type[BaseHTTPRequestHandler]:
    """The request handler class of ``server`` (``http.server`` makes one handler per request from it)."""
    return type("Handler", (_ChatHandler,), {"chat": server})


class _ChatHandler(BaseHTTPRequestHandler):
    """Answers ``POST .../chat/completions`` from its :class:`LocalChatServer` and ``GET .../stats``."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as separate writes: no 40 ms Nagle stalls
    chat: LocalChatServer

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:  # /stats: the counts, for a server run in another process
        with self.chat._lock:
            stats = {"requests": len(self.chat.requests), "max_in_flight": self.chat.max_in_flight}
        data = json.dumps(stats).encode()
        self.send_response(200 if self.path.rstrip("/").endswith("/stats") else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        request = self._record()
        trickle = 0.0
        try:
            if not self.path.rstrip("/").endswith("/chat/completions"):
                status, headers, data = 404, {}, b'{"error": {"message": "not found"}}'
            else:
                status, headers, data, trickle = self.chat._answer(request)
        finally:
            with self.chat._lock:
                self.chat.in_flight -= 1
            request.finished = time.monotonic()
        try:
            if trickle:
                self._trickle(status, headers, data, trickle)
            else:
                send_answer(self, status, headers, data)
        except OSError:  # the client gave up (timed out) and closed the connection
            self.close_connection = True

    def _record(self) -> RecordedRequest:
        """Read the request, record it, and count it as in flight."""
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"_unparsable": raw.decode("utf-8", "replace")}
        request = RecordedRequest(body, dict(self.headers.items()), time.monotonic())
        with self.chat._lock:
            self.chat.requests.append(request)
            self.chat.in_flight += 1
            self.chat.max_in_flight = max(self.chat.max_in_flight, self.chat.in_flight)
        return request

    def _trickle(self, status: int, headers: dict[str, str], data: bytes, every: float) -> None:
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.flush()
        for i in range(len(data)):
            if self.chat._stopping.wait(every):
                break
            self.wfile.write(data[i : i + 1])
            self.wfile.flush()
