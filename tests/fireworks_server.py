"""A local stand-in for Fireworks' dataset API on 127.0.0.1, for testing uploads and downloads offline.

:class:`LocalFireworksServer` implements the dataset calls rewardsmith makes
(create, get, ``:upload`` multipart, ``:getUploadEndpoint`` with its signed
``PUT`` URL and ``:validateUpload``, ``:getDownloadEndpoint`` with signed
``GET`` URLs), checks the bearer key on the API paths, and records every
request (method, path, headers, body) so a test can check what was sent.
``fail`` queues error answers for requests whose path contains a given text
(a quota, a 503, a 429 with ``Retry-After``). A wrong key is answered with a
message that echoes it, as careless servers do, so tests can check that the
client never repeats it.

>>> import httpx
>>> with LocalFireworksServer(api_key="k") as server:
...     answer = httpx.post(server.root + "/v1/accounts/a/datasets", json={"datasetId": "d", "dataset": {}},
...                         headers={"Authorization": "Bearer k"})
>>> answer.json()["state"], server.datasets["a/d"]["state"], len(server.requests)
('UPLOADING', 'UPLOADING', 1)
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import re
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from rewardsmith.http.testing import LocalServer, send_answer

__all__ = ["LocalFireworksServer", "Recorded"]

_DATASETS = re.compile(r"^/v1/accounts/([^/]+)/datasets(?:/([^/:]+)(?::(\w+))?)?$")


@dataclass
class Recorded:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    files: dict[str, tuple[str, bytes]] = field(default_factory=dict)

    @property
    def json(self) -> Any:
        """The body as JSON (``None`` when it is not)."""
        try:
            return json.loads(self.body)
        except ValueError:
            return None


class LocalFireworksServer(LocalServer):
    """Fireworks' dataset endpoints on a free port of 127.0.0.1; ``root`` is what ``FIREWORKS_API_BASE`` takes."""

    def __init__(self, api_key: str = "fw-test-key") -> None:
        super().__init__()
        self.api_key = api_key
        self.datasets: dict[str, dict[str, Any]] = {}
        self.files: dict[str, dict[str, bytes]] = {}
        self.requests: list[Recorded] = []
        self.failures: deque[tuple[str, int, dict[str, str], str]] = deque()
        self._signed: dict[str, tuple[str, str]] = {}
        self._lock = threading.Lock()

    def fail(self, path_part: str, status: int, message: str = "", headers: dict[str, str] | None = None) -> None:
        """Answer the next request whose path contains ``path_part`` with ``status`` and ``message``."""
        body = json.dumps({"error": {"code": status, "message": message}})
        self.failures.append((path_part, status, dict(headers or {}), body))

    def content(self, account: str, dataset_id: str) -> bytes:
        """The bytes uploaded to a dataset (its one file)."""
        files = self.files.get(f"{account}/{dataset_id}", {})
        return b"".join(files.values())

    def handler(self) -> type[BaseHTTPRequestHandler]:
        return _make_handler(self)

    # -- answers --------------------------------------------------------------------------------------

    def _scripted(self, path: str) -> tuple[int, dict[str, str], bytes] | None:
        with self._lock:
            for i, (part, status, headers, body) in enumerate(self.failures):
                if part in path:
                    del self.failures[i]
                    return status, {"Content-Type": "application/json", **headers}, body.encode()
        return None

    def answer(self, request: Recorded) -> tuple[int, dict[str, str], bytes]:
        """Status, headers and body for one request, as Fireworks would answer it (or as scripted by :meth:`fail`)."""
        scripted = self._scripted(request.path)
        if scripted is not None:
            return scripted
        if request.path.startswith("/signed/"):
            return self._signed_url(request)
        match = _DATASETS.match(request.path)
        if match is None:
            return _json(404, {"error": {"code": 404, "message": f"no route {request.path}"}})
        given = request.headers.get("Authorization", "")
        if given != f"Bearer {self.api_key}":
            return _json(401, {"error": {"code": 401, "message": f"invalid API key: {given.removeprefix('Bearer ')}"}})
        account, dataset_id, action = match.groups()
        key = f"{account}/{dataset_id}"
        if dataset_id is None and request.method == "POST":
            return self._create(account, request.json or {})
        if key not in self.datasets:
            return _json(404, {"error": {"code": 404, "message": f"dataset {key} not found"}})
        if action is None and request.method == "GET":
            return _json(200, self.datasets[key])
        if action == "upload" and request.method == "POST":
            name, data = request.files.get("file", ("", b""))
            self.files[key] = {name: data}
            self.datasets[key]["state"] = "READY"
            return _json(200, {"id": dataset_id, "object": "file", "bytes": len(data), "filename": name})
        if action == "getUploadEndpoint" and request.method == "POST":
            sizes = (request.json or {}).get("filenameToSize", {})
            return _json(200, {"filenameToSignedUrls": {name: self._sign(key, name, "PUT") for name in sizes}})
        if action == "validateUpload" and request.method == "POST":
            if not self.files.get(key):
                return _json(400, {"error": {"code": 400, "message": "no file was uploaded"}})
            self.datasets[key]["state"] = "READY"
            return _json(200, {})
        if action == "getDownloadEndpoint" and request.method == "GET":
            names = list(self.files.get(key, {}))
            return _json(200, {"filenameToSignedUrls": {name: self._sign(key, name, "GET") for name in names}})
        return _json(404, {"error": {"code": 404, "message": f"no route {request.method} {request.path}"}})

    def _create(self, account: str, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        dataset_id = str(body.get("datasetId") or "")
        key = f"{account}/{dataset_id}"
        if not dataset_id:
            return _json(400, {"error": {"code": 400, "message": "datasetId is required"}})
        if key in self.datasets:
            return _json(409, {"error": {"code": 409, "message": f"dataset {key} already exists"}})
        spec = body.get("dataset") or {}
        self.datasets[key] = {
            "name": f"accounts/{account}/datasets/{dataset_id}",
            "displayName": spec.get("displayName", ""),
            "format": spec.get("format", "FORMAT_UNSPECIFIED"),
            "exampleCount": spec.get("exampleCount", "0"),
            "state": "UPLOADING",
        }
        return _json(200, self.datasets[key])

    def _sign(self, key: str, name: str, method: str) -> str:
        token = f"{method.lower()}-{len(self._signed)}"
        self._signed[token] = (key, name)
        return f"{self.root}/signed/{token}?signature=local"

    def _signed_url(self, request: Recorded) -> tuple[int, dict[str, str], bytes]:
        token = request.path.removeprefix("/signed/").split("?")[0]
        if token not in self._signed or not token.startswith(request.method.lower()):
            return 403, {}, b"bad signature"
        key, name = self._signed[token]
        if request.method == "PUT":
            self.files.setdefault(key, {})[name] = request.body
            return 200, {}, b""
        return 200, {"Content-Type": "application/octet-stream"}, self.files[key][name]


def _json(status: int, payload: Any) -> tuple[int, dict[str, str], bytes]:
    return status, {"Content-Type": "application/json"}, json.dumps(payload).encode()


def _multipart(content_type: str, body: bytes) -> dict[str, tuple[str, bytes]]:
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + body
    )
    files = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        files[str(name)] = (part.get_filename() or "", part.get_payload(decode=True) or b"")
    return files


def _make_handler(server: LocalFireworksServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            content_type = self.headers.get("Content-Type", "")
            files = _multipart(content_type, body) if content_type.startswith("multipart/") else {}
            path = self.path.split("?")[0] if not self.path.startswith("/signed/") else self.path
            request = Recorded(self.command, path, dict(self.headers.items()), body, files)
            with server._lock:
                server.requests.append(request)
            send_answer(self, *server.answer(request))

        do_GET = do_POST = do_PUT = _serve

    return Handler
