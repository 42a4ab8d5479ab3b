"""Which isolation works on this machine, found by starting real sandboxes (once per process).

:func:`detect` finds ``bwrap`` (the ``bwrap`` setting, ``$REWARDSMITH_BWRAP``,
or ``PATH``) and a Python interpreter the sandbox can run (the ``python``
setting; else this one, resolved; else the system's ``/usr/bin/python3``:
as root, programs run as an unprivileged uid, which must be able to run it), and starts
one sandbox with them. If it runs, programs run in namespaces. If not, the
reason is kept and, under ``isolation="auto"``, programs run with resource
limits only, after one loud warning; ``isolation="require"`` refuses instead
(:class:`~rewardsmith.sandbox.limits.SandboxUnavailableError`), and
``isolation="limits"`` asks for limits only.
"""

from __future__ import annotations

import logging
import os
import subprocess
import threading
from dataclasses import replace

from rewardsmith.core.errors import RewardConfigError
from rewardsmith.sandbox.isolation import (
    ISOLATION_CHOICES,
    OPTIONAL_FEATURES,
    SANDBOX_UID,
    Isolation,
    find_bwrap,
    interpreter_candidates,
)
from rewardsmith.sandbox.launch import Request, run_runner
from rewardsmith.sandbox.limits import Limits, SandboxError, SandboxUnavailableError

__all__ = ["detect", "forget_detection"]

logger = logging.getLogger("rewardsmith")

_CACHE: dict[tuple, Isolation] = {}
_LOCK = threading.Lock()
_WARNED: set[str] = set()
_PROBE = Limits(timeout=30)
_ERRORS = (SandboxError, OSError, subprocess.SubprocessError)


def _prefix(python: str) -> str:
    result = subprocess.run(
        [python, "-I", "-S", "-c", "import sys; print(sys.base_prefix)"],
        capture_output=True,
        text=True,
        env={},
        timeout=60,
        check=False,
    )
    if result.returncode != 0:
        raise SandboxError(f"{python} does not run: {result.stderr.strip()[-300:]}")
    return result.stdout.strip()


def _works(iso: Isolation) -> str | None:
    """``None`` when an empty job runs to the end under ``iso``, else what went wrong."""
    launch = run_runner(iso, _PROBE, Request("run", {"steps": []}, wall=60))
    if launch.ending == "done":
        return None
    return launch.stderr.strip()[-500:] or f"the sandbox ended without an answer ({launch.ending})"


def _namespaces(bwrap: str, python: str, prefix: str) -> Isolation:
    version = subprocess.run([bwrap, "--version"], capture_output=True, text=True, env={}, check=False, timeout=30)
    uid = SANDBOX_UID if os.geteuid() == 0 else None
    iso = Isolation("namespaces", "", python, prefix, bwrap, version.stdout.strip() or None, uid, OPTIONAL_FEATURES)
    for _ in range(len(OPTIONAL_FEATURES) + 1):
        error = _works(iso)
        if error is None:
            who = "an unprivileged uid of their own" if uid is not None else "this user"
            return replace(iso, reason=f"bubblewrap works here; programs run in their own namespaces as {who}")
        unknown = [f for f in iso.features if f"Unknown option {f}" in error or f"unrecognized option '{f}" in error]
        if not unknown:
            raise SandboxError(error)
        iso = replace(iso, features=tuple(f for f in iso.features if f not in unknown))
    raise SandboxError("bubblewrap rejected the sandbox's options")


def _limits_only(python: str, prefix: str) -> Isolation:
    iso = Isolation("limits", "", python, prefix)
    error = _works(iso)
    if error is not None:
        raise SandboxError(error)
    return iso


def _warn_once(message: str) -> None:
    if message not in _WARNED:
        _WARNED.add(message)
        logger.warning(message)


def detect(isolation: str = "auto", bwrap: str | None = None, python: str | None = None) -> Isolation:
    """How programs run here under the ``isolation`` setting (probed once per process and settings)."""
    if isolation not in ISOLATION_CHOICES:
        raise RewardConfigError(
            f"isolation must be one of {', '.join(map(repr, ISOLATION_CHOICES))}, got {isolation!r}"
        )
    # What decides the bwrap executable, not the lookup itself (a search of PATH at every program)
    key = (isolation, bwrap, os.environ.get("REWARDSMITH_BWRAP"), os.environ.get("PATH"), python, os.geteuid())
    with _LOCK:
        if key not in _CACHE:
            _CACHE[key] = _detect(isolation, find_bwrap(bwrap), python)
    iso = _CACHE[key]
    if not iso.isolated and isolation == "auto":
        _warn_once(
            "SANDBOX WARNING: programs run with resource limits only, without namespace isolation "
            f"({iso.reason}). They can use the network, read the files their user may read, write where it may "
            "write, and see other processes. Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) where "
            "user namespaces are allowed, or set isolation='require' to refuse to run; "
            "`rewardsmith sandbox doctor` says more."
        )
    return iso


def forget_detection() -> None:
    """Probe again on the next :func:`detect` (after installing bubblewrap, say)."""
    with _LOCK:
        _CACHE.clear()
        _WARNED.clear()


def _detect(isolation: str, bwrap: str | None, python: str | None) -> Isolation:
    problems: list[str] = []
    prefixes: dict[str, str] = {}
    for candidate in interpreter_candidates(python):
        try:
            prefixes[candidate] = _prefix(candidate)
        except _ERRORS as exc:
            problems.append(f"{candidate}: {exc}")
    if isolation != "limits":
        if bwrap is None:
            problems.append("bubblewrap (bwrap) is not installed")
        elif not os.access(bwrap, os.X_OK):
            problems.append(f"bubblewrap was not found at {bwrap}")
        else:
            for candidate, prefix in prefixes.items():
                try:
                    return replace(_namespaces(bwrap, candidate, prefix), problems=tuple(problems))
                except _ERRORS as exc:
                    problems.append(f"bubblewrap with {candidate}: {exc}")
        if isolation == "require":
            raise SandboxUnavailableError(
                "isolation='require' but namespaces cannot be used here: " + "; ".join(problems)
            )
    for candidate, prefix in prefixes.items():
        try:
            iso = _limits_only(candidate, prefix)
        except _ERRORS as exc:
            problems.append(f"limits-only with {candidate}: {exc}")
            continue
        reason = "isolation='limits' was asked for" if isolation == "limits" else "; ".join(problems)
        return replace(iso, reason=reason, problems=tuple(problems))
    raise SandboxError("no Python interpreter can run the sandbox's runner here: " + "; ".join(problems))
