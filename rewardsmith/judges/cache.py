"""A persistent judge cache in SQLite: the same request is never paid for twice.

The key is a SHA-256 of the request as sent: the model, the rendered messages
(so the template and every input that went into it), the sampling settings and
the endpoint. A rerun, a resumed training, or the same completion sampled twice
(common in GRPO groups) is answered from the cache; a changed rubric, template
or judge model is a new question. What is stored is the judge's raw answer and
its token counts; the verdict is read from it again on every hit.

Only answers that held a verdict are stored: an answer the parser could not
read is asked again next time. The API key is never part of the key or the
row (only a hash of the endpoint is, so that two servers with the same model
name do not share answers).

Safe across threads and processes (WAL journal, busy timeout); a connection
is opened per process, so a cache survives pickling and forking.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rewardsmith.core.errors import RewardConfigError

__all__ = ["CachedAnswer", "JudgeCache", "default_cache_path", "request_key"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    content TEXT NOT NULL,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    created REAL NOT NULL
)
"""


def default_cache_path() -> Path:
    """``$REWARDSMITH_CACHE_DIR/judges.sqlite``, else ``$XDG_CACHE_HOME/rewardsmith/...``, else ``~/.cache/...``."""
    base = os.environ.get("REWARDSMITH_CACHE_DIR")
    if base:
        return Path(base).expanduser() / "judges.sqlite"
    xdg = os.environ.get("XDG_CACHE_HOME")
    root = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return root / "rewardsmith" / "judges.sqlite"


def request_key(base_url: str, body: dict[str, Any]) -> str:
    """The cache key of a chat request: SHA-256 of the endpoint and the canonical JSON body.

    >>> a = request_key("http://x/v1", {"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    >>> b = request_key("http://x/v1/", {"messages": [{"role": "user", "content": "hi"}], "model": "m"})
    >>> a == b, len(a)
    (True, 64)
    """
    canonical = json.dumps(
        {"endpoint": base_url.rstrip("/"), "body": body}, sort_keys=True, ensure_ascii=False, separators=(",", ":")
    )
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()  # a lone surrogate is no crash


@dataclass(frozen=True)
class CachedAnswer:
    """A stored answer: the judge's text and the token counts of the request that produced it."""

    content: str
    prompt_tokens: int | None
    completion_tokens: int | None


class JudgeCache:
    """Answers by request key, in an SQLite file (created with its folder on first use).

    >>> import tempfile, os
    >>> cache = JudgeCache(os.path.join(tempfile.mkdtemp(), "judges.sqlite"))
    >>> cache.get("k") is None
    True
    >>> cache.put("k", "m", CachedAnswer("Score: 7", 100, 5))
    >>> cache.get("k")
    CachedAnswer(content='Score: 7', prompt_tokens=100, completion_tokens=5)
    >>> len(cache)
    1
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pid = -1

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None or self._pid != os.getpid():
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(str(self.path), timeout=30, check_same_thread=False, isolation_level=None)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute(_SCHEMA)
            except (OSError, sqlite3.Error) as exc:
                raise RewardConfigError(
                    f"cannot open the judge cache at {str(self.path)!r} ({exc}); give the reward another "
                    "cache=PATH, or cache=None to turn caching off"
                ) from exc
            self._conn, self._pid = conn, os.getpid()
        return self._conn

    def open(self) -> None:
        """Open (and create) the cache now; a :class:`RewardConfigError` says what to do if it cannot be."""
        with self._lock:
            self._connection()

    def get(self, key: str) -> CachedAnswer | None:
        """The stored answer for ``key``, or ``None``."""
        with self._lock:
            row = (
                self._connection()
                .execute("SELECT content, prompt_tokens, completion_tokens FROM answers WHERE key = ?", (key,))
                .fetchone()
            )
        return None if row is None else CachedAnswer(row[0], row[1], row[2])

    def put(self, key: str, model: str, answer: CachedAnswer) -> None:
        """Store (or replace) the answer for ``key`` (an answer that is not valid Unicode is not stored)."""
        # an answer with a lone surrogate cannot be stored: it is asked again next time rather than stored mangled
        with self._lock, contextlib.suppress(UnicodeEncodeError):
            self._connection().execute(
                "INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?, ?)",
                (key, model, answer.content, answer.prompt_tokens, answer.completion_tokens, time.time()),
            )

    def __len__(self) -> int:
        with self._lock:
            return int(self._connection().execute("SELECT COUNT(*) FROM answers").fetchone()[0])

    def close(self) -> None:
        """Close this process's connection (it reopens on next use)."""
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"])  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"JudgeCache({str(self.path)!r})"
