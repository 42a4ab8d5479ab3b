"""Which kind of reward a plain callable is, and the reward made of it: :func:`reward_from_callable`.

A TRL batch function, verl's batched function, a per-sample function (named
by the input that holds the completion), a factory of settings, a ``Reward``
class, or a class of another library that is a reward as it is (a verifiers
task). :func:`~rewardsmith.get_reward` uses this for everything that is not a
name.
"""

from __future__ import annotations

import inspect
from typing import Any

from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.functions import (
    AsyncBatchFunctionReward,
    BatchFunctionReward,
    callable_name,
    is_async_callable,
    reward,
)
from rewardsmith.core.injection import COMPLETION_INPUTS
from rewardsmith.core.reward import Reward

__all__ = ["FOREIGN_REWARDS", "callable_kind", "reward_from_callable"]

_BATCH_PARAMS = {"completions", "prompts", "completion_ids"}


def callable_kind(obj: Any) -> str:
    """How a plain callable wants to be called: ``batch``, ``verl_batch``, ``sample``, ``factory`` or ``ambiguous``.

    A TRL reward function takes ``completions`` (or only ``**kwargs``); verl's
    batched one takes ``solution_strs`` (``"verl_batch"``). A
    per-sample function names the completion by one of the inputs that hold it
    (:data:`~rewardsmith.core.injection.COMPLETION_INPUTS`: ``completion``,
    verl's ``solution_str``, ``messages``, ``final_message``, ``tool_calls``,
    ``turns``, ...); its other parameters are columns and settings. A function
    whose parameters all have defaults is a factory of settings. One with
    required parameters that name no completion is ``"ambiguous"``: a factory
    when the settings given fill them, else an error saying how to mark it.

    >>> callable_kind(lambda completions, **kw: [])
    'batch'
    >>> callable_kind(lambda data_source, solution_str, ground_truth, extra_info=None: 0.0)
    'sample'
    >>> callable_kind(lambda threshold=0.5: None), callable_kind(lambda threshold: None)
    ('factory', 'ambiguous')
    """
    try:
        params = inspect.signature(obj).parameters
    except (TypeError, ValueError):
        return "batch"
    names = set(params)
    if names & _BATCH_PARAMS:
        return "batch"
    if "solution_strs" in names:  # verl's batch reward manager: rewardsmith.core.verl_batch
        return "verl_batch"
    if names & COMPLETION_INPUTS:
        return "sample"
    kinds = {p.kind for p in params.values()}
    required = [p for p in params.values() if p.default is p.empty and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    if inspect.Parameter.VAR_KEYWORD in kinds and not required:
        return "batch"
    return "ambiguous" if required else "factory"


def reward_from_callable(obj: Any) -> Reward:
    """A :class:`Reward` from a ``Reward`` class, a TRL batch function, a per-sample function, or a verifiers task.

    A ``Reward`` subclass is instantiated with its defaults; a verifiers task
    class (``vf.Task`` subclass) scores with its own rewards
    (:mod:`rewardsmith.integrations.verifiers_tasks`); a function that
    takes ``completions`` (or only ``**kwargs``) is a TRL batch function; one
    that takes ``completion`` or ``messages`` is a per-sample function.
    :func:`~rewardsmith.get_reward` uses it for everything that is not a name.

    >>> reward_from_callable(lambda completion: len(completion) > 3)(prompts=["p"], completions=["long"])
    [1.0]
    """
    if isinstance(obj, Reward):
        return obj
    if isinstance(obj, type) and issubclass(obj, Reward):
        return obj()
    adapted = _foreign_reward(obj)
    if adapted is not None:
        return adapted
    if isinstance(obj, type) and callable_kind(obj) in ("factory", "ambiguous"):
        try:  # a reward class written for another library: an instance with its defaults is the reward
            instance = obj()
        except TypeError as exc:
            raise RewardConfigError(
                f"{obj.__name__} is a class that needs arguments to make a reward ({exc}); pass an instance, "
                f"or name it in the registry with its settings"
            ) from exc
        if callable(instance):
            return reward_from_callable(instance)
    if not callable(obj):
        raise RewardConfigError(
            f"{obj!r} is not a reward: pass a Reward, a registered name, a TRL reward function "
            "f(completions, **kwargs) or a per-sample function f(completion, ...)"
        )
    kind = callable_kind(obj)
    is_async = is_async_callable(obj)
    if kind == "batch":
        return AsyncBatchFunctionReward(obj) if is_async else BatchFunctionReward(obj)
    if kind == "sample":
        return reward(obj)
    if kind == "verl_batch":
        from rewardsmith.core.verl_batch import VerlBatchFunctionReward

        return VerlBatchFunctionReward(fn=obj)
    raise RewardConfigError(_unknown_signature_message(obj))


#: Classes of other libraries that are rewards as they are: (the module prefix and name of a base class) to
#: the import path of the reward that adapts them, loaded only when such a class is given (the core imports no
#: integration).
FOREIGN_REWARDS: dict[tuple[str, str], str] = {
    ("verifiers.", "Task"): "rewardsmith.integrations.verifiers_tasks:task_reward",
}


def _foreign_reward(obj: Any) -> Reward | None:
    """A class of another library that is a reward as it is (a verifiers task), adapted; else ``None``.

    >>> _foreign_reward(int) is None
    True
    """
    if not isinstance(obj, type):
        return None
    for base in obj.__mro__:
        for (prefix, name), path in FOREIGN_REWARDS.items():
            if base.__name__ == name and base.__module__.startswith(prefix):
                from rewardsmith.core.lookup import import_object

                return import_object(path, what="reward adapter")(obj)
    return None


def _unknown_signature_message(obj: Any) -> str:
    """Why a callable's signature names no reward input, with the rename that fixes it."""
    name = callable_name(obj)
    params = inspect.signature(obj).parameters.values()
    required = [p.name for p in params if p.default is p.empty and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    takes_kwargs = any(p.kind is p.VAR_KEYWORD for p in params)
    if required and takes_kwargs:
        fix = (
            f"rename its parameter `{required[0]}` to `completions` (a TRL batch function, one list per call) "
            f"or `completion` (one sample per call)"
        )
    elif required:
        fix = (
            f"rename `{required[0]}` to `completion` (one sample per call), or to `completions` and add **kwargs "
            "(a TRL batch function)"
        )
    else:
        fix = "add **kwargs (a TRL batch function) or a `completion` parameter (one sample per call)"
    return (
        f"cannot tell how to call {name!r} as a reward: none of its parameters is one TRL passes "
        f"(prompts, completions, completion_ids) or one that holds the completion "
        f"({', '.join(sorted(COMPLETION_INPUTS))}). Fix: {fix}. "
        "If it is a factory, call it (or name it in the registry, which calls it with the settings)."
    )
