"""Per-turn rewards: one score per assistant turn (or per tool call) of a rollout, and how they become one number.

A :class:`TurnReward` scores each turn of a rollout with its ``score_turn``
(``None`` for a turn it does not judge) and gives, per rollout:

* one number for trainers that take one per rollout (TRL's GRPO): the turn
  scores aggregated by its ``aggregate`` setting (see :func:`aggregate_turns`);
* the per-turn vector for trainers that take one (:meth:`TurnReward.turn_rewards`;
  docs/agents.md says where each trainer wants it);
* a reason per turn in :meth:`~rewardsmith.core.reward.Reward.explain` (the
  result's ``metrics`` hold ``turn_scores``, ``turn_rewards`` and ``turn_reasons``,
  which the evaluation report shows under the sample).

Under TRL, each batch logs ``turns/<name>/judged_share`` (of all turns),
``turns/<name>/turn_mean`` (of the judged turn scores) and
``turns/<name>/turns_per_rollout``; the health monitor warns when a per-turn
reward judges almost no turn.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from rewardsmith.core.engine import Scored
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.inputs import Batch
from rewardsmith.core.pickling import function_ref, resolve_function_ref
from rewardsmith.core.result import RewardResult, to_result
from rewardsmith.core.reward import Reward
from rewardsmith.core.trajectory import ToolCall, Trajectory

__all__ = [
    "AGGREGATES",
    "Turn",
    "TurnReward",
    "aggregate_turns",
    "at_turn_ends",
    "progress_deltas",
    "rollout_turns",
    "turn_reward",
]

#: The ways to make one number of a rollout's turn scores.
AGGREGATES = ("sum", "mean", "last", "min", "discounted", "progress")
UNITS = ("turn", "call")
#: Turns spelled out in a result's reason (every turn's reason is in its metrics).
REASON_TURNS = 50


class Turn(NamedTuple):
    """One step of a rollout a :class:`TurnReward` scores: an assistant turn (or one tool call of it).

    ``index`` counts from 0 among the steps; ``content`` is the assistant
    message's text (``<tool_call>`` blocks taken out); ``calls`` the calls it
    made, each with its result or error; ``final`` whether it is the rollout's
    final answer (the last assistant message, after the last tool result).
    """

    index: int
    content: str
    calls: tuple[ToolCall, ...]
    final: bool


def rollout_turns(trajectory: Trajectory, unit: str = "turn") -> list[Turn]:
    """The steps of a rollout: each assistant turn (``unit="turn"``) or each tool call (``unit="call"``).

    >>> from rewardsmith.core.trajectory import trajectory
    >>> t = trajectory([{"role": "assistant", "content": "", "tool_calls": [
    ...     {"function": {"name": "add", "arguments": {"a": 1}}}, {"function": {"name": "add", "arguments": {}}}]},
    ...     {"role": "tool", "content": "2"}, {"role": "tool", "content": "{'error': 'b is missing'}"},
    ...     {"role": "assistant", "content": "2"}])
    >>> [(s.index, len(s.calls), s.final) for s in rollout_turns(t)]
    [(0, 2, False), (1, 0, True)]
    >>> [s.calls[0].error for s in rollout_turns(t, unit="call")]
    [None, "{'error': 'b is missing'}"]
    """
    messages = trajectory.messages
    last = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=-1)
    turns: list[Turn] = []
    for i, message in enumerate(messages):
        if message.role == "assistant":
            final = i == last and all(m.role != "tool" for m in messages[i + 1 :])
            turns.append(Turn(len(turns), message.content, message.calls, final))
    if unit == "turn":
        return turns
    return [Turn(k, t.content, (c,), False) for k, (t, c) in enumerate((t, c) for t in turns for c in t.calls)]


def progress_deltas(scores: Sequence[float | None]) -> list[float | None]:
    """Turn scores read as progress (how far the task is, after each turn) as what each turn added.

    The first judged turn adds its progress (from 0); an unjudged turn adds
    ``None`` and the next judged one is measured from the last judged progress.

    >>> progress_deltas([0.25, None, 0.75, 0.5])
    [0.25, None, 0.5, -0.25]
    """
    out: list[float | None] = []
    before = 0.0
    for s in scores:
        if s is None:
            out.append(None)
        else:
            out.append(s - before)
            before = s
    return out


def aggregate_turns(scores: Sequence[float | None], how: str = "mean", gamma: float = 1.0) -> float | None:
    """One number of a rollout's turn scores (``None`` turns left out; no judged turn: ``None``).

    ``sum``, ``mean``, ``last``, ``min`` of the judged scores; ``discounted``:
    the return from the first turn, ``sum(gamma**t * score_t)`` with ``t`` the
    turn's index; ``progress``: the scores are progress after each turn and
    the number is the discounted sum of what each turn added
    (:func:`progress_deltas`), which with ``gamma=1`` is the last progress.

    >>> s = [1.0, None, 0.0, 1.0]
    >>> [aggregate_turns(s, how) for how in ("sum", "mean", "last", "min")]
    [2.0, 0.6666666666666666, 1.0, 0.0]
    >>> aggregate_turns(s, "discounted", gamma=0.5), aggregate_turns([0.5, 1.0], "progress", gamma=0.5)
    (1.125, 0.75)
    >>> aggregate_turns([None, None]) is None
    True
    """
    if how not in AGGREGATES:
        raise RewardConfigError(f"aggregate must be one of {', '.join(AGGREGATES)}; got {how!r}")
    if how == "progress":
        scores = progress_deltas(scores)
    judged = [(t, s) for t, s in enumerate(scores) if s is not None]
    if not judged:
        return None
    values = [s for _, s in judged]
    if how == "sum":
        return float(sum(values))
    if how == "mean":
        return sum(values) / len(values)
    if how == "last":
        return values[-1]
    if how == "min":
        return min(values)
    return float(sum(gamma**t * s for t, s in judged))


def at_turn_ends(scores: Sequence[float | None], ends: Sequence[int], length: int) -> list[float]:
    """A per-token reward (verl's ``token_level_rewards`` row): each turn's reward at its last token, 0 elsewhere.

    ``ends`` are the token positions where the turns end (one per score),
    ``length`` the row's length; an unjudged turn adds 0.

    >>> at_turn_ends([1.0, None, 0.5], [2, 4, 7], 8)
    [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.5]
    """
    if len(ends) != len(scores):
        raise ValueError(f"one turn end per score: {len(scores)} score(s), {len(ends)} end(s)")
    row = [0.0] * length
    for end, score in zip(ends, scores):
        if not 0 <= end < length:
            raise ValueError(f"turn end {end} is outside the row of {length} tokens")
        if score is not None:
            row[end] += score
    return row


class _TurnScorer:
    """The per-sample function of a :class:`TurnReward`: a rollout in, its turns scored, one result out."""

    def __init__(self, reward: TurnReward) -> None:
        self.reward = reward
        params = list(inspect.signature(reward.turn_function()).parameters.values())
        if not params:
            raise RewardConfigError(f"{reward.name}: score_turn must take the turn as its first parameter")
        rollout = inspect.Parameter("trajectory", inspect.Parameter.POSITIONAL_OR_KEYWORD)
        self.__signature__ = inspect.Signature([rollout, *params[1:]])

    def __call__(self, trajectory: Trajectory, *args: Any, **kwargs: Any) -> RewardResult:
        reward, fn = self.reward, self.reward.turn_function()
        results = [to_result(fn(turn, *args, **kwargs), reward.name) for turn in rollout_turns(trajectory, reward.unit)]
        return reward.combine_turns(results)


@dataclass(kw_only=True, eq=False)
class TurnReward(Reward):
    """Base class of per-turn rewards: ``score_turn(turn, ...)`` scores one :class:`Turn`; ``None`` leaves it unjudged.

    Settings: ``aggregate`` (``sum``, ``mean``, ``last``, ``min``,
    ``discounted``, ``progress``; see :func:`aggregate_turns`), ``gamma`` (for
    ``discounted`` and ``progress``) and ``unit`` (``turn``: each assistant
    message; ``call``: each tool call). Parameters of ``score_turn`` after the
    turn are injected by name, as in ``score``.

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Polite(TurnReward):
    ...     def score_turn(self, turn: Turn) -> RewardResult | None:
    ...         if turn.calls:
    ...             return None  # tool turns are not judged
    ...         ok = "please" in turn.content
    ...         return RewardResult(float(ok), "polite" if ok else "curt")
    >>> rollout = [{"role": "assistant", "content": "please wait", "tool_calls": [
    ...     {"function": {"name": "f", "arguments": {}}}]}, {"role": "tool", "content": "1"},
    ...     {"role": "assistant", "content": "done, please check"}]
    >>> Polite()(completions=[rollout, "no"]), Polite().turn_rewards(completions=[rollout])
    ([1.0, 0.0], [[None, 1.0]])
    >>> Polite().check(rollout).reason
    'turn 1: not judged; turn 2: 1 (polite)'
    """

    aggregate: str = "mean"
    gamma: float = 1.0
    unit: str = "turn"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.aggregate not in AGGREGATES:
            raise RewardConfigError(
                f"{self.name}: aggregate must be one of {', '.join(AGGREGATES)}; got {self.aggregate!r}"
            )
        if self.unit not in UNITS:
            raise RewardConfigError(f"{self.name}: unit must be 'turn' or 'call'; got {self.unit!r}")
        if isinstance(self.gamma, bool) or not isinstance(self.gamma, (int, float)) or not 0 < self.gamma <= 1:
            raise RewardConfigError(f"{self.name}: gamma must be a number in (0, 1]; got {self.gamma!r}")

    def score_turn(self, turn: Turn, *args: Any, **kwargs: Any) -> Any:
        """Score one turn: a number, a bool, ``None`` (not judged) or a :class:`RewardResult`. Override it."""
        raise NotImplementedError(f"{type(self).__name__} must implement score_turn(self, turn, ...)")

    def turn_function(self) -> Callable[..., Any]:
        """The per-turn callable whose parameters after the turn are injected (:meth:`score_turn` by default)."""
        return self.score_turn

    def sample_function(self) -> Callable[..., Any]:
        return _TurnScorer(self)

    def combine_turns(self, results: list[RewardResult]) -> RewardResult:
        """The rollout's result from its turns' results: the aggregate, a reason per turn, the vectors as metrics."""
        scores = [r.score for r in results]
        rewards = progress_deltas(scores) if self.aggregate == "progress" else scores
        reasons = [r.reason for r in results]
        word = "call" if self.unit == "call" else "turn"
        parts = [
            f"{word} {i + 1}: " + ("not judged" if s is None else f"{s:.4g}" + (f" ({why})" if why else ""))
            for i, (s, why) in enumerate(zip(scores[:REASON_TURNS], reasons))
        ]
        if len(scores) > REASON_TURNS:
            parts.append(f"+{len(scores) - REASON_TURNS} more {word}s (each in metrics['turn_reasons'])")
        metrics = {"turn_scores": scores, "turn_rewards": rewards, "turn_reasons": reasons}
        value = aggregate_turns(scores, self.aggregate, self.gamma)
        return RewardResult(value, "; ".join(parts) or f"no {word}s", metrics)

    def run_batch(self, batch: Batch, *, explain: bool = False) -> Scored:
        """Score a batch (each rollout's turns, aggregated), logging the per-turn figures under TRL."""
        scored = super().run_batch(batch, explain=True)
        log = batch.log_metric
        if log is not None and len(batch):
            vectors = [r.metrics.get("turn_scores") or [] for r in scored.values if isinstance(r, RewardResult)]
            flat = [s for v in vectors for s in v]
            judged = [s for s in flat if s is not None]
            log(f"turns/{self.name}/turns_per_rollout", len(flat) / len(batch))
            if flat:
                log(f"turns/{self.name}/judged_share", len(judged) / len(flat))
            if judged:
                log(f"turns/{self.name}/turn_mean", sum(judged) / len(judged))
        if explain:
            return scored
        return Scored([r.score if isinstance(r, RewardResult) else r for r in scored.values], scored.failed)

    def turn_scores(
        self, prompts: Any = None, completions: Any = None, completion_ids: Any = None, **kwargs: Any
    ) -> list[list[float | None]]:
        """Each rollout's turn scores as given (``None``: a turn not judged); prime-rl's ``turn_credit`` reads
        these as ``info["turn_rewards"]`` (state scores, of which it takes the deltas itself)."""
        return [list(r.metrics.get("turn_scores") or []) for r in self.explain(prompts, completions, None, **kwargs)]

    def turn_rewards(
        self, prompts: Any = None, completions: Any = None, completion_ids: Any = None, **kwargs: Any
    ) -> list[list[float | None]]:
        """Each rollout's per-turn rewards, for trainers that take one per turn: the turn scores, or with
        ``aggregate="progress"`` what each turn added (:func:`progress_deltas`). Discounting is the trainer's."""
        return [list(r.metrics.get("turn_rewards") or []) for r in self.explain(prompts, completions, None, **kwargs)]


@dataclass(kw_only=True, eq=False)
class _FunctionTurnReward(TurnReward):
    fn: Callable[..., Any] = dataclasses.field(default=None)  # type: ignore[assignment]

    @property
    def name(self) -> str:
        return self.__dict__.get("_name") or getattr(self.fn, "__name__", "turn_reward")

    def turn_function(self) -> Callable[..., Any]:
        return self.fn

    def __reduce__(self) -> Any:
        # the module attribute of a decorated function is this reward, so the function is pickled as a reference
        state = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "fn"}
        return (_rebuild, (function_ref(self.fn), state, self.__dict__.get("_name")))


def _rebuild(fn: Any, state: dict[str, Any], name: str | None) -> _FunctionTurnReward:
    if isinstance(fn, tuple) and fn[:1] == ("ref",):
        fn = resolve_function_ref(fn[1], fn[2])
    out = _FunctionTurnReward(fn=fn, **state)
    if name:
        out.__dict__["_name"] = name
    return out


def turn_reward(
    fn: Callable[..., Any] | None = None,
    *,
    aggregate: str = "mean",
    gamma: float = 1.0,
    unit: str = "turn",
    name: str | None = None,
) -> Any:
    """A per-turn reward from a function of one :class:`Turn` (and columns by name), as ``@turn_reward``.

    >>> @turn_reward(aggregate="min", unit="call")
    ... def call_ok(turn: Turn) -> float:
    ...     return float(turn.calls[0].ok)
    >>> rollout = [{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": {}}}]},
    ...            {"role": "tool", "content": "1"}, {"role": "assistant", "tool_calls": [
    ...            {"function": {"name": "f", "arguments": {}}}]}, {"role": "tool", "content": "{'error': 'x'}"}]
    >>> call_ok.name, call_ok(completions=[rollout]), call_ok.turn_scores(completions=[rollout])
    ('call_ok', [0.0], [[1.0, 0.0]])
    """
    if fn is None:
        return lambda f: turn_reward(f, aggregate=aggregate, gamma=gamma, unit=unit, name=name)
    out = _FunctionTurnReward(fn=fn, aggregate=aggregate, gamma=gamma, unit=unit)
    return out.named(name) if name else out
