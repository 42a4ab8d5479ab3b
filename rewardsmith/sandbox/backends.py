"""Sandbox backends by name: ``local``, ``limits``, ``sandboxfusion``, and any registered with :func:`register_backend`.

* ``local``: bubblewrap when it works here, else resource limits only, after a
  loud warning (:class:`~rewardsmith.sandbox.local.LocalBackend`);
* ``limits``: resource limits only;
* ``sandboxfusion``: a SandboxFusion server's ``/run_code`` API
  (:class:`~rewardsmith.sandbox.sandboxfusion.SandboxFusionBackend`, setting ``url``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.lookup import Registry
from rewardsmith.core.names import did_you_mean
from rewardsmith.sandbox.backend import Backend
from rewardsmith.sandbox.local import LocalBackend
from rewardsmith.sandbox.sandboxfusion import SandboxFusionBackend

__all__ = ["BACKENDS", "backend_names", "get_backend", "register_backend"]

#: The backends, on the registry mechanism names are looked up with (:class:`~rewardsmith.core.lookup.Registry`);
#: an installed package can declare one in the ``rewardsmith.sandbox_backends`` entry-point group.
BACKENDS = Registry("sandbox backend", "rewardsmith.sandbox_backends")


def register_backend(name: str, factory: Callable[..., Backend], *, replace: bool = False) -> None:
    """Make ``factory(**settings)`` available as the backend ``name``.

    >>> from rewardsmith.sandbox import LocalBackend
    >>> register_backend("mine", LocalBackend)
    >>> type(get_backend("mine")).__name__
    'LocalBackend'
    >>> BACKENDS.unregister("mine")
    """
    known = BACKENDS.registered(name)
    if known is not None and known is not factory and not replace:
        raise RewardConfigError(f"a sandbox backend named {name!r} is already registered; pass replace=True")
    BACKENDS.register(name, factory, replace=True)


register_backend("local", LocalBackend)
register_backend("limits", functools.partial(LocalBackend, isolation="limits"))
register_backend("sandboxfusion", SandboxFusionBackend)


def backend_names() -> list[str]:
    """The registered backend names.

    >>> backend_names()[:3]
    ['limits', 'local', 'sandboxfusion']
    """
    return sorted(BACKENDS.registered_names())


def get_backend(spec: str | Backend, **settings: Any) -> Backend:
    """A backend by name with its settings (a :class:`Backend` is returned as it is).

    >>> get_backend("limits").isolation
    'limits'
    >>> get_backend("sandbox_fusion")
    Traceback (most recent call last):
    ...
    rewardsmith.core.errors.RewardConfigError: unknown sandbox backend 'sandbox_fusion'. Did you mean: ...
    """
    if isinstance(spec, Backend):
        if settings:
            raise RewardConfigError("settings are given to a backend by name, not to a backend object")
        return spec
    factory = (BACKENDS.registered(spec) or BACKENDS.get(spec)) if isinstance(spec, str) and spec else None
    if factory is None:
        names = BACKENDS.names()
        raise RewardConfigError(
            f"unknown sandbox backend {spec!r}.{did_you_mean(str(spec), names)} Backends: {', '.join(names)}"
        )
    try:
        return factory(**settings)
    except TypeError as exc:
        raise RewardConfigError(f"sandbox backend {spec!r}: {exc}") from None
