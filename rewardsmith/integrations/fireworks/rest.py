"""The Fireworks REST calls for datasets: create, upload (one request, or a signed URL), download.

Shapes, from Fireworks' API reference (Gateway REST API):

* create: ``POST /v1/accounts/{account}/datasets`` with
  ``{"datasetId": ID, "dataset": {"displayName", "format", "exampleCount"}}``;
* upload up to 150 MB: ``POST .../datasets/{id}:upload``, the file as the
  multipart field ``file``;
* larger files: ``POST .../datasets/{id}:getUploadEndpoint`` with
  ``{"filenameToSize": {name: bytes}}`` gives ``filenameToSignedUrls``; the file
  is ``PUT`` there (no API key: the URL is signed), then
  ``POST .../datasets/{id}:validateUpload``;
* read back: ``GET .../datasets/{id}:getDownloadEndpoint`` gives
  ``filenameToSignedUrls``, each fetched with a plain ``GET``;
* ``GET .../datasets/{id}`` describes a dataset (its ``state``).

The key comes from ``FIREWORKS_API_KEY`` and goes out as a bearer token to the
API host only, never to a signed URL; ``FIREWORKS_API_BASE`` replaces the host.
Requests go through rewardsmith's one HTTP client with its retries
(:func:`rewardsmith.http.retry.send_with_retries`): timeouts, connection
errors, 408/425/429 and 5xx are retried with back-off (honouring
``Retry-After``), except a 429 that says a quota is used up, which no wait fixes.
The key is never in a message, a log line or a ``repr``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from rewardsmith.core.async_reward import run_sync
from rewardsmith.core.errors import RewardsmithError
from rewardsmith.http.retry import EndpointRequestError, RetryPolicy, send_with_retries

__all__ = ["DEFAULT_API_BASE", "SINGLE_UPLOAD_LIMIT", "FireworksClient", "FireworksError"]

DEFAULT_API_BASE = "https://api.fireworks.ai"
#: Largest file sent in one ``:upload`` request; larger ones go through a signed URL.
SINGLE_UPLOAD_LIMIT = 150 * 1024 * 1024
_RETRY = frozenset({408, 425, 429})
_CHUNK = 1 << 20


class FireworksError(RewardsmithError):
    """A Fireworks request failed: a rejected key, a dataset that exists, a quota, or the service itself."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def _retryable(status: int, message: str) -> bool:
    if "quota" in message.lower():
        return False
    return status in _RETRY or status >= 500


class FireworksClient:
    """Dataset calls to the Fireworks REST API (key from ``FIREWORKS_API_KEY``, host from ``FIREWORKS_API_BASE``).

    >>> client = FireworksClient(api_key="fw-test", base_url="http://127.0.0.1:8000")
    >>> client  # the key is never shown
    FireworksClient(base_url='http://127.0.0.1:8000')

    Its calls (``create_dataset``, ``upload``, ``get_dataset``, ...) talk to the
    API; the test suite runs them against a local stand-in of it.
    """

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        policy: RetryPolicy | None = None,
        timeout: float = 120.0,
    ) -> None:
        key = (api_key or os.environ.get("FIREWORKS_API_KEY", "")).strip()
        if not key:
            raise FireworksError(
                "no Fireworks API key: export FIREWORKS_API_KEY=... (create one at fireworks.ai, under API keys)"
            )
        base = (base_url or os.environ.get("FIREWORKS_API_BASE") or DEFAULT_API_BASE).rstrip("/")
        if not base.startswith(("http://", "https://")):
            raise FireworksError(f"FIREWORKS_API_BASE must be an http(s) URL like {DEFAULT_API_BASE!r}, got {base!r}")
        self.base_url = base
        self.policy = policy or RetryPolicy()
        self.timeout = timeout
        self.__key = key

    def __repr__(self) -> str:  # never the key
        return f"FireworksClient(base_url={self.base_url!r})"

    def _url(self, account: str, dataset_id: str = "", action: str = "") -> str:
        path = f"{self.base_url}/v1/accounts/{quote(account, safe='')}/datasets"
        if dataset_id:
            path += f"/{quote(dataset_id, safe='')}"
        return path + (f":{action}" if action else "")

    # -- calls ----------------------------------------------------------------------------------------

    def create_dataset(
        self, account: str, dataset_id: str, *, display_name: str, example_count: int, format: str = "CHAT"
    ) -> dict[str, Any]:
        """Create the dataset record (no data yet); its description as Fireworks returns it."""
        body = {
            "datasetId": dataset_id,
            "dataset": {"displayName": display_name, "format": format, "exampleCount": str(example_count)},
        }
        return self._json("POST", self._url(account), f"creating dataset {dataset_id!r}", json=body)

    def get_dataset(self, account: str, dataset_id: str) -> dict[str, Any]:
        """The dataset's description (``state`` is ``UPLOADING`` until its data is in, then ``READY``)."""
        return self._json("GET", self._url(account, dataset_id), f"reading dataset {dataset_id!r}")

    def upload(self, account: str, dataset_id: str, path: Path, *, single_limit: int = SINGLE_UPLOAD_LIMIT) -> None:
        """Upload ``path`` as the dataset's data: one multipart request, or via a signed URL above ``single_limit``."""
        size = path.stat().st_size
        what = f"uploading {path.name} to dataset {dataset_id!r}"
        if size <= single_limit:

            async def send(sender: Any) -> Any:
                with open(path, "rb") as handle:  # opened anew for every attempt
                    files = {"file": (path.name, handle, "application/jsonl")}
                    return await sender.request(
                        "POST", self._url(account, dataset_id, "upload"), self.timeout, files=files
                    )

            run_sync(self._call(send, what))
            return
        answer = self._json(
            "POST",
            self._url(account, dataset_id, "getUploadEndpoint"),
            what,
            json={"filenameToSize": {path.name: str(size)}},
        )
        signed = (answer.get("filenameToSignedUrls") or {}).get(path.name)
        if not isinstance(signed, str):
            raise FireworksError(f"{what}: Fireworks gave no upload URL for {path.name!r} (answer: {answer!r})")
        headers = {
            "Content-Type": "application/octet-stream",
            "Content-Length": str(size),
            "X-Goog-Content-Length-Range": f"{size},{size}",
        }

        async def put(sender: Any) -> Any:
            return await sender.request("PUT", signed, self.timeout, content=_chunks(path), headers=headers)

        run_sync(self._call(put, what, authorized=False))
        self._json("POST", self._url(account, dataset_id, "validateUpload"), what, json={})

    def download(self, account: str, dataset_id: str, folder: Path) -> list[Path]:
        """Download the dataset's files into ``folder``; their paths."""
        what = f"downloading dataset {account}/{dataset_id}"
        answer = self._json("GET", self._url(account, dataset_id, "getDownloadEndpoint"), what)
        urls = answer.get("filenameToSignedUrls") or {}
        if not isinstance(urls, dict) or not urls:
            raise FireworksError(f"{what}: Fireworks lists no files for it (is its upload finished?)")
        folder.mkdir(parents=True, exist_ok=True)
        paths = []
        for name, url in sorted(urls.items()):
            target = folder / Path(str(name)).name
            body = run_sync(
                self._call(lambda sender, url=url: sender.request("GET", url, self.timeout), what, authorized=False)
            )
            target.write_bytes(body.content)
            paths.append(target)
        return paths

    # -- plumbing -------------------------------------------------------------------------------------

    def _json(self, method: str, url: str, what: str, *, json: Any = None) -> dict[str, Any]:
        async def send(sender: Any) -> Any:
            return await sender.request(method, url, self.timeout, json=json)

        response = run_sync(self._call(send, what))
        try:
            payload = response.json() if response.content else {}
        except ValueError:
            payload = {}
        return payload if isinstance(payload, dict) else {}

    async def _call(self, send: Callable[[Any], Any], what: str, *, authorized: bool = True) -> Any:
        from rewardsmith.http.transport import HTTPSender, proxy_for

        key = self.__key
        sender = HTTPSender({"Authorization": f"Bearer {key}"} if authorized else {}, proxy_for(self.base_url))

        @contextlib.asynccontextmanager
        async def slot() -> AsyncIterator[Any]:
            yield sender

        try:
            return await send_with_retries(
                slot,
                send,
                lambda response, attempts: response,
                policy=self.policy,
                timeout=self.timeout,
                secret=key,
                endpoint=f"Fireworks ({self.base_url})",
                retryable=_retryable,
                advice=lambda status: "",
            )
        except EndpointRequestError as exc:
            raise FireworksError(_explain(exc, what), exc.status) from None
        finally:
            await sender.aclose()


async def _chunks(path: Path) -> AsyncIterator[bytes]:
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            yield chunk


def _explain(exc: EndpointRequestError, what: str) -> str:
    status, message = exc.status, exc.server_message
    said = f" (Fireworks said: {message})" if message else ""
    if status in (401, 403) and "quota" not in message.lower():
        return (
            f"{what}: Fireworks refused the API key in FIREWORKS_API_KEY (HTTP {status}){said}. Check the key, and "
            "that it belongs to this account (--account / FIREWORKS_ACCOUNT_ID)"
        )
    if status == 409 or "already exists" in message.lower():
        return (
            f"{what}: a dataset with this id already exists{said}. Pick another --dataset-id, or delete the old one "
            "(firectl delete dataset ID)"
        )
    if "quota" in message.lower():
        return (
            f"{what}: a Fireworks quota is used up (HTTP {status}){said}. Free some (delete old datasets) or raise it"
        )
    if status == 404:
        return f"{what}: not found (HTTP 404){said}. Check the account id and the dataset id"
    return f"{what}: {exc}"
