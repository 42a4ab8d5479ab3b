"""A config's ``imports:``: the modules and files it names, imported before any name is resolved.

Errors say which entry and what is wrong.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from rewardsmith.core.problems import ConfigError, ConfigProblems

__all__ = ["import_modules", "resolve_import_path"]


def _is_file(spec: str) -> bool:
    return spec.endswith(".py") or "/" in spec or "\\" in spec


def resolve_import_path(spec: str, base: Path | None) -> str:
    """A file-path import made absolute from ``base`` (the config's folder) when the file is there.

    Module names are left as they are; a relative path that is not under
    ``base`` is left for :func:`import_modules` to look up from the current folder.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "my_rewards.py").write_text("")
    >>> resolve_import_path("./my_rewards.py", folder) == str(folder / "my_rewards.py")
    True
    >>> resolve_import_path("my_pkg.rewards", folder)
    'my_pkg.rewards'
    """
    if not isinstance(spec, str) or not _is_file(spec) or base is None:
        return spec
    path = Path(spec).expanduser()
    if not path.is_absolute() and (base / path).is_file():
        return str(base / path)
    return spec


def import_modules(imports: Any, problems: ConfigProblems | None = None, *, key: str = "imports") -> bool:
    """Import the modules (``pkg.mod``) and files (``./my_rewards.py``) a config lists; whether all worked.

    Rewards and converters they register with ``@register_reward`` /
    ``register_converter`` become known by name. Files are loaded with
    :func:`rewardsmith.core.pickling.load_module_from_file`, under a stable
    name, so worker processes can load them again. Each failure names the
    import and its exception; with ``problems`` they are recorded there,
    otherwise the first raises.

    >>> import_modules(["json", "os.path"])
    True
    >>> problems = ConfigProblems()
    >>> import_modules(["no_such_module_here"], problems)
    False
    >>> print(problems.errors[0])
    imports[0]: cannot import 'no_such_module_here': ModuleNotFoundError: No module named 'no_such_module_here'. ...
    """
    collector = problems if problems is not None else ConfigProblems()
    before = len(collector)
    if isinstance(imports, str):
        imports = [imports]
    if not isinstance(imports, (list, tuple)):
        collector.add(f"{key} takes a list of module names (pkg.module) or files (./my_rewards.py), got {imports!r}")
        imports = []
    for i, spec in enumerate(imports):
        with collector.check():
            _import_one(spec, f"{key}[{i}]")
    if problems is None:
        collector.raise_if_any()
    return len(collector) == before


def _import_one(spec: Any, where: str) -> None:
    from rewardsmith.core.pickling import load_module_from_file

    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError(f"{where}: give a module name (pkg.module) or a file (./my_rewards.py), got {spec!r}")
    spec = spec.strip()
    if _is_file(spec):
        path = Path(spec).expanduser()
        if not path.is_file():
            raise ConfigError(
                f"{where}: the file {spec!r} does not exist (relative paths are looked up in the config's folder, "
                f"then in the current folder {str(Path.cwd())!r})"
            )
        try:
            load_module_from_file(path)
        except Exception as exc:
            raise ConfigError(f"{where}: importing {spec!r} failed: {type(exc).__name__}: {exc}") from None
        return
    try:
        importlib.import_module(spec)
    except Exception as exc:
        hint = (
            " A module is imported from the Python path; to load a file, give its path (./my_rewards.py), or add "
            "its folder to PYTHONPATH."
            if isinstance(exc, ModuleNotFoundError)
            else ""
        )
        raise ConfigError(f"{where}: cannot import {spec!r}: {type(exc).__name__}: {exc}.{hint}") from None
