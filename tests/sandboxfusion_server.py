"""A SandboxFusion-compatible ``POST /run_code`` server on 127.0.0.1 for tests: it really runs the code.

Requests are answered as SandboxFusion answers them (``status``, ``message``,
``compile_result``, ``run_result``), by running the code with rewardsmith's own
local sandbox; ``script`` holds replies to give first, one per request
(an HTTP error status, or a ``SandboxError`` answer). Every request body is kept.
"""

from __future__ import annotations

import base64
import json
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler
from typing import Any

from rewardsmith.http.testing import LocalServer, send_answer
from rewardsmith.sandbox import Limits, LocalBackend, Program, RunResult

LANGUAGES = {"python": "python", "cpp": "cpp", "nodejs": "javascript"}


def _command(result: RunResult | None) -> dict[str, Any] | None:
    if result is None:
        return None
    status = "TimeLimitExceeded" if result.status == "timeout" else "Finished"
    code = result.exit_code if result.exit_code is not None else (-result.signal if result.signal else None)
    return {
        "status": status,
        "execution_time": result.seconds,
        "return_code": code,
        "stdout": result.stdout,
        "stderr": result.stderr,
    }


class FakeSandboxFusion(LocalServer):
    """See the module docs."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[dict[str, Any]] = []
        self.script: deque[tuple[int, dict[str, Any]]] = deque()
        self.backend = LocalBackend(prestart=False)
        self._lock = threading.Lock()

    def run_code(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.requests.append(body)
            if self.script:
                return self.script.popleft()
        files = {name: base64.b64decode(data).decode() for name, data in (body.get("files") or {}).items()}
        memory = body.get("memory_limit_MB", -1)
        limits = Limits(timeout=float(body.get("run_timeout", 10)), memory_mb=memory if memory > 0 else 8192)
        program = Program(body["code"], LANGUAGES[body["language"]], files)
        execution = self.backend.run(
            program, [body.get("stdin") or ""], limits, compile_timeout=float(body.get("compile_timeout", 10))
        )
        compiled = execution.compile
        run = execution.runs[0] if execution.compiled else None
        failed = (compiled is not None and not compiled.ok) or (run is not None and not run.ok)
        return 200, {
            "status": "Failed" if failed else "Success",
            "message": "",
            "compile_result": _command(compiled),
            "run_result": _command(run),
        }

    def handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                if self.path.rstrip("/") != "/run_code":
                    status, answer = 404, {"detail": "Not Found"}
                else:
                    status, answer = server.run_code(body)
                data = json.dumps(answer).encode()
                send_answer(self, status, {"Content-Type": "application/json"}, data)

        return Handler
