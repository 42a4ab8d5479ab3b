"""Every problem of a config at once: the collector that config checks report into.

A config with several mistakes is reported in one message, not one mistake
per run. Each independent check (a section's shape, the rewards, the
trainer settings, the dataset, the model) runs inside
:meth:`ConfigProblems.check`, which records the check's error and lets the
next check run; :meth:`ConfigProblems.raise_if_any` then raises once. A check
whose input failed an earlier one (the dataset did not load, so its columns
cannot be compared with the rewards) is skipped rather than reported twice.

One problem is raised as the error it is (an unknown reward stays an
``UnknownRewardError``); several are raised together as a :class:`ConfigError`
whose ``problems`` hold each one. Training and evaluation configs both use it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

from rewardsmith.core.errors import RewardConfigError, RewardsmithError

__all__ = ["ConfigError", "ConfigProblems"]


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
