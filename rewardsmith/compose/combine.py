"""Weighted combinations of rewards: :func:`combine` and :func:`format_and_content`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from rewardsmith.compose.common import as_reward, as_weight, floored, fmt, log_component, unique_labels
from rewardsmith.compose.gate import gate
from rewardsmith.compose.groups import NORMALIZE_CHOICES, Normalize, normalize_scores, prompt_groups
from rewardsmith.core.composite import AsyncComposite, Composite, Steps, any_async
from rewardsmith.core.engine import Scored
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.inputs import Batch
from rewardsmith.core.registry import get_rewards
from rewardsmith.core.result import RewardResult
from rewardsmith.core.reward import Reward

__all__ = ["AsyncCombined", "Combined", "combine", "format_and_content"]

Missing = Literal["renormalize", "zero"]
MISSING_CHOICES: tuple[str, ...] = ("renormalize", "zero")


@dataclass(eq=False, repr=False)
class Combined(Composite):
    """A weighted sum of rewards; what :func:`combine` returns.

    ``normalize`` rescales each component's scores before they are weighted:
    ``"minmax"`` to [0, 1] over the batch, ``"zscore"`` to mean 0 and std 1
    within each prompt's group, ``"rank"`` to rank within the group in [0, 1]
    (see :func:`~rewardsmith.compose.groups.normalize_scores`). Groups are runs
    of identical consecutive prompts (TRL passes a prompt's completions
    together), or every ``group_size`` rows when that is given.

    Components that give ``None`` (not applicable) on a row:

    * ``missing="renormalize"`` (default): the weights of the components that
      apply are scaled up so that they add up, in absolute value, to the total
      weight; a row gets the same scale whichever components apply to it.
    * ``missing="zero"``: TRL's rule, a missing score adds 0.

    A component that *fails* on a row (an error or timeout with its
    ``on_error="none"``) is counted at its lowest score when it declares a
    ``score_range`` (every built-in does), so that breaking a component never
    pays better than its worst honest outcome. A component without a range
    leaves the row unscored under ``"renormalize"`` (a failure never earns the
    reward of the components that did score) and adds 0 under ``"zero"``.

    A row where no component with a non-zero weight applies is ``None``. A
    component with weight 0 is logged but does not count.

    Through TRL's ``log_metric`` it logs each component's mean over the rows it
    applies to as ``<name>/<component>`` and its applicability rate as
    ``<name>/<component>/applicable``. ``explain`` gives each component's
    result in ``metrics``. If any component is async, so is the combination
    (TRL awaits it; its components run concurrently).
    """

    rewards: list[Any]
    weights: list[float] | None = None
    normalize: Normalize | None = None
    missing: Missing = "renormalize"
    group_size: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.rewards, (str, Reward)) or not isinstance(self.rewards, Sequence):
            raise RewardConfigError(f"combine takes a list of rewards, got {type(self.rewards).__name__}")
        self.rewards = [as_reward(r, f"combine: component {i}") for i, r in enumerate(self.rewards)]
        if not self.rewards:
            raise RewardConfigError("combine needs at least one reward")
        if self.weights is not None:
            if isinstance(self.weights, (str, bytes)) or not isinstance(self.weights, Sequence):
                raise RewardConfigError(f"weights must be a list of numbers, got {self.weights!r}")
            if len(self.weights) != len(self.rewards):
                raise RewardConfigError(
                    f"combine got {len(self.weights)} weights for {len(self.rewards)} rewards "
                    f"({', '.join(r.name for r in self.rewards)}); give one weight per reward"
                )
            self.weights = [as_weight(w, f"the weight of {r.name!r}") for w, r in zip(self.weights, self.rewards)]
            if not any(self.weights):
                raise RewardConfigError("combine: every weight is 0, so no component would count; give one a weight")
        if self.normalize is not None and self.normalize not in NORMALIZE_CHOICES:
            raise RewardConfigError(
                f"normalize must be one of {', '.join(map(repr, NORMALIZE_CHOICES))} or None, got {self.normalize!r}"
            )
        if self.missing not in MISSING_CHOICES:
            raise RewardConfigError(
                f"missing must be 'renormalize' (the weights of the components that apply are scaled up to the "
                f"total) or 'zero' (TRL's rule: a missing score adds 0), got {self.missing!r}"
            )
        if self.group_size is not None and (
            isinstance(self.group_size, bool) or not isinstance(self.group_size, int) or self.group_size < 1
        ):
            raise RewardConfigError(f"group_size must be a whole number >= 1 or None, got {self.group_size!r}")
        super().__post_init__()

    def components(self) -> list[Reward]:
        return list(self.rewards)

    @property
    def labels(self) -> list[str]:
        """The components' names as logged under this reward's name (made distinct)."""
        return unique_labels(r.name for r in self.rewards)

    @property
    def effective_weights(self) -> list[float]:
        """The weights, one per component (1.0 each when none were given)."""
        return list(self.weights) if self.weights is not None else [1.0] * len(self.rewards)

    @property
    def default_name(self) -> str:  # type: ignore[override]
        return "+".join(self.labels)

    def __repr__(self) -> str:
        parts = [f"[{', '.join(self.labels)}]"]
        if self.weights is not None:
            parts.append(f"weights={self.weights!r}")
        for key, default in (("normalize", None), ("missing", "renormalize"), ("group_size", None)):
            if getattr(self, key) != default:
                parts.append(f"{key}={getattr(self, key)!r}")
        named = f".named({self.name!r})" if "_name" in self.__dict__ else ""
        return f"combine({', '.join(parts)}){named}"

    # -- scoring --------------------------------------------------------------------------------

    def steps(self, batch: Batch, explain: bool) -> Steps:
        results: list[Scored] = yield [(r, batch) for r in self.rewards]
        n = len(batch)
        results = [floored(r, reward) for r, reward in zip(results, self.rewards)]
        raw = [r.scores for r in results]
        if self.normalize is None:
            used = raw
        else:
            groups = None if self.normalize == "minmax" else prompt_groups(batch, self.group_size, self.name)
            used = [normalize_scores(scores, self.normalize, groups) for scores in raw]
        for label, scores in zip(self.labels, raw):
            log_component(batch.log_metric, f"{self.name}/{label}", scores, n)
        weights = self.effective_weights
        total = math.fsum(abs(w) for w in weights)
        renormalize = self.missing == "renormalize"
        if not explain and not any(None in s for s in used):
            # Every component scored every row (the common case): a plain weighted sum, column by column.
            total_scores = [0.0] * n
            for w, s in zip(weights, used):
                if w:
                    total_scores = [t + w * v for t, v in zip(total_scores, s)]
            return Scored(total_scores)
        counting = sum(1 for w in weights if w)
        out: list[Any] = []
        failed: set[int] = set()
        for i in range(n):
            terms = [(w, s[i]) for w, s in zip(weights, used) if w and s[i] is not None]
            broken = any(i in r.failed for r in results)
            if not terms or (broken and renormalize):
                # Nothing that counts applies; or (renormalize) a component failed here, and scaling the
                # others up would misstate the row (a timed-out accuracy check would earn the full reward).
                score = None
                failed.update([i] if broken else [])
            else:
                score = 0.0
                for w, s in terms:  # in component order, like the fast path above: same rows, same floats
                    score += w * s
                if renormalize and len(terms) < counting:
                    score *= total / math.fsum(abs(w) for w, _ in terms)
            out.append(self._result(i, score, results, used, weights, broken) if explain else score)
        return Scored(out, failed)

    def _result(
        self,
        i: int,
        score: float | None,
        results: list[Scored],
        used: list[list[float | None]],
        weights: list[float],
        broken: bool,
    ) -> RewardResult:
        metrics = {label: r.values[i] for label, r in zip(self.labels, results)}
        parts = []
        for label, r, s, w in zip(self.labels, results, used, weights):
            raw = r.values[i].score
            shown = fmt(raw) if self.normalize is None or raw is None else f"{fmt(raw)} -> {self.normalize} {fmt(s[i])}"
            parts.append(f"{fmt(w)}*{label}={shown}")
        reason = " + ".join(parts)
        if score is None:
            reason += " -> None (a component failed)" if broken and self.missing == "renormalize" else " -> None"
        elif any(s[i] is None for s, w in zip(used, weights) if w) and self.missing == "renormalize":
            reason += f" -> {fmt(score)} (weights of the missing components shared out)"
        else:
            reason += f" -> {fmt(score)}"
        return RewardResult(score, reason, metrics)


@dataclass(eq=False, repr=False)
class AsyncCombined(Combined, AsyncComposite):
    """A :class:`Combined` with at least one async component."""


def combine(
    rewards: Any,
    weights: Sequence[float] | None = None,
    normalize: Normalize | None = None,
    *,
    missing: Missing = "renormalize",
    group_size: int | None = None,
) -> Combined:
    """One reward: the weighted sum of several.

    ``rewards`` is a list of anything :func:`~rewardsmith.get_reward` accepts
    (rewards, registered names, functions) or a comma-separated string of
    names; ``weights`` default to 1.0 each.

    ``normalize``, ``missing`` and ``group_size`` say how scores are rescaled and how a row counts
    that a component does not apply to or fails on: see :class:`Combined`, which applies them.

    >>> from rewardsmith.compose import combine
    >>> both = combine(["think_format", "gsm8k_accuracy"], weights=[0.2, 1.0])
    >>> both.name
    'think_format+gsm8k_accuracy'
    >>> both(completions=["<think>9*2</think><answer>18</answer>", "<answer>18</answer>", "17"],
    ...      answer=["18", "18", "no number"])
    [1.2, 1.0, 0.0]
    >>> both.explain(completions=["17"], answer=["no number"])[0].reason
    '0.2*think_format=0 + 1*gsm8k_accuracy=None -> 0 (weights of the missing components shared out)'
    >>> combine(["think_format", "gsm8k_accuracy"], [0.2, 1.0], missing="zero")(
    ...     completions=["<think>9*2</think><answer>18</answer>"], answer=["no number"])
    [0.2]
    """
    items = get_rewards(rewards) if isinstance(rewards, str) else rewards
    if isinstance(items, Reward) or not isinstance(items, Sequence):
        raise RewardConfigError(f"combine takes a list of rewards, got {type(items).__name__}")
    made = [as_reward(r, f"combine: component {i}") for i, r in enumerate(items)]
    cls = AsyncCombined if any_async(made) else Combined
    return cls(made, weights, normalize, missing=missing, group_size=group_size)


def format_and_content(
    format: Any,
    content: Any,
    format_weight: float = 0.2,
    *,
    content_weight: float = 1.0,
    gated: bool = False,
    threshold: float = 1.0,
) -> Combined:
    """The usual GRPO reward: a format reward plus a content (correctness) reward, as one reward.

    ``format_weight * format + content_weight * content``. With ``gated`` the
    content counts only where the format reaches ``threshold`` (see
    :func:`~rewardsmith.compose.gate`): a right answer in the wrong format
    earns nothing for its content. The format is scored once per batch either
    way. A format bonus of 0.2 keeps correctness the main signal.

    >>> from rewardsmith.compose import format_and_content
    >>> r = format_and_content("think_format", "gsm8k_accuracy", gated=True)
    >>> r.name
    'think_format+gsm8k_accuracy'
    >>> r(completions=["<think>9*2</think><answer>18</answer>", "the answer is 18"], answer=["18", "18"])
    [1.2, 0.0]
    """
    fmt_reward = as_reward(format, "format_and_content: format")
    content_reward = as_reward(content, "format_and_content: content")
    second = gate(fmt_reward, content_reward, threshold=threshold, otherwise=0.0) if gated else content_reward
    made = combine([fmt_reward, second], [format_weight, content_weight])
    return made.named(f"{fmt_reward.name}+{content_reward.name}") if gated else made
