"""The Hugging Face Hub in the dry run: offline first, one bounded reachability probe, push settings checked.

A model named by its Hub id is looked up in the local cache first; the Hub is
asked only when the cache lacks it, and only after one connection probe of
:data:`PROBE_SECONDS`, so an unreachable Hub is reported in seconds rather
than after the Hub client's retries. ``push_to_hub: true`` is checked the
same way before anything loads: offline mode, a token, and the probe.
"""

from __future__ import annotations

import os
import socket
import threading
from typing import Any
from urllib.parse import urlparse

from rewardsmith.core.problems import ConfigError

__all__ = ["PROBE_SECONDS", "check_push_to_hub", "hub_endpoint", "hub_offline", "hub_unreachable"]

#: How long the reachability probe waits for a connection to the Hub.
PROBE_SECONDS = 3.0

_TRUE = ("1", "true", "yes", "on")


def hub_offline() -> bool:
    """Whether offline mode is set (``HF_HUB_OFFLINE`` or ``TRANSFORMERS_OFFLINE``)."""
    return any(os.environ.get(k, "").strip().lower() in _TRUE for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def hub_endpoint() -> str:
    """The Hub's address (``HF_ENDPOINT``, else huggingface.co)."""
    return os.environ.get("HF_ENDPOINT", "").strip() or "https://huggingface.co"


def hub_unreachable(timeout: float = PROBE_SECONDS) -> str | None:
    """Why the Hub cannot be reached (``None`` when a connection opens within ``timeout`` seconds).

    Name resolution and the connection run on a helper thread, so a resolver
    that hangs is bounded too.

    >>> os.environ["HF_ENDPOINT"] = "http://127.0.0.1:9"
    >>> hub_unreachable().startswith("http://127.0.0.1:9 refused")
    True
    >>> del os.environ["HF_ENDPOINT"]
    """
    url = urlparse(hub_endpoint())
    host = url.hostname or "huggingface.co"
    port = url.port or (80 if url.scheme == "http" else 443)
    outcome: list[str | None] = []

    def probe() -> None:
        try:
            socket.create_connection((host, port), timeout=timeout).close()
            outcome.append(None)
        except ConnectionRefusedError:
            outcome.append(f"{hub_endpoint()} refused the connection")
        except OSError as exc:
            outcome.append(f"{hub_endpoint()} is out of reach ({type(exc).__name__}: {exc})")

    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    thread.join(timeout + 0.5)
    if not outcome:
        return f"{hub_endpoint()} did not answer within {timeout:g} s"
    return outcome[0]


def check_push_to_hub(args: Any) -> None:
    """A :class:`ConfigError` when ``push_to_hub`` is on and the push could not work: offline, no token, no Hub."""
    if not getattr(args, "push_to_hub", False):
        return
    fix = "or set trainer.push_to_hub: false and upload the output_dir later (hf upload REPO OUTPUT_DIR)"
    if hub_offline():
        raise ConfigError(f"trainer.push_to_hub is on but offline mode is set (HF_HUB_OFFLINE); unset it, {fix}")
    token = getattr(args, "hub_token", None)
    if not token:
        from huggingface_hub import get_token

        token = get_token()
    if not token:
        raise ConfigError(
            f"trainer.push_to_hub is on but there is no Hub token: run `hf auth login`, set HF_TOKEN, or set "
            f"trainer.hub_token; {fix}"
        )
    why = hub_unreachable()
    if why:
        raise ConfigError(f"trainer.push_to_hub is on but the Hub cannot be reached: {why}; {fix}")
