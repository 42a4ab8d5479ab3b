"""rewardsmith rewards in other agent frameworks: a verifiers ``Rubric``, and an environment's ``get_reward()``.

* verifiers: its rubric functions take ``prompt``, ``completion`` (text or
  chat messages), ``answer``, ``info``, ``state``, ... by name and return a
  float. :func:`rubric_functions` makes one such function per rewardsmith
  reward (``info`` entries and ``answer`` become columns; a ``None`` score is
  0.0, as a rubric needs a number) and :func:`as_rubric` builds the
  ``verifiers.Rubric`` (``pip install verifiers``).
* TRL's environment contract: :func:`reward_method` makes a ``get_reward``
  method that scores what the environment recorded (its ``transcript`` of the
  rollout and the ``row`` it was reset with) with rewardsmith rewards.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rewardsmith.core.registry import get_rewards
from rewardsmith.core.reward import Reward

__all__ = ["as_rubric", "reward_method", "rubric_functions"]


def _columns(answer: Any, info: Any) -> dict[str, list[Any]]:
    columns = {key: [value] for key, value in info.items()} if isinstance(info, dict) else {}
    if answer is not None:
        columns.setdefault("answer", [answer])
    return columns


def _rubric_function(reward: Reward) -> Callable[..., float]:
    def score(prompt: Any = None, completion: Any = None, answer: Any = None, info: Any = None, **kwargs: Any) -> float:
        value = reward(prompts=[prompt], completions=[completion], **_columns(answer, info))[0]
        return 0.0 if value is None else float(value)

    score.__name__ = reward.name
    score.__qualname__ = reward.name
    return score


def rubric_functions(rewards: Any) -> list[Callable[..., float]]:
    """One verifiers rubric function per reward (names, specs or a config, as :func:`~rewardsmith.get_rewards` takes).

    >>> (fn,) = rubric_functions("gsm8k_accuracy")
    >>> fn.__name__, fn(completion=[{"role": "assistant", "content": "#### 18"}], answer="18")
    ('gsm8k_accuracy', 1.0)
    """
    return [_rubric_function(r) for r in get_rewards(rewards)]


def as_rubric(rewards: Any, weights: Sequence[float] | None = None) -> Any:
    """A ``verifiers.Rubric`` scoring with rewardsmith rewards (needs ``pip install verifiers``)."""
    try:
        import verifiers as vf
    except ImportError as exc:
        from rewardsmith.core.errors import RewardConfigError

        raise RewardConfigError("as_rubric needs the verifiers package: pip install 'rewardsmith[verifiers]'") from exc
    funcs = rubric_functions(rewards)
    return vf.Rubric(funcs=funcs, weights=list(weights) if weights is not None else [1.0] * len(funcs))


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
        return float(sum(w * (s or 0.0) for w, s in zip(weights, scores)))

    return get_reward
