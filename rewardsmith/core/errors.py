"""Exceptions raised by rewardsmith.

Every exception a user can see derives from :class:`RewardsmithError`, so
``except RewardsmithError`` catches all of them. Configuration mistakes also
derive from ``ValueError`` and bad return values from ``TypeError``, so code
written against the built-in exception types keeps working.
"""

from __future__ import annotations


class RewardsmithError(Exception):
    """Base class of every error raised by rewardsmith."""


class RewardConfigError(RewardsmithError, ValueError):
    """A reward was asked for or set up in a way that cannot work.

    Raised before any scoring happens: an unknown reward name, an unknown
    setting, a column the reward needs but the data lacks.
    """


class UnknownRewardError(RewardConfigError, LookupError):
    """A reward name that is neither registered nor an importable path."""


class MissingColumnError(RewardConfigError):
    """A reward needs a dataset column that the batch does not carry."""


class RewardReturnError(RewardsmithError, TypeError):
    """A reward returned something that is not a score.

    Scores are numbers, bools, ``None`` or :class:`~rewardsmith.RewardResult`;
    batch rewards return one of those per completion. Returning anything else
    is a bug in the reward, so this is raised whatever ``on_error`` says.
    """


class RewardExecutionError(RewardsmithError, RuntimeError):
    """Scoring failed and the reward was set up with ``on_error="raise"``,
    or a worker process could not be started."""


class DatasetError(RewardConfigError):
    """A dataset cannot be loaded or prepared as asked.

    Raised before any training or scoring: a file or split that does not
    exist, an empty dataset, a malformed file (with its line number), a
    column a converter or template needs but the data lacks.
    """


class UnknownConverterError(DatasetError, LookupError):
    """A dataset converter name that is not registered."""
