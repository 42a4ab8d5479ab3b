"""Finding things by name: a registry of names (with aliases and plug-ins), and import and file paths.

Rewards and dataset converters are looked up the same way, by one
:class:`Registry` each. A spec resolves, in order, to:

1. a registered name or alias; a built-in name is in the registry's static
   table (``lazy``: name -> module), and its module is imported, registering
   it, the first time it is asked for, without loading anything else (other
   names register through plug-ins, see :mod:`rewardsmith.core.plugins`,
   loaded when a name is not found or every name is listed);
2. a name declared in the registry's entry-point group by an installed package;
3. an import path, ``pkg.module:attr`` or ``pkg.module.attr``;
4. a file path, ``./my_rewards.py:attr`` (loaded once, under a stable module
   name that worker processes can load again).

Unknown names get the close matches and the registered names in the error.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.names import check_name, did_you_mean, first_line
from rewardsmith.core.pickling import load_module_from_file
from rewardsmith.core.plugins import entry_points_of, failed_plugins, load_plugins

__all__ = ["Registry", "import_object", "is_path_spec"]


def is_path_spec(spec: str) -> bool:
    """Whether ``spec`` is written as an import or file path rather than a plain name.

    >>> is_path_spec("think_format"), is_path_spec("pkg.module:fn"), is_path_spec("./rewards.py:fn")
    (False, True, True)
    """
    return ":" in spec or "/" in spec or "\\" in spec or spec.endswith(".py") or "." in spec


def import_object(spec: str, *, what: str = "object", error: type[Exception] = RewardConfigError) -> Any:
    """The object ``spec`` names: ``./file.py:attr``, ``pkg.module:attr`` or ``pkg.module.attr``.

    ``what`` names the kind of thing in errors ("reward", "converter").

    >>> import_object("rewardsmith.core.names:did_you_mean").__name__
    'did_you_mean'
    >>> import_object("rewardsmith.core.names.nothing_here", what="reward")
    Traceback (most recent call last):
    ...
    rewardsmith.core.errors.RewardConfigError: reward 'rewardsmith.core.names.nothing_here': ...
    """
    module_part, sep, attr = spec.rpartition(":")
    if not sep:
        whole = Path(spec).expanduser()
        if "/" in spec or "\\" in spec:  # a file path without ':attr': say what is wrong with the file itself
            if not whole.exists():
                problem = f"the file {str(whole)!r} does not exist (relative paths are resolved from {Path.cwd()})"
            elif whole.is_file() and whole.suffix == ".py":
                problem = f"name the {what} in {str(whole)!r} too"
            else:
                problem = f"{str(whole)!r} is not a Python file"
            raise error(f"{what} {spec!r}: {problem}; write './my_file.py:name'")
        module_part, _, attr = spec.rpartition(".")
    if not module_part or not attr:
        raise error(f"{spec!r} is not a valid {what} path; write 'pkg.module:attr' or './file.py:attr'")
    if module_part.endswith(".py") or "/" in module_part or "\\" in module_part:
        path = Path(module_part).expanduser()
        if path.exists() and not path.is_file():
            raise error(
                f"{what} {spec!r}: {str(path)!r} is {'a folder' if path.is_dir() else 'not a regular file'}, not a "
                "Python file; name a .py file, like './my_file.py:fn'"
            )
        if not path.is_file():
            raise error(
                f"{what} {spec!r}: the file {str(path)!r} does not exist "
                f"(relative paths are resolved from {Path.cwd()})"
            )
        if path.suffix != ".py":
            raise error(f"{what} {spec!r}: {str(path)!r} is not a Python file; name a .py file, like './my_file.py:fn'")
        try:
            module = load_module_from_file(path)
        except Exception as exc:
            raise error(f"{what} {spec!r}: importing {str(path)!r} failed: {type(exc).__name__}: {exc}") from exc
    else:
        try:
            module = importlib.import_module(module_part)
        except ModuleNotFoundError as exc:
            raise error(
                f"{what} {spec!r}: cannot import module {module_part!r} ({exc}). Install the package, add it "
                "to PYTHONPATH, or give a file path like './my_file.py:name'"
            ) from exc
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            public = sorted(n for n in dir(module) if not n.startswith("_"))
            raise error(f"{what} {spec!r}: {module.__name__!r} has no attribute {part!r}.{did_you_mean(part, public)}")
        obj = getattr(obj, part)
    return obj


def describe_target(target: Any) -> str:
    """The first line of ``target``'s docstring (not the signature ``dataclasses`` writes when there is none).

    >>> describe_target(describe_target)
    "The first line of ``target``'s docstring (not the signature ``dataclasses`` writes when there is none)."
    """
    doc = getattr(target, "__doc__", None)
    cls = target if isinstance(target, type) else type(target)
    if doc and doc.startswith(f"{cls.__name__}("):
        return ""
    return first_line(doc)


@dataclass
class _Entry:
    target: Any
    description: str
    alias_of: str | None = None
    entry_point: Any = None


class Registry:
    """Names to objects for one kind of thing (``what``), with aliases, plug-ins and paths.

    ``group`` is the entry-point group where installed packages declare
    single objects by name. ``unknown`` is the error raised for a name that
    resolves to nothing, ``error`` the one for a registration that cannot be;
    ``advice`` ends the message for an unknown name. ``lazy`` maps built-in
    names to the module that registers them, imported on first use. Registering the same
    object again under its name changes nothing; another object under a taken
    name is an error unless ``replace=True``.

    >>> registry = Registry("greeting", "rewardsmith.greetings")
    >>> _ = registry.register("hello", str.upper, description="Say it loud.", aliases=["hi"])
    >>> registry.find("hi")("hello")
    'HELLO'
    >>> registry.describe()
    {'hello': 'Say it loud.', 'hi': 'alias of hello'}
    >>> registry.find("helo")
    Traceback (most recent call last):
    ...
    rewardsmith.core.errors.RewardConfigError: unknown greeting 'helo'. Did you mean: hello? ...
    """

    def __init__(
        self,
        what: str,
        group: str,
        *,
        unknown: type[Exception] = RewardConfigError,
        error: type[Exception] = RewardConfigError,
        advice: str = "",
        lazy: Mapping[str, str] | None = None,
    ) -> None:
        self.what = what
        self.lazy: dict[str, str] = dict(lazy or {})
        self.advice = advice
        self.group = group
        self.unknown = unknown
        self.error = error
        self._entries: dict[str, _Entry] = {}
        self._lock = threading.RLock()
        self._group_loaded = False
        self._failed: dict[str, str] = {}

    # -- registering -----------------------------------------------------------------------------

    def register(
        self,
        name: str,
        target: Any,
        *,
        replace: bool = False,
        description: str | None = None,
        aliases: Iterable[str] = (),
    ) -> Any:
        """Register ``target`` under ``name`` (and ``aliases``); a name taken by another object is an error."""
        name = check_name(name, self.what)
        aliases = [check_name(alias, self.what) for alias in aliases]
        entry = _Entry(target, description if description is not None else describe_target(target))
        with self._lock:
            for key in (name, *aliases):
                existing = self._entries.get(key)
                if existing is not None and not replace and existing.target is not target:
                    module = getattr(existing.target, "__module__", None) or type(existing.target).__module__
                    raise self.error(
                        f"a {self.what} named {key!r} is already registered (from {module}); pick another name, "
                        f"or pass replace=True to replace it"
                    )
            self._entries[name] = entry
            for alias in aliases:
                self._entries[alias] = _Entry(target, entry.description, alias_of=name)
        return target

    def unregister(self, name: str) -> None:
        """Remove a registered name and the aliases that point to it."""
        with self._lock:
            if name not in self._entries:
                raise self.unknown(f"no {self.what} named {name!r} is registered")
            del self._entries[name]
            for key in [k for k, e in self._entries.items() if e.alias_of == name]:
                del self._entries[key]

    # -- looking up ------------------------------------------------------------------------------

    def _load(self) -> None:
        """Every name known: the plug-ins, the built-in modules of the static table, the entry-point group."""
        load_plugins()
        for module in dict.fromkeys(self.lazy.values()):
            try:
                importlib.import_module(module)
            except Exception as exc:  # like a broken plug-in: its names are unknown, the others still work
                self._failed[module] = f"{type(exc).__name__}: {exc}"
        if self._group_loaded:
            return
        with self._lock:
            if self._group_loaded:
                return
            self._group_loaded = True
            for ep in entry_points_of(self.group):
                if ep.name not in self._entries:
                    self._entries[ep.name] = _Entry(None, f"plug-in from {ep.value}", entry_point=ep)

    def get(self, name: str) -> Any:
        """The object registered (or declared by a plug-in) under ``name``, or ``None``.

        A registered name is found without loading anything; a built-in name
        imports only its own module; any other name loads the plug-ins first.
        """
        with self._lock:
            entry = self._entries.get(name)
        if entry is None and name in self.lazy:
            try:
                importlib.import_module(self.lazy[name])
            except Exception as exc:
                raise self.error(
                    f"the built-in {self.what} {name!r} ({self.lazy[name]}) failed to load: {type(exc).__name__}: {exc}"
                ) from exc
            with self._lock:
                entry = self._entries.get(name)
        if entry is None:
            self._load()
            with self._lock:
                entry = self._entries.get(name)
        if entry is None:
            return None
        if entry.entry_point is not None and entry.target is None:
            try:
                entry.target = entry.entry_point.load()
            except Exception as exc:
                where = entry.entry_point.value
                raise self.error(f"plug-in {self.what} {name!r} ({where}) failed to load: {exc}") from exc
            entry.description = describe_target(entry.target) or entry.description
        return entry.target

    def named(self, name: str, kind: type, advice: str = "") -> Any:
        """The ``kind`` object called ``name`` (an object with a ``name``): an unknown name, a declaration that
        fails to load, or one that is not a ``kind`` of that name is ``error`` saying so (the known names listed).

        >>> Registry("greeting", "rewardsmith.greetings").named("helo", str)
        Traceback (most recent call last):
        ...
        rewardsmith.core.errors.RewardConfigError: unknown greeting 'helo'. greetings: none
        """
        try:
            found = self.get(name)
        except self.error as exc:  # a declared object that failed to load
            raise self.error(f"the {self.what} {name!r} failed to load: {exc.__cause__ or exc}") from exc
        if found is None:
            names = self.names()
            raise self.unknown(
                f"unknown {self.what} {name!r}.{did_you_mean(name, names)} {self.what}s: {', '.join(names) or 'none'}"
                f"{advice}"
            )
        if not isinstance(found, kind) or getattr(found, "name", name) != name:
            raise self.error(f"the {self.what} declared as {name!r} is not a {kind.__name__} named {name!r}")
        return found

    def registered(self, name: str) -> Any:
        """The object registered under ``name`` so far, or ``None`` (nothing is loaded to find it)."""
        with self._lock:
            entry = self._entries.get(name)
        return entry.target if entry is not None else None

    def registered_names(self) -> list[str]:
        """The names registered so far, in the order they were registered (nothing is loaded)."""
        with self._lock:
            return [name for name, entry in self._entries.items() if entry.target is not None]

    def names(self) -> list[str]:
        """Every registered name and alias, sorted."""
        self._load()
        with self._lock:
            return sorted(self._entries)

    def describe(self) -> dict[str, str]:
        """Every registered name (aliases included) with a one-line description."""
        self._load()
        with self._lock:
            return {
                name: f"alias of {entry.alias_of}" if entry.alias_of else entry.description
                for name, entry in sorted(self._entries.items())
            }

    def find(self, spec: str) -> Any:
        """What ``spec`` names: a registered name, a plug-in, an import path or a file path (see the module docs)."""
        spec = spec.strip()
        if not spec:
            raise self.unknown(f"an empty string is not a {self.what} name")
        if ":" in spec or "/" in spec or "\\" in spec or spec.endswith(".py"):
            # a path is never a registered name: import it without loading every name first
            return import_object(spec, what=self.what, error=self.unknown)
        target = self.get(spec)
        if target is not None:
            return target
        if is_path_spec(spec):
            try:
                return import_object(spec, what=self.what, error=self.unknown)
            except self.unknown:
                pass
        raise self.unknown(self.unknown_message(spec))

    def unknown_message(self, spec: str) -> str:
        """The message for a name that resolves to nothing: close matches, the known names, failed plug-ins."""
        names = self.names()
        hint = did_you_mean(spec, names, cutoff=0.5)
        failed = {**failed_plugins(), **self._failed}
        broken = ""
        if failed:
            broken = f" (These plug-ins failed to load: {'; '.join(f'{k}: {v}' for k, v in failed.items())}.)"
        return (
            f"unknown {self.what} {spec!r}.{hint} Registered {self.what}s: {', '.join(names) or 'none'}"
            f"{self.advice}. A {self.what} can also be named by import path ('pkg.module:name') or file path "
            f"('./my_file.py:name').{broken}"
        )
