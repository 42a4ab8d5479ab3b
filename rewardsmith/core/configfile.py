"""Config files: reading a YAML file into a mapping, and the modules a config's ``imports:`` names.

Errors say which file, which entry and what is wrong.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any

from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.problems import ConfigError, ConfigProblems

__all__ = ["MAX_YAML_NODES", "import_modules", "load_yaml", "read_config_file", "resolve_import_path"]


def read_config_file(
    path: str | os.PathLike[str], *, what: str, sections: str, error: type[RewardConfigError] = RewardConfigError
) -> dict[str, Any]:
    """The mapping a YAML config file holds; ``error`` for a missing file, bad YAML, or not a mapping.

    ``what`` names the kind of config ("training config"), ``sections`` the
    keys it should have, for the messages.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "c.yaml"
    >>> _ = path.write_text("rewards: [think_format]")
    >>> read_config_file(path, what="config", sections="rewards")
    {'rewards': ['think_format']}
    """
    path = Path(path).expanduser()
    if not path.is_file():
        raise error(f"{what} file {str(path)!r} does not exist; give the path of a YAML file")
    loaded = load_yaml(path.read_text(encoding="utf-8"), repr(str(path)), error)
    if loaded is None:
        raise error(f"{str(path)!r} is empty; a {what} needs {sections}")
    if not isinstance(loaded, dict):
        raise error(f"{str(path)!r} must hold a mapping of sections ({sections}), not a {type(loaded).__name__}")
    return loaded


#: The most values a YAML document may expand to, its aliases (``*name``) counted each time they are used.
MAX_YAML_NODES = 100_000


def load_yaml(text: str, where: str, error: type[RewardConfigError] = RewardConfigError) -> Any:
    r"""The data a YAML text holds, read safely and bounded: the one YAML reader of configs.

    Aliases make a YAML file small and its data huge (a "billion laughs" of
    nested ``*name`` references takes a few hundred bytes): the document's
    values are counted with every alias expanded, without expanding them, and
    more than :data:`MAX_YAML_NODES`, a recursive alias or nesting too deep
    for the parser is ``error`` naming ``where``.

    >>> load_yaml("a: &x [1, 2]\nb: *x", "inline")
    {'a': [1, 2], 'b': [1, 2]}
    >>> bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    ...     f"{n}: &{n} [{', '.join(['*' + p] * 10)}]\n" for p, n in zip("abcdef", "bcdefg"))
    >>> load_yaml(bomb, "bomb.yaml")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    rewardsmith.core.errors.RewardConfigError: bomb.yaml: its aliases expand to more than 100,000 values ...
    """
    import yaml

    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_expansion(node, where, error)
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        raise error(f"{where} is not valid YAML: {exc}") from None
    except RecursionError:
        raise error(f"{where} nests its values too deeply to read") from None
    finally:
        loader.dispose()


def _check_expansion(root: Any, where: str, error: type[RewardConfigError]) -> None:
    """Count the values of a composed YAML document with aliases expanded (each shared node counted once, by size)."""
    import yaml

    sizes: dict[int, int] = {}
    inside: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        if isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        else:
            children = node.value if isinstance(node, yaml.SequenceNode) else []
        key = id(node)
        if finished:
            inside.discard(key)
            sizes[key] = 1 + sum(sizes[id(child)] for child in children)
            if sizes[key] > MAX_YAML_NODES:
                raise error(
                    f"{where}: its aliases expand to more than {MAX_YAML_NODES:,} values (a YAML alias bomb?); "
                    "write the values out"
                )
        elif key in inside:
            raise error(f"{where}: an alias refers to a value that holds it (a recursive alias); write it out")
        elif key not in sizes:
            inside.add(key)
            stack.append((node, True))
            stack.extend((child, False) for child in children if id(child) not in sizes)


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
