"""OpenEnv rubrics both ways: an OpenEnv ``Rubric`` from a rewardsmith reward, a rewardsmith reward from a rubric.

OpenEnv (``openenv``) scores an environment step with a ``Rubric``:
``rubric(action, observation) -> float``, composable (``WeightedSum``,
``Gate``, ``Sequential``, trajectory rubrics with discounting).

* :func:`openenv_rubric` makes an ``openenv.core.rubrics.Rubric`` of any
  rewardsmith reward: the action's text is the completion (its ``content``,
  ``message``, ``text``, ``code`` or ``answer`` field, or the action itself
  when it is text), the observation's ``metadata`` (and ``columns=``) the
  columns. A step the reward does not score gives ``unscored`` (0.0); the last
  result, with its reason, is kept as ``rubric.last_result``.
* :func:`openenv_trajectory_rubric` makes an OpenEnv trajectory rubric: the
  episode's steps are a rollout (each action an assistant turn, each
  observation's text the environment's answer to it), scored when the episode
  is ``done``; its ``compute_step_rewards()`` gives a per-turn reward's turn
  rewards (:mod:`rewardsmith.core.turns`) as the steps' rewards, and any other
  reward's score discounted back from the last step, as OpenEnv's
  ``ExponentialDiscountingTrajectoryRubric`` does.
* :func:`rubric_reward` makes a rewardsmith reward of an OpenEnv rubric: each
  completion becomes an action (``action=``, a function of the text; by
  default the text), each row an observation (``observation=``, a function of
  the row's columns; by default an OpenEnv ``Observation(done=True,
  metadata=row)``); an async rubric is awaited.

openenv 0.10 pins ``fastmcp`` 3 (so ``mcp`` 1.x) while verifiers 0.4 pins
``mcp`` 2.0, so the two cannot share an environment: install openenv in its own
(``pip install 'rewardsmith[openenv]'`` in a venv without verifiers, or
``make openenv``, which puts it in ``.cache/openenv`` for the tests).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.extras import require_extra
from rewardsmith.core.inputs import Batch
from rewardsmith.core.reward import Reward, snake_case

__all__ = ["OpenEnvRubricReward", "action_text", "openenv_rubric", "openenv_trajectory_rubric", "rubric_reward"]

#: Fields of an action read as its text, in order.
TEXT_FIELDS = ("content", "message", "text", "code", "answer", "response")


def _rubrics() -> Any:
    require_extra("openenv", "OpenEnv rubrics")
    import openenv.core.rubrics as rubrics

    return rubrics


def action_text(action: Any) -> str:
    """The text of an OpenEnv action: the action itself, or its first text field (``content``, ``message``, ...).

    >>> from types import SimpleNamespace
    >>> action_text("4"), action_text({"message": "4"}), action_text(SimpleNamespace(code="print(4)"))
    ('4', '4', 'print(4)')
    """
    if isinstance(action, str):
        return action
    for name in TEXT_FIELDS:
        value = action.get(name) if isinstance(action, dict) else getattr(action, name, None)
        if isinstance(value, str):
            return value
    return str(action)


def _metadata(observation: Any) -> dict[str, Any]:
    meta = observation.get("metadata") if isinstance(observation, dict) else getattr(observation, "metadata", None)
    return dict(meta) if isinstance(meta, dict) else {}


def openenv_rubric(
    reward: Any,
    *,
    columns: dict[str, Any] | None = None,
    text: Callable[[Any, Any], Any] | None = None,
    unscored: float = 0.0,
) -> Any:
    """An OpenEnv ``Rubric`` scoring each ``(action, observation)`` with a rewardsmith reward.

    ``reward`` is anything :func:`~rewardsmith.get_reward` takes, or a config
    list (combined with its weights). ``text(action, observation)`` gives the
    completion when :func:`action_text` does not fit (it may return a list of
    messages: a rollout).
    """
    from rewardsmith.integrations.trl_async import async_reward_funcs

    rubrics = _rubrics()
    (scorer,) = async_reward_funcs(reward, warn=False)
    fixed = dict(columns or {})

    class RewardsmithRubric(rubrics.Rubric):
        """An OpenEnv rubric scoring with a rewardsmith reward (see :func:`openenv_rubric`)."""

        def __init__(self) -> None:
            super().__init__()
            self.reward = scorer
            self.last_result = None

        def forward(self, action: Any, observation: Any) -> float:
            completion = text(action, observation) if text is not None else action_text(action)
            row = {**_metadata(observation), **fixed}
            (result,) = scorer.explain(None, [completion], None, **{k: [v] for k, v in row.items()})
            self.last_result = result
            return unscored if result.score is None else result.score

    RewardsmithRubric.__name__ = RewardsmithRubric.__qualname__ = f"{snake_case(scorer.name)}_rubric"
    return RewardsmithRubric()


#: Fields of an observation read as its text (what the environment answered), in order.
OBSERVATION_FIELDS = ("text", "content", "message", "output", "stdout", "feedback", "result")


def _observation_text(observation: Any) -> str:
    for name in OBSERVATION_FIELDS:
        value = observation.get(name) if isinstance(observation, dict) else getattr(observation, name, None)
        if isinstance(value, str) and value:
            return value
    return ""


def episode_rollout(steps: Sequence[tuple[Any, Any]]) -> list[dict[str, Any]]:
    """An episode's ``(action, observation)`` steps as chat messages: each action an assistant turn, each
    observation's text (``text``, ``content``, ``message``, ``output``, ...) a user message after it.

    >>> episode_rollout([("look", {"text": "a door"}), ("open it", {"text": ""})])
    [{'role': 'assistant', 'content': 'look'}, {'role': 'user', 'content': 'a door'}, {'role': 'assistant', \
'content': 'open it'}]
    """
    out: list[dict[str, Any]] = []
    for action, observation in steps:
        out.append({"role": "assistant", "content": action_text(action)})
        said = _observation_text(observation)
        if said:
            out.append({"role": "user", "content": said})
    return out


def openenv_trajectory_rubric(reward: Any, *, gamma: float = 0.99, columns: dict[str, Any] | None = None) -> Any:
    """An OpenEnv ``TrajectoryRubric`` scoring the episode, as a rollout, with a rewardsmith reward.

    It returns OpenEnv's ``intermediate_reward`` (0.0) until the observation
    is ``done``, then the episode's score (``None``: 0.0); the columns are the
    last observation's ``metadata`` and ``columns=``. ``compute_step_rewards()``:
    a per-turn reward's turn rewards (``None``: 0.0), else the score discounted
    back, ``gamma ** (T - 1 - t) * score``.
    """
    from rewardsmith.core.turns import TurnReward
    from rewardsmith.integrations.trl_async import async_reward_funcs

    rubrics = _rubrics()
    (scorer,) = async_reward_funcs(reward, warn=False)  # one reward of weight 1 stays itself (a TurnReward stays one)
    fixed = dict(columns or {})

    class RewardsmithTrajectoryRubric(rubrics.ExponentialDiscountingTrajectoryRubric):
        """An OpenEnv trajectory rubric scoring with a rewardsmith reward (see :func:`openenv_trajectory_rubric`)."""

        def __init__(self) -> None:
            super().__init__(gamma=gamma)
            self.reward = scorer
            self.last_result = None

        def _explain(self, trajectory: list[tuple[Any, Any]]) -> Any:
            row = {**(_metadata(trajectory[-1][1]) if trajectory else {}), **fixed}
            (result,) = scorer.explain(None, [episode_rollout(trajectory)], None, **{k: [v] for k, v in row.items()})
            self.last_result = result
            return result

        def score_trajectory(self, trajectory: list[tuple[Any, Any]]) -> float:
            score = self._explain(trajectory).score
            return 0.0 if score is None else score

        def compute_step_rewards(self) -> list[float]:
            if not isinstance(scorer, TurnReward) or not self._trajectory:
                return super().compute_step_rewards()
            turns = self._explain(self._trajectory).metrics.get("turn_rewards") or []
            return [0.0 if s is None else s for s in turns]

    RewardsmithTrajectoryRubric.__name__ = f"{snake_case(scorer.name)}_trajectory_rubric"
    RewardsmithTrajectoryRubric.__qualname__ = RewardsmithTrajectoryRubric.__name__
    return RewardsmithTrajectoryRubric()


def _default_observation(row: dict[str, Any]) -> Any:
    try:
        from openenv.core.env_server.types import Observation
    except ImportError:  # the rubric may not need OpenEnv's own types
        from types import SimpleNamespace

        return SimpleNamespace(done=True, reward=None, metadata=row)
    return Observation(done=True, metadata=row)


@dataclass(kw_only=True, eq=False)
class OpenEnvRubricReward(Reward):
    """A rewardsmith reward scoring each completion with an OpenEnv rubric (made by :func:`rubric_reward`).

    Columns: whatever the rubric reads from the observation's metadata (every column is passed). Range: the
    rubric's.
    """

    rubric: Any = None
    action: Callable[[str], Any] | None = None
    observation: Callable[[dict[str, Any]], Any] | None = None

    @property
    def name(self) -> str:
        return self.__dict__.get("_name") or snake_case(type(self.rubric).__name__)

    def score_batch(self, batch: Batch) -> Sequence[Any]:
        names = [n for n in batch.column_names if n not in ("prompt", "completion")]
        values = {n: batch.column(n, self.name) for n in names}
        out: list[Any] = []
        for i, completion in enumerate(batch.texts):
            row = {n: values[n][i] for n in names}
            act = self.action(completion) if self.action is not None else completion
            obs = self.observation(row) if self.observation is not None else _default_observation(row)
            value = self.rubric(act, obs)
            if inspect.isawaitable(value):
                from rewardsmith.core.async_reward import run_sync

                value = run_sync(value)
            out.append(value)
        return out


def rubric_reward(
    rubric: Any,
    *,
    action: Callable[[str], Any] | None = None,
    observation: Callable[[dict[str, Any]], Any] | None = None,
    name: str | None = None,
) -> OpenEnvRubricReward:
    """A rewardsmith reward of an OpenEnv rubric: ``rubric(action(completion), observation(row))`` per completion.

    >>> class Exact:  # anything called as rubric(action, observation), like an OpenEnv Rubric
    ...     def __call__(self, action, observation):
    ...         return float(action.strip() == observation.metadata["answer"])
    >>> r = rubric_reward(Exact())
    >>> r.name, r(completions=["4", "5"], answer=["4", "4"])
    ('exact', [1.0, 0.0])
    """
    if not callable(rubric):
        raise RewardConfigError(f"rubric_reward takes an OpenEnv rubric (called as rubric(action, observation)); got "
                                f"{rubric!r}")  # fmt: skip
    out = OpenEnvRubricReward(rubric=rubric, action=action, observation=observation)
    return out.named(name) if name else out
