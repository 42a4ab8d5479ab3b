"""rewardsmith rewards in other agent frameworks: verifiers task rewards, and an environment's ``get_reward()``.

* verifiers (0.4, ``verifiers.v1``): a task scores a rollout with its
  ``@vf.reward`` methods, which ``Task.score`` calls with the task's data
  (``task``) and the rollout (``trace``) by name, awaits, and records as
  ``trace.rewards[name]`` (score and weight; ``trace.reward`` is the weighted
  sum). :func:`verifiers_rewards` makes one such function per rewardsmith
  reward and :func:`verifiers_task` a ``vf.Task`` class scoring with them
  (``pip install 'rewardsmith[verifiers]'``).
* TRL's environment contract: :func:`reward_method` makes a ``get_reward``
  method that scores what the environment recorded (its ``transcript`` of the
  rollout and the ``row`` it was reset with) with rewardsmith rewards;
  :func:`run_tool` runs a call on such an environment as TRL's tool loop does.
"""

from __future__ import annotations

import asyncio
import types
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from rewardsmith.compose.spec import weighted_sum
from rewardsmith.core.async_reward import AsyncReward
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.extras import MissingExtraError, require_extra
from rewardsmith.core.registry import get_rewards
from rewardsmith.core.result import RewardResult
from rewardsmith.core.reward import Reward

__all__ = [
    "NOT_TOOLS",
    "UNSCORED_KEY",
    "reward_method",
    "run_tool",
    "split_rollout",
    "verifiers_rewards",
    "verifiers_task",
]

#: Public methods of a TRL-style environment that are not tools.
NOT_TOOLS = ("reset", "get_reward")

UNSCORED_KEY = "rewardsmith_unscored"
"""``trace.info`` key: for each reward that could not score the rollout (recorded as 0.0), the reason."""


def _verifiers() -> Any:
    require_extra("verifiers", "the verifiers adapter")
    try:
        import verifiers.v1 as vf
    except ImportError as exc:
        raise MissingExtraError(
            "the verifiers adapter needs verifiers 0.4 or later (its verifiers.v1 API): "
            "pip install --upgrade 'rewardsmith[verifiers]'"
        ) from exc
    return vf


def split_rollout(trace: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A verifiers trace's final branch as (prompt, completion) chat messages.

    The completion starts at the first message a model call produced
    (``sampled``), else at the first assistant message; tool calls keep
    verifiers' flat ``name``/``arguments`` shape, which rewardsmith reads.

    >>> import pytest; vf = pytest.importorskip("verifiers.v1")  # the verifiers extra
    >>> question, reply = vf.UserMessage(content="2+2?"), vf.AssistantMessage(content="4")
    >>> nodes = [vf.MessageNode(message=question), vf.MessageNode(parent=0, message=reply, sampled=True)]
    >>> split_rollout(vf.Trace(task=vf.TraceTask(type="T", data=vf.TaskData()),
    ...                        agent=vf.AgentInfo(config=vf.AgentConfig()), nodes=nodes))
    ([{'role': 'user', 'content': '2+2?'}], [{'role': 'assistant', 'content': '4'}])
    """
    branches = trace.branches
    nodes = branches[-1].nodes if branches else []
    start = next((i for i, n in enumerate(nodes) if n.sampled), None)
    if start is None:
        start = next((i for i, n in enumerate(nodes) if n.message.role == "assistant"), len(nodes))
    messages = [n.message.model_dump(exclude_none=True) for n in nodes]
    return messages[:start], messages[start:]


def _columns(task: Any) -> dict[str, list[Any]]:
    """The task data's own fields (``answer``, ``info``, ...), one column each; verifiers' common fields are not."""
    vf = _verifiers()
    data = task.model_dump() if hasattr(task, "model_dump") else dict(task or {})
    return {key: [value] for key, value in data.items() if key not in vf.TaskData.model_fields}


async def _explain(reward: Reward, prompt: Any, completion: Any, columns: dict[str, list[Any]]) -> RewardResult:
    if isinstance(reward, AsyncReward):
        return (await reward.aexplain([prompt], [completion], **columns))[0]
    # sync rewards run off the event loop, so verifiers' other rollouts keep going
    return (await asyncio.to_thread(reward.explain, [prompt], [completion], **columns))[0]


class _TaskReward:
    """A rewardsmith reward as a verifiers task reward: ``await fn(task=..., trace=...)``.

    A plain callable object rather than a closure, so the same object is a
    task reward on its own (plugged by config) and on a task class (verifiers
    finds its ``@vf.reward`` tag there; a ``staticmethod`` would hide it).
    """

    def __init__(self, reward: Reward) -> None:
        self._scorer = reward
        self.__name__ = self.__qualname__ = reward.name
        self.__doc__ = f"rewardsmith's {reward.name!r} on the trace's final branch."

    async def __call__(self, task: Any, trace: Any) -> float:
        prompt, completion = split_rollout(trace)
        result = await _explain(self._scorer, prompt or None, completion, _columns(task))
        if result.score is None:
            trace.info.setdefault(UNSCORED_KEY, {})[self.__name__] = result.reason or "unscored"
            return 0.0
        return float(result.score)

    def __repr__(self) -> str:
        return f"<verifiers task reward {self.__name__!r}, weight {getattr(self, '_vf_weight', 1.0):g}>"


def _weights(count: int, weights: Sequence[float] | None) -> list[float]:
    if weights is None:
        return [1.0] * count
    if len(weights) != count:
        raise RewardConfigError(f"{len(weights)} weights for {count} rewards: give one weight per reward")
    return [float(w) for w in weights]


def verifiers_rewards(rewards: Any, weights: Sequence[float] | None = None) -> list[Callable[..., Awaitable[float]]]:
    """One verifiers task reward per rewardsmith reward: ``async (task, trace) -> float``, tagged ``@vf.reward``.

    ``rewards`` is what :func:`~rewardsmith.get_rewards` takes (names, specs, a
    config). Each function scores the trace's final branch (the messages from
    the first model turn on; the ones before are the prompt) with the task
    data's own fields as columns, and is named after its reward, so verifiers
    records it as ``trace.rewards[name]`` with its weight. A rollout a reward
    cannot score counts 0.0 (verifiers needs a number) and its reason goes to
    ``trace.info[UNSCORED_KEY][name]``. Plug one into a task by config
    (``rewards.<name>.fn``) or use :func:`verifiers_task`.

    >>> import pytest; vf = pytest.importorskip("verifiers.v1")  # the verifiers extra
    >>> (accuracy,) = verifiers_rewards(["gsm8k_accuracy"], weights=[2.0])
    >>> accuracy.__name__, accuracy.reward, accuracy._vf_weight  # what @vf.reward(weight=2.0) sets
    ('gsm8k_accuracy', True, 2.0)
    """
    made = get_rewards(rewards)
    names = [r.name for r in made]
    if twice := sorted({n for n in names if names.count(n) > 1}):
        raise RewardConfigError(
            f"rewards named {', '.join(map(repr, twice))} more than once: verifiers keeps one score per name; "
            "rename one with reward.named('other_name')"
        )
    weights = _weights(len(made), weights)
    vf = _verifiers()
    return [vf.reward(_TaskReward(r), weight=w) for r, w in zip(made, weights)]


def verifiers_task(
    rewards: Any, weights: Sequence[float] | None = None, *, base: Any = None, name: str = "RewardsmithTask"
) -> type:
    """A ``vf.Task`` subclass of ``base`` (default ``vf.Task``) whose ``@vf.reward`` methods are the rewards.

    ``base`` may be parametrised with the task data type (``vf.Task[MathData]``)
    or be a task class of one's own; verifiers scores a rollout with
    ``await task.score(trace)``, as its rollouts and its replay command do.

    >>> import asyncio, pytest; vf = pytest.importorskip("verifiers.v1")  # the verifiers extra
    >>> class MathData(vf.TaskData):
    ...     answer: str
    >>> MathTask = verifiers_task(["gsm8k_accuracy"], base=vf.Task[MathData])
    >>> data = MathData(prompt="What is 9*2?", answer="18")
    >>> question, reply = vf.UserMessage(content="What is 9*2?"), vf.AssistantMessage(content="#### 18")
    >>> nodes = [vf.MessageNode(message=question), vf.MessageNode(parent=0, message=reply, sampled=True)]
    >>> trace = vf.Trace(task=vf.TraceTask(type="MathTask", data=data), agent=vf.AgentInfo(config=vf.AgentConfig()),
    ...                  nodes=nodes)
    >>> asyncio.run(MathTask(data).score(trace))
    >>> trace.reward, trace.rewards["gsm8k_accuracy"]
    (1.0, Reward(score=1.0, weight=1.0))
    """
    vf = _verifiers()
    methods: dict[str, Any] = {fn.__name__: fn for fn in verifiers_rewards(rewards, weights)}
    methods["__module__"] = __name__
    return types.new_class(name, (base if base is not None else vf.Task,), exec_body=lambda ns: ns.update(methods))


def reward_method(
    rewards: Any, weights: Sequence[float] | None = None, *, transcript: str = "transcript", row: str = "row"
) -> Callable[[Any], float]:
    """A ``get_reward(self)`` for a TRL environment: rewardsmith rewards on what the environment recorded.

    The environment keeps the rollout as ``self.<transcript>`` (text or chat
    messages, e.g. the calls it received) and the row it was reset with as
    ``self.<row>``; the method returns the weighted sum of the rewards (an
    unscored reward counts 0).

    >>> class Quiz:
    ...     def reset(self, **row): self.row, self.transcript = row, []
    ...     def answer(self, text: str) -> str:
    ...         self.transcript.append({"role": "assistant", "content": text})
    ...         return "noted"
    ...     get_reward = reward_method("gsm8k_accuracy")
    >>> quiz = Quiz()
    >>> quiz.reset(answer="18")
    >>> _ = quiz.answer("#### 18")
    >>> quiz.get_reward()
    1.0
    """
    made = get_rewards(rewards)
    weights = list(weights) if weights is not None else [1.0] * len(made)

    def get_reward(self: Any) -> float:
        completion = getattr(self, transcript, "")
        columns = {key: [value] for key, value in (getattr(self, row, None) or {}).items()}
        scores = [r(completions=[completion], **columns)[0] for r in made]
        (total,) = weighted_sum([[s] for s in scores], weights)
        return total if total is not None else 0.0  # none applies: 0, as TRL's nansum gives

    return get_reward


def run_tool(environment: Any, name: str | None, arguments: dict[str, Any]) -> str:
    """A tool call on a TRL-style environment (its public methods are the tools), its result as TRL records it:
    the returned value as text, or ``{'error': ...}`` when the tool raises or there is no such tool.

    >>> class Store:
    ...     def lookup(self, key: str) -> str:
    ...         return {"k1": "417"}[key]
    >>> print(run_tool(Store(), "lookup", {"key": "k1"}), run_tool(Store(), "lookup", {"key": "k9"}))
    417 {'error': "KeyError: 'k9'"}
    >>> print(run_tool(Store(), "__init__", {}))
    {'error': "unknown tool '__init__'"}
    """
    usable = environment is not None and bool(name) and not name.startswith("_") and name not in NOT_TOOLS
    method = getattr(environment, name, None) if usable else None
    if not callable(method):
        return str({"error": f"unknown tool {name!r}"})
    try:
        return str(method(**arguments))
    except Exception as exc:  # a tool that raises is a failed call, recorded as TRL records it
        return str({"error": f"{type(exc).__name__}: {exc}"})
