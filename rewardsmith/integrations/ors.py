"""An Open Reward Standard (ORS) server for rewardsmith rewards and environments (``pip install 'rewardsmith[ors]'``).

ORS is an HTTP protocol between an agent and an RL environment: the agent
opens a session on a task, reads its prompt, lists its tools and calls them;
each tool output carries a ``reward`` and whether the episode is
``finished``. :func:`ors_environment` makes an ORS environment (``ors-sdk``'s
``ors.Environment``) from rewardsmith rewards and a list of tasks (dataset
rows):

* its tasks are the rows, its prompt the row's prompt;
* with ``environment=`` (a TRL-style environment class: ``reset(**row)``, its
  public methods are tools), each public method is an ORS tool; a call runs it
  and records the call and its result in the session's transcript (an error
  is recorded as TRL records it, ``{'error': ...}``); with ``turn_reward=`` (a
  per-turn reward, :mod:`rewardsmith.core.turns`) each tool output's
  ``reward`` is that reward's score of the turn just made (``None``: not judged);
* ``submit(answer)`` ends the episode: the transcript and the answer are
  scored as one rollout by the rewards (combined with their weights), and the
  output's ``reward`` is that score, its text the reason, and its
  ``metadata`` each component's score (``None``: not scored).

:func:`ors_server` wraps it in ``ors.Server``; ``server.run(host, port)``
serves it (uvicorn). ``tests/test_ors.py`` talks to it over HTTP with
``ors-sdk``'s own client.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.extras import require_extra
from rewardsmith.core.inputs import prompt_text

__all__ = ["ors_environment", "ors_server"]


def _ors() -> Any:
    require_extra("ors", "the Open Reward Standard server")
    import ors

    return ors


def _combined(rewards: Any, weights: Sequence[float] | None) -> Any:
    from rewardsmith.integrations.trl_async import async_reward_funcs

    (reward,) = async_reward_funcs(rewards, weights, warn=False)
    return reward


def _argument_model(name: str, method: Callable[..., Any]) -> Any:
    """A pydantic model of a tool method's parameters (what ORS validates a call's input against)."""
    from pydantic import create_model

    fields: dict[str, Any] = {}
    for param in inspect.signature(method).parameters.values():
        if param.name == "self" or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        annotation = Any if param.annotation is inspect.Parameter.empty else param.annotation
        fields[param.name] = (annotation, ... if param.default is inspect.Parameter.empty else param.default)
    return create_model(f"{name}_input", **fields) if fields else None


def _tool(ors: Any, name: str, model: Any, doc: str) -> Callable[..., Any]:
    if model is None:

        def run(self: Any) -> Any:
            return self._run_tool(name, {})

        run.__annotations__ = {"return": ors.ToolOutput}
    else:

        def run(self: Any, params: Any) -> Any:
            return self._run_tool(name, params.model_dump())

        run.__annotations__ = {"params": model, "return": ors.ToolOutput}
    run.__name__ = run.__qualname__ = name
    run.__doc__ = doc
    return ors.tool(run)


def _submit_tool(ors: Any) -> Callable[..., Any]:
    from pydantic import BaseModel

    class SubmitInput(BaseModel):
        answer: str

    def submit(self: Any, params: SubmitInput) -> Any:
        return self._submit(params.answer)

    submit.__annotations__ = {"params": SubmitInput, "return": ors.ToolOutput}
    submit.__doc__ = "Give the final answer; this ends the episode and scores it."
    return ors.tool(submit)


@dataclass(frozen=True)
class _Tasks:
    """What every session of one environment class shares: the rewards, the tasks and the tools' class."""

    reward: Any
    per_turn: Any
    rows: list[dict[str, Any]]
    environment: type | None
    prompt_column: str

    def columns(self, row: dict[str, Any]) -> dict[str, list[Any]]:
        """A row's columns other than the prompt, as the rewards take them (one sample)."""
        return {k: [v] for k, v in row.items() if k != self.prompt_column}


class _Session:
    """The methods of an ORS environment class made by :func:`ors_environment`; ``_tasks`` is set per class."""

    _tasks: _Tasks

    def __init__(self: Any, task_spec: Any = None, secrets: Any = None) -> None:
        _ors().Environment.__init__(self, task_spec or {}, secrets or {})
        self.row = dict(task_spec or {})
        self.transcript: list[dict[str, Any]] = []
        environment = self._tasks.environment
        self.env = environment() if environment is not None else None
        self.observation = None
        self.done = False

    def setup(self: Any) -> None:
        if self.env is not None and callable(getattr(self.env, "reset", None)):
            self.observation = self.env.reset(**self.row)

    def get_prompt(self: Any) -> list[Any]:
        text = prompt_text(self.row.get(self._tasks.prompt_column))
        if isinstance(self.observation, str) and self.observation:
            text = f"{text}\n{self.observation}"
        return [_ors().TextBlock(text=text)]

    @classmethod
    def list_splits(cls) -> list[str]:
        return ["train"]

    @classmethod
    def list_tasks(cls, split: str) -> list[dict[str, Any]]:
        return list(cls._tasks.rows) if split == "train" else []

    def _run_tool(self: Any, tool: str, arguments: dict[str, Any]) -> Any:
        from rewardsmith.integrations.agents import run_tool

        ors = _ors()
        call = {"type": "function", "function": {"name": tool, "arguments": arguments}}
        text = run_tool(self.env, tool, arguments)
        self.transcript += [
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "name": tool, "content": text},
        ]
        return ors.ToolOutput(blocks=[ors.TextBlock(text=text)], reward=self._turn_score(), finished=False)

    def _turn_score(self: Any) -> float | None:
        """The per-turn reward's score of the turn just made (``None``: no per-turn reward, or not judged)."""
        tasks = self._tasks
        if tasks.per_turn is None:
            return None
        prompts = [self.row.get(tasks.prompt_column)]
        (turns,) = tasks.per_turn.turn_rewards(prompts, [list(self.transcript)], None, **tasks.columns(self.row))
        return turns[-1] if turns else None

    def _submit(self: Any, answer: str) -> Any:
        from rewardsmith.compose.combine import Combined

        ors, reward = _ors(), self._tasks.reward
        if self.done:
            return ors.ToolOutput(blocks=[ors.TextBlock(text="the episode is finished")], finished=True)
        self.done = True
        completion = [*self.transcript, {"role": "assistant", "content": answer}]
        prompts = [self.row.get(self._tasks.prompt_column)]
        (result,) = reward.explain(prompts, [completion], None, **self._tasks.columns(self.row))
        if isinstance(reward, Combined):  # each component's result is in the metrics, by name
            scores = {label: getattr(result.metrics.get(label), "score", None) for label in reward.labels}
        else:
            scores = {reward.name: result.score}
        return ors.ToolOutput(
            blocks=[ors.TextBlock(text=result.reason or f"score {result.score}")],
            reward=result.score,
            finished=True,
            metadata={"reason": result.reason, "error": result.error, "components": scores},
        )


def _checked_tasks(
    rewards: Any,
    tasks: Sequence[dict[str, Any]],
    weights: Sequence[float] | None,
    environment: type | None,
    turn_reward: Any,
    prompt_column: str,
) -> _Tasks:
    from rewardsmith.core.registry import get_reward
    from rewardsmith.core.turns import TurnReward

    per_turn = None if turn_reward is None else get_reward(turn_reward)
    if per_turn is not None and not isinstance(per_turn, TurnReward):
        raise RewardConfigError(f"turn_reward must be a per-turn reward (a TurnReward), got {per_turn.name!r}")
    rows = [dict(row) for row in tasks]
    if not rows:
        raise RewardConfigError("an ORS environment needs at least one task (row)")
    missing = [i for i, row in enumerate(rows) if prompt_column not in row]
    if missing:
        raise RewardConfigError(
            f"task(s) {missing[:5]} have no {prompt_column!r} column (the prompt); set prompt_column"
        )
    return _Tasks(_combined(rewards, weights), per_turn, rows, environment, prompt_column)


def _environment_tools(ors: Any, environment: type | None) -> dict[str, Any]:
    """ORS tools for the public methods of a TRL-style environment class (not ``reset``, ``get_reward``, ``submit``)."""
    if environment is None:
        return {}
    return {
        attr: _tool(ors, attr, _argument_model(attr, method), (method.__doc__ or "").strip())
        for attr, method in inspect.getmembers(environment, predicate=inspect.isfunction)
        if not attr.startswith("_") and attr not in ("reset", "get_reward", "submit")
    }


def ors_environment(
    rewards: Any,
    tasks: Sequence[dict[str, Any]],
    *,
    weights: Sequence[float] | None = None,
    environment: type | None = None,
    turn_reward: Any = None,
    name: str = "rewardsmith",
    prompt_column: str = "prompt",
) -> type:
    """An ORS environment class: ``tasks`` (rows) scored by ``rewards`` when the agent calls ``submit``.

    ``rewards`` is a reward, a list of rewards or a config list (weights as
    ``weight:`` or ``weights=``). ``environment`` is a TRL-style environment
    class whose public methods become the tools; ``name`` is the
    environment's name in the server's paths. The tasks' other columns reach
    the rewards as columns (``answer``, ``tests``, ...).

    >>> import pytest; ors = pytest.importorskip("ors")  # the ors extra
    >>> env = ors_environment(["gsm8k_accuracy"], [{"prompt": "9*2?", "answer": "18"}], name="math")
    >>> env.name(), [t.name for t in env.list_tools().tools], env.list_splits()
    ('math', ['submit'], ['train'])
    """
    ors = _ors()
    if not isinstance(name, str) or not name.isidentifier():
        raise RewardConfigError(f"the environment's name must be an identifier (it is a URL path), got {name!r}")
    shared = _checked_tasks(rewards, tasks, weights, environment, turn_reward, prompt_column)
    namespace = {
        "_tasks": shared,
        "submit": _submit_tool(ors),
        "__module__": __name__,
        **_environment_tools(ors, environment),
    }
    return type(name, (_Session, ors.Environment), namespace)


def ors_server(rewards: Any, tasks: Sequence[dict[str, Any]], **settings: Any) -> Any:
    """An ``ors.Server`` serving :func:`ors_environment` (same arguments); ``.run(host, port)`` serves it.

    >>> import pytest; ors = pytest.importorskip("ors")
    >>> server = ors_server("gsm8k_accuracy", [{"prompt": "9*2?", "answer": "18"}])
    >>> sorted(server._env_classes)
    ['rewardsmith']
    """
    return _ors().Server([ors_environment(rewards, tasks, **settings)])
