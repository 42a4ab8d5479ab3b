"""Reading a YAML config file into a mapping, with errors that say which file and what is wrong."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from rewardsmith.core.errors import RewardConfigError

__all__ = ["read_config_file"]


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
    import yaml

    path = Path(path).expanduser()
    if not path.is_file():
        raise error(f"{what} file {str(path)!r} does not exist; give the path of a YAML file")
    try:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise error(f"{str(path)!r} is not valid YAML: {exc}") from None
    if loaded is None:
        raise error(f"{str(path)!r} is empty; a {what} needs {sections}")
    if not isinstance(loaded, dict):
        raise error(f"{str(path)!r} must hold a mapping of sections ({sections}), not a {type(loaded).__name__}")
    return loaded
