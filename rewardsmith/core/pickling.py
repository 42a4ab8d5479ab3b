"""Pickling rewards: by reference where possible, by value where it must be.

``@reward`` replaces a module's function with a reward object, so the plain
``pickle`` rule (look the function up by its module and name) would find the
reward, not the function. Function rewards therefore pickle a reference that
is resolved by unwrapping. Worker processes get the reward through
cloudpickle, which also carries rewards defined in ``__main__``, in a notebook
or in a file loaded by path.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

__all__ = ["dumps_for_worker", "file_modules", "function_ref", "load_module_from_file", "resolve_function_ref"]

_BY_VALUE: contextvars.ContextVar[bool] = contextvars.ContextVar("rewardsmith_by_value", default=False)
_FILE_MODULES: dict[str, str] = {}


def file_modules() -> dict[str, str]:
    """Module names loaded from files by path, mapped to their files."""
    return dict(_FILE_MODULES)


def load_module_from_file(path: str | Path) -> Any:
    """Import a ``.py`` file by path, once, under a stable private module name.

    Worker processes load the same files again under the same names, so
    objects defined there pickle by reference. As when Python runs a file as a
    script, the file's folder is importable first, so the modules beside it
    (``import gsm8k`` next to ``verl_score.py``) are found.
    """
    resolved = Path(path).expanduser().resolve()
    folder = str(resolved.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    stem = "".join(ch if ch.isalnum() else "_" for ch in resolved.stem)
    module_name = f"rewardsmith_user_{stem}_{hashlib.sha1(str(resolved).encode()).hexdigest()[:8]}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, resolved)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {resolved} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    _FILE_MODULES[module_name] = str(resolved)
    return module


def _unwrap(obj: Any) -> Any:
    return getattr(obj, "fn", obj)


def resolve_function_ref(module: str, qualname: str) -> Any:
    """The function at ``module.qualname``, unwrapped from a reward object if needed."""
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return _unwrap(obj)


def function_ref(fn: Callable[..., Any]) -> Any:
    """What to pickle in place of ``fn``: a ``(module, qualname)`` reference, or ``fn`` itself."""
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None)
    if not module or not qualname or "<locals>" in qualname or "<lambda>" in qualname:
        return fn
    if module == "__main__" and _BY_VALUE.get():
        return fn
    try:
        found = resolve_function_ref(module, qualname)
    except Exception:
        return fn
    return ("ref", module, qualname) if found is fn else fn


@contextlib.contextmanager
def _by_value() -> Iterator[None]:
    token = _BY_VALUE.set(True)
    try:
        yield
    finally:
        _BY_VALUE.reset(token)


def dumps_for_worker(obj: Any) -> bytes:
    """Pickle ``obj`` for a worker process (cloudpickle, ``__main__`` by value)."""
    import cloudpickle

    with _by_value():
        return cloudpickle.dumps(obj)
