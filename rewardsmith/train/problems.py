"""Every problem of a config at once: the collector the config checks report into, and ``imports:``.

A config with several mistakes is reported in one message, not one mistake
per run. Each independent check (a section's shape, the rewards, the
trainer settings, the dataset, the model) runs inside
:meth:`ConfigProblems.check`, which records the check's error and lets the
next check run; :meth:`ConfigProblems.raise_if_any` then raises once. A check
whose input failed an earlier one (the dataset did not load, so its columns
cannot be compared with the rewards) is skipped rather than reported twice.

One problem is raised as the error it is (an unknown reward stays an
``UnknownRewardError``); several are raised together as a :class:`ConfigError`
whose ``problems`` hold each one. Evaluation configs use the same collector.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from rewardsmith.core.errors import RewardConfigError, RewardsmithError

__all__ = ["ConfigError", "ConfigProblems", "import_modules", "resolve_import_path", "resolve_rewards"]


class ConfigError(RewardConfigError):
    """A config that cannot work; raised before anything loads.

    ``problems`` holds every problem found (each an exception with its own
    message); a single problem is also the message.
    """

    def __init__(self, message: str = "", problems: Sequence[Exception] = ()) -> None:
        super().__init__(message)
        self.problems: list[Exception] = list(problems) or [self]


class ConfigProblems:
    """The problems found while checking a config, raised together at the end.

    ``what`` names the config in the message ("the training config"); ``after``
    says what the user can count on (nothing was loaded, or nothing written).

    >>> problems = ConfigProblems("the config")
    >>> with problems.check():
    ...     raise ConfigError("trainer.learning_rat is not a training argument")
    >>> problems.add("dataset.max_samples: must be greater than 0")
    >>> len(problems), bool(problems)
    (2, True)
    >>> try:
    ...     problems.raise_if_any()
    ... except ConfigError as exc:
    ...     print(exc)
    the config has 2 problems (nothing was loaded). Fix them all, then run again:
      1. trainer.learning_rat is not a training argument
      2. dataset.max_samples: must be greater than 0
    """

    def __init__(self, what: str = "the config", after: str = "nothing was loaded") -> None:
        self.what = what
        self.after = after
        self.errors: list[Exception] = []

    def __len__(self) -> int:
        return len(self.errors)

    def add(self, problem: str | Exception) -> None:
        """Record a problem: a message, or an error (a :class:`ConfigError` adds each of its problems)."""
        if isinstance(problem, str):
            self.errors.append(ConfigError(problem))
        elif isinstance(problem, ConfigError) and problem.problems != [problem]:
            self.errors.extend(problem.problems)
        else:
            self.errors.append(problem)

    @contextlib.contextmanager
    def check(self) -> Iterator[None]:
        """Run one check: a rewardsmith error it raises is recorded, and the next check runs."""
        try:
            yield
        except RewardsmithError as exc:
            self.add(exc)

    def raise_if_any(self) -> None:
        """Raise the one problem as it is, or a :class:`ConfigError` listing them all; nothing if there are none."""
        if not self.errors:
            return
        if len(self.errors) == 1:
            raise self.errors[0] from None
        items = "\n".join(f"  {i}. {_indented(str(e))}" for i, e in enumerate(self.errors, 1))
        raise ConfigError(
            f"{self.what} has {len(self.errors)} problems ({self.after}). Fix them all, then run again:\n{items}",
            self.errors,
        ) from None


def _indented(text: str) -> str:
    return text.replace("\n", "\n     ")


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


def resolve_rewards(rewards: Any, weights: Any, problems: ConfigProblems) -> tuple[list[Any], list[float] | None]:
    """The rewards and weights a config's ``rewards:`` list describes, every problem recorded in ``problems``.

    :func:`rewardsmith.compose.rewards_from_config` stops at the first bad
    entry; here each entry of a list that fails is built on its own, so that
    every unknown reward and bad setting is reported (each under its own
    index), and the entries that are right are returned for further checks
    (their columns). Problems of the list as a whole (weights that do not
    match, two rewards logged under one name) are reported once the entries
    are right. The weights are ``None`` unless the whole list resolved.

    >>> problems = ConfigProblems()
    >>> made, weights = resolve_rewards(["think_fromat", "gsm8k_accuracy", "countdwn"], None, problems)
    >>> [r.name for r in made], weights
    (['gsm8k_accuracy'], None)
    >>> [str(e)[:48] for e in problems.errors]
    ["rewards[0]: unknown reward 'think_fromat'. Did y", "rewards[2]: unknown reward 'countdwn'. Did you m"]
    """
    from rewardsmith.compose import rewards_from_config

    try:
        return rewards_from_config(rewards, weights)
    except RewardConfigError as exc:
        first = exc
    entries = rewards
    if isinstance(entries, str):
        from rewardsmith.train.compat import comma_list

        entries = comma_list(entries)
    made: list[Any] = []
    found = []
    if isinstance(entries, list) and len(entries) > 1:
        for i, entry in enumerate(entries):
            try:
                made += rewards_from_config([entry])[0]
            except RewardConfigError as exc:
                found.append(_at_index(exc, i))
    for error in found or [first]:
        problems.add(error)
    return made, None


def _at_index(exc: RewardConfigError, index: int) -> RewardConfigError:
    """``exc`` (raised for a one-entry list) as the error of entry ``index`` of the whole list."""
    message = str(exc)
    if not message.startswith("rewards[0]"):
        return exc
    try:
        return type(exc)(f"rewards[{index}]" + message[len("rewards[0]") :])
    except Exception:
        return RewardConfigError(f"rewards[{index}]" + message[len("rewards[0]") :])
