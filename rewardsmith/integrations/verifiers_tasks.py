"""A verifiers task class as a rewardsmith reward: its rewards and metrics, run unchanged on each completion.

In verifiers (0.4, ``verifiers.v1``) a task class holds the scoring of an
environment: ``@vf.reward`` methods (weighted) and ``@vf.metric`` methods,
called with the task's data (``self.data``) and the rollout's ``trace``. Named
where a reward is (``rewards: [{name: ./gsm8k_env.py:MathTask}]``,
``get_reward(MathTask)``, ``rewardsmith check ./gsm8k_env.py:MathTask``), the
class scores each row as verifiers would: the row's columns that the task's
data type declares (``answer``, ``info``, ...) are its data, the prompt and
the completion are the trace's messages (the completion's sampled), and
``await task.score(trace)`` runs its rewards. The score is verifiers' own
total (``trace.reward``, each reward times its weight); each reward's score
and each metric are kept as the result's metrics (``reward.explain``, evaluation results).

Rewards that need a runtime (a sandbox) are skipped by verifiers when scored
offline, as here; a task with only such rewards scores 0 and says so.

>>> import pytest; vf = pytest.importorskip("verifiers.v1")  # the verifiers extra
>>> class MathData(vf.TaskData):
...     answer: str
>>> class MathTask(vf.Task[MathData]):
...     @vf.reward(weight=1.0)
...     async def correct(self, trace) -> float:
...         return float(trace.last_reply.endswith(self.data.answer))
>>> from rewardsmith import get_reward
>>> get_reward(MathTask).scores(prompts=["2+2?", "2+2?"], completions=["It is 4", "It is 5"], answer=["4", "4"])
[1.0, 0.0]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rewardsmith.core.async_reward import AsyncReward
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.result import RewardResult

__all__ = ["VerifiersTaskReward", "is_verifiers_task", "task_reward"]


def is_verifiers_task(obj: Any) -> bool:
    """Whether ``obj`` is a verifiers task class (without importing verifiers when it is not).

    >>> is_verifiers_task(int)
    False
    """
    if not isinstance(obj, type):
        return False
    return any(c.__name__ == "Task" and c.__module__.startswith("verifiers.") for c in obj.__mro__)


def task_reward(task: type) -> VerifiersTaskReward:
    """The reward a verifiers task class is (what :func:`~rewardsmith.get_reward` makes of one)."""
    return VerifiersTaskReward(task=task)


_ROLES = ("system", "user", "assistant", "tool")


def _messages(vf: Any, messages: list[dict[str, Any]], sampled: bool) -> list[Any]:
    kinds = {"system": vf.SystemMessage, "user": vf.UserMessage, "assistant": vf.AssistantMessage}
    kinds["tool"] = vf.ToolMessage
    out = []
    for message in messages:
        role = message.get("role")
        if role not in _ROLES:
            continue
        fields = {"role": role, "content": message.get("content")}
        if role == "assistant" and message.get("tool_calls"):
            fields["tool_calls"] = [_call(vf, i, call) for i, call in enumerate(message["tool_calls"])]
        if role == "tool":
            fields["tool_call_id"] = message.get("tool_call_id") or "call_0"
        out.append((kinds[role].model_validate(fields), sampled and role == "assistant"))
    return out


def _call(vf: Any, index: int, call: dict[str, Any]) -> Any:
    import json

    function = call.get("function") or call
    arguments = function.get("arguments", {})
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return vf.ToolCall(id=str(call.get("id") or f"call_{index}"), name=str(function.get("name", "")), arguments=text)


@dataclass(eq=False)
class VerifiersTaskReward(AsyncReward):
    """A verifiers task class (``vf.Task`` subclass) scoring each completion (see the module docs)."""

    task: Any = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if not is_verifiers_task(self.task):
            raise RewardConfigError(f"{self.task!r} is not a verifiers task class (a subclass of verifiers.v1.Task)")

    @property
    def default_name(self) -> str:
        return getattr(self.task, "__name__", "verifiers_task")

    async def score(self, prompt_messages: Any, completion_messages: Any, **columns: Any) -> RewardResult:
        import verifiers.v1 as vf

        data_type = self.task.data_type()
        known = set(data_type.model_fields)
        data = data_type.model_validate({k: v for k, v in columns.items() if k in known and v is not None})
        nodes: list[Any] = []
        pairs = _messages(vf, list(prompt_messages), False) + _messages(vf, list(completion_messages), True)
        for i, (message, sampled) in enumerate(pairs):
            nodes.append(vf.MessageNode(parent=i - 1 if i else None, message=message, sampled=sampled))
        traced = vf.TraceTask(type=self.task.__name__, data=data)
        trace = vf.Trace(task=traced, agent=vf.AgentInfo(config=vf.AgentConfig()), nodes=nodes)
        await self.task(data).score(trace)
        metrics: dict[str, Any] = {name: r.score for name, r in trace.rewards.items() if r is not None}
        metrics.update({name: value for name, value in trace.metrics.items() if value is not None})
        if not trace.rewards:
            return RewardResult(0.0, "the task has no reward that runs without a runtime", metrics)
        return RewardResult(trace.reward, "", metrics)
