"""Optional dependencies: which extra provides what, and the error that says what to install.

``pip install rewardsmith`` gives the rewards, composition, the registry,
judges and the ``rewards`` command. The rest comes with extras:

* ``eval``: datasets (loading Hub and local datasets, evaluation jobs);
* ``models``: torch and transformers (reward models, perplexity, local generation);
* ``train``: ``eval`` and ``models`` plus TRL, PEFT and the training run's needs;
* ``serve``: Starlette and uvicorn (``rewardsmith serve``, the reward server);
* ``ray``: Ray (the ``ray`` engine for rewards and evaluation jobs);
* ``text``: NLTK with the Punkt English model, langdetect and jieba (the
  ``ifeval`` reward's sentence, word-token and language constraints,
  ``language_consistency``, ``repetition`` with ``language="zh"``);
* ``verifiers``: verifiers 0.4 (rewardsmith rewards as verifiers task rewards);
* ``ors``: ors-sdk (an Open Reward Standard server for rewardsmith rewards and environments);
* ``openenv``: OpenEnv (rubrics both ways; not in ``all``: it cannot share an environment with verifiers);
* ``skyrl``: skyrl-gym (SkyRL-Gym text environments scored by rewardsmith rewards);
* ``vllm``, ``qlora``: CUDA-only additions for training;
* ``all``: everything that installs on any machine (``make install`` uses it).

Install torch first when an extra needs it (``pip install torch==...`` for
your CUDA or CPU build), then the extra: pip then keeps your torch.
"""

from __future__ import annotations

import importlib.util

from rewardsmith.core.errors import RewardsmithError

__all__ = ["EXTRAS", "MissingExtraError", "missing_modules", "require_extra"]

#: The importable modules each extra provides (the ones rewardsmith checks for).
EXTRAS: dict[str, tuple[str, ...]] = {
    "eval": ("datasets", "pyarrow"),
    "models": ("torch", "transformers"),
    "train": ("datasets", "torch", "transformers", "trl", "peft", "accelerate", "pydantic", "matplotlib"),
    "serve": ("starlette", "uvicorn"),
    "ray": ("ray",),
    "verifiers": ("verifiers",),
    "ors": ("ors",),
    "openenv": ("openenv",),
    "skyrl": ("skyrl_gym",),
    "text": ("nltk", "punkt", "langdetect", "jieba"),
    "vllm": ("vllm",),
    "qlora": ("bitsandbytes",),
}


class MissingExtraError(RewardsmithError, ImportError):
    """A feature needs an optional dependency that is not installed; the message says which ``pip install``."""


def missing_modules(modules: tuple[str, ...] | list[str]) -> list[str]:
    """The modules among ``modules`` that cannot be imported here (found without importing them).

    >>> missing_modules(["json", "no_such_module_here"])
    ['no_such_module_here']
    """
    return [m for m in modules if importlib.util.find_spec(m) is None]


def require_extra(extra: str, feature: str, modules: tuple[str, ...] | list[str] | None = None) -> None:
    """Raise :class:`MissingExtraError` naming the ``pip install`` to run when ``feature`` lacks modules of ``extra``.

    >>> require_extra("eval", "loading a dataset", ["json"])  # all there: nothing happens
    >>> require_extra("models", "a reward model", ["no_such_module_here"])
    Traceback (most recent call last):
    ...
    rewardsmith.core.extras.MissingExtraError: a reward model needs no_such_module_here, which is not installed. ...
    """
    missing = missing_modules(list(modules if modules is not None else EXTRAS[extra]))
    if not missing:
        return
    torch_first = (
        "install torch first (pip install torch, or your CUDA build), then "
        if "torch" in missing and extra in ("models", "train")
        else ""
    )
    raise MissingExtraError(
        f"{feature} needs {', '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} not installed. "
        f"To add {'it' if len(missing) == 1 else 'them'}: {torch_first}pip install 'rewardsmith[{extra}]'"
    )
