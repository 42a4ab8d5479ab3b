"""Reward health during training: is the reward still carrying signal? (The logic; the TRL callback is in callback.)

:class:`HealthMonitor` reads what a GRPO trainer logs at each logging step
(``frac_reward_zero_std``, ``rewards/<name>/mean`` and ``/std``,
``completions/mean_length``, ``reward``) and, for rewardsmith rewards, their
live counters (:attr:`rewardsmith.Reward.counters`: samples, unscored samples,
failures, the last batch's scores). It gives ``health/...`` metrics for the
log and, when a threshold is crossed, one warning per problem saying what it
means and what to try:

* ``zero_spread``: the share of prompt groups whose rewards all tie (no advantage, nothing learned);
* ``dominant``: one reward (or one part of a combined reward) carries nearly all the variance of the total
  while another one still moves, so the other's signal is drowned;
* ``errors`` / ``unscored``: a reward failing on many samples, or scoring none;
* ``length_drift``: completion length drifting while correctness stays flat;
* ``disagreement``: an LLM judge and a rule reward disagreeing on many samples.

:func:`silent_reward` is the fail-fast rule: a reward that failed on every
sample of the first batch, or raised a ``TypeError`` about its call signature,
unless its ``on_error`` was set on purpose.
"""

from __future__ import annotations

import logging
import math
import re
import statistics
from collections import defaultdict, deque
from dataclasses import asdict, dataclass, field
from typing import Any

from rewardsmith.core.errors import RewardConfigError, RewardsmithError
from rewardsmith.core.names import did_you_mean
from rewardsmith.core.problems import ConfigError
from rewardsmith.core.reward import Reward
from rewardsmith.data.columns import leaf_rewards
from rewardsmith.health.tools import tool_metrics, tool_warnings

__all__ = [
    "HealthMonitor",
    "HealthThresholds",
    "HealthWarning",
    "SilentRewardError",
    "health_settings",
    "silent_reward",
]

logger = logging.getLogger("rewardsmith")

_SIGNATURE = re.compile(
    r"unexpected keyword argument|missing \d+ required (?:positional|keyword)|takes \d+ positional argument|"
    r"got multiple values for argument|positional arguments? but \d+ (?:was|were) given"
)


class SilentRewardError(RewardsmithError):
    """A reward scored nothing on the first batch (every sample failed, or it cannot be called as TRL calls it)."""


@dataclass
class HealthThresholds:
    """When the monitor warns (each a share in [0, 1] unless said; ``None`` turns that warning off).

    * ``zero_spread`` (0.9): mean share of prompt groups whose rewards all tie, over ``window`` logs;
      every group of the first logged batch tying also warns.
    * ``dominant`` (0.95): a component's share of the total reward's variance, while another still moves
      (its recent spread is at least a quarter of its largest: a reward that was learned is not drowned).
    * ``error_rate`` (0.05): a reward's failed samples; ``unscored`` (0.99): its unscored samples.
    * ``length_drift`` (0.5): relative change of the mean completion length from the first ``window``
      logs to the last ``window``, while correctness moves less than ``flat_correctness`` (0.05).
    * ``disagreement`` (0.3): share of samples where an LLM judge and a rule reward disagree.
    * ``no_tool_calls`` (0.99): share of rollouts without a tool call; ``failed_tool_calls`` (0.5): share of calls
      that failed; ``max_tool_calls`` (10): calls per rollout (:mod:`rewardsmith.health.tools`).
    * ``unjudged_turns`` (0.99): share of the turns a per-turn reward left unjudged (``None``).
    """

    zero_spread: float | None = 0.9
    dominant: float | None = 0.95
    error_rate: float | None = 0.05
    unscored: float | None = 0.99
    length_drift: float | None = 0.5
    flat_correctness: float = 0.05
    disagreement: float | None = 0.3
    no_tool_calls: float | None = 0.99
    failed_tool_calls: float | None = 0.5
    max_tool_calls: float | None = 10.0
    unjudged_turns: float | None = 0.99
    window: int = 5

    @classmethod
    def of(cls, value: HealthThresholds | dict[str, Any] | None) -> HealthThresholds:
        """From itself, ``None`` (the defaults) or a dict of its fields (an unknown key is an error)."""
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        known = list(cls.__dataclass_fields__)
        unknown = [k for k in value if k not in known]
        if unknown or not isinstance(value, dict):
            raise RewardConfigError(f"health has no setting {unknown[0] if unknown else value!r}; settings: "
                                    f"{', '.join(known)}")  # fmt: skip
        return cls(**value)


@dataclass
class HealthWarning:
    """One crossed threshold: which check, at which step, what it means and what to try."""

    kind: str
    step: int
    message: str
    value: float | None = None
    threshold: float | None = None


def _mean(values: Any) -> float | None:
    clean = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return statistics.fmean(clean) if clean else None


def _is_judge(reward: Reward) -> bool:
    module = type(reward).__module__
    return module.startswith("rewardsmith.judges") or getattr(reward, "is_judge", False) is True


def _passes(score: float, reward: Reward) -> bool:
    low, high = reward.score_range if reward.score_range else (0.0, 1.0)
    return score >= (low + high) / 2


@dataclass
class _Seen:
    samples: int = 0
    nones: int = 0
    errors: int = 0
    batches: int = 0


@dataclass
class HealthMonitor:
    """Health metrics from a trainer's logs (and rewardsmith rewards' counters), warnings once per problem.

    ``rewards`` are the trainer's reward functions (rewardsmith rewards give
    error and unscored rates, composite parts and judge agreement; others are
    seen through the logs only); ``weights`` the trainer's reward weights.

    >>> monitor = HealthMonitor(thresholds={"window": 2})
    >>> metrics, warnings = monitor.observe({"reward": 0.0, "frac_reward_zero_std": 1.0}, step=1)
    >>> metrics["health/zero_spread"], warnings[0].kind
    (1.0, 'zero_spread')
    """

    rewards: list[Any] = field(default_factory=list)
    weights: list[float] | None = None
    thresholds: HealthThresholds | dict[str, Any] | None = None
    warnings: list[HealthWarning] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.limits = HealthThresholds.of(self.thresholds)
        self.ours = [r for r in self.rewards if isinstance(r, Reward)]
        self.leaves = list({id(leaf): leaf for r in self.ours for leaf, _ in leaf_rewards(r)}.values())
        self.history: dict[str, list[float | None]] = defaultdict(list)
        self.recent: dict[str, deque[float | None]] = defaultdict(lambda: deque(maxlen=self.limits.window))
        self.seen: dict[int, _Seen] = {}
        self.batch_metrics: dict[str, list[float]] = defaultdict(list)
        self.warned: set[str] = set()
        self.logs = 0
        # each component's weighted spread: its largest so far and its recent values (is it still moving?)
        self.spread_peak: dict[str, float] = {}
        self.spread_recent: dict[str, deque[float]] = defaultdict(lambda: deque(maxlen=self.limits.window))

    # -- per batch (called after each optimisation step) ---------------------------------------------------

    def after_step(self) -> None:
        """Look at the batches scored since the last call (component variance, judge agreement)."""
        fresh = False
        for reward in self.leaves + self.ours:
            batches = reward.counters.batches
            seen = self.seen.setdefault(id(reward), _Seen())
            if batches != seen.batches:
                fresh = True
        if fresh:
            self._component_shares()
            self._agreement()
        for reward in self.leaves + self.ours:
            self.seen.setdefault(id(reward), _Seen()).batches = reward.counters.batches

    def _component_shares(self) -> None:
        if len(self.ours) != 1 or not hasattr(self.ours[0], "effective_weights"):
            return
        combined = self.ours[0]
        parts = combined.components()
        columns = [p.counters.last_scores for p in parts]
        n = len(columns[0] or []) if columns else 0
        if n < 2 or len(parts) < 2 or any(c is None or len(c) != n for c in columns):
            return
        spreads = {}
        for label, weight, scores in zip(combined.labels, combined.effective_weights, columns):
            present = [s for s in scores if s is not None]
            spreads[f"{combined.name}/{label}"] = abs(weight) * (
                statistics.pstdev(present) if len(present) > 1 else 0.0
            )
        self._note_spreads(spreads)
        for name, share in _shares(spreads).items():
            self.batch_metrics[f"variance_share/{name}"].append(share)

    def _note_spreads(self, spreads: dict[str, float]) -> None:
        for name, spread in spreads.items():
            self.spread_peak[name] = max(spread, self.spread_peak.get(name, 0.0))
            self.spread_recent[name].append(spread)

    def _still_moving(self, name: str) -> bool:
        """Whether a component's recent spread is a real part of what it has shown (not a reward that saturated).

        A format reward that was learned keeps a trace of spread; its share of the
        variance is then small because it has nothing left to teach, not because
        another reward drowns it.
        """
        recent, peak = self.spread_recent.get(name), self.spread_peak.get(name, 0.0)
        if not recent or peak <= 0:
            return False
        return statistics.fmean(recent) >= _STILL_MOVING * peak

    def _agreement(self) -> None:
        judges = [r for r in self.leaves if _is_judge(r)]
        rules = [r for r in self.leaves if not _is_judge(r)]
        for judge in judges:
            for rule in rules:
                a, b = judge.counters.last_scores, rule.counters.last_scores
                if not a or not b or len(a) != len(b):
                    continue
                pairs = [(x, y) for x, y in zip(a, b) if x is not None and y is not None]
                if pairs:
                    differ = sum(_passes(x, judge) != _passes(y, rule) for x, y in pairs) / len(pairs)
                    self.batch_metrics[f"disagreement/{judge.name}~{rule.name}"].append(differ)

    # -- per log --------------------------------------------------------------------------------------------

    def observe(self, logs: dict[str, Any], step: int) -> tuple[dict[str, float], list[HealthWarning]]:
        """The ``health/...`` metrics of one training log, and the warnings it newly triggers."""
        if "reward" not in logs:
            return {}, []
        self.logs += 1
        metrics: dict[str, float] = {}
        zero = logs.get("frac_reward_zero_std")
        if zero is not None:
            metrics["zero_spread"] = float(zero)
        names = [k[len("rewards/") : -len("/mean")] for k in logs if k.startswith("rewards/") and k.endswith("/mean")]
        if len(names) >= 2:
            weights = self.weights if self.weights and len(self.weights) == len(names) else [1.0] * len(names)
            spreads = {n: abs(w) * (logs.get(f"rewards/{n}/std") or 0.0) for n, w in zip(names, weights)}
            self._note_spreads(spreads)
            for name, share in _shares(spreads).items():
                metrics[f"variance_share/{name}"] = share
        for key, values in self.batch_metrics.items():
            metrics[key] = statistics.fmean(values)
        self.batch_metrics.clear()
        metrics.update(self._rates(logs, names))
        if logs.get("completions/mean_length") is not None:
            metrics["mean_length"] = float(logs["completions/mean_length"])
        metrics["correctness"] = self._correctness(logs, names)
        metrics.update(tool_metrics(logs))
        for key, value in metrics.items():
            self.history[key].append(value)
            self.recent[key].append(value)
        new = self._warnings_due(step)
        shown = {f"health/{k}": v for k, v in metrics.items() if v is not None and k not in ("mean_length",)}
        return shown, new

    def _rates(self, logs: dict[str, Any], names: list[str]) -> dict[str, float]:
        out: dict[str, float] = {}
        for reward in self.leaves or []:
            c, seen = reward.counters, self.seen.setdefault(id(reward), _Seen())
            samples = c.samples - seen.samples
            if samples > 0:
                out[f"{reward.name}/error_rate"] = (c.errors - seen.errors) / samples
                out[f"{reward.name}/unscored_rate"] = (c.nones - seen.nones) / samples
            seen.samples, seen.nones, seen.errors = c.samples, c.nones, c.errors
        ours = {r.name for r in self.leaves}
        for name in names:
            if name not in ours:
                out[f"{name}/unscored_rate"] = 1.0 if logs.get(f"rewards/{name}/mean") is None else 0.0
        return out

    def _correctness(self, logs: dict[str, Any], names: list[str]) -> float | None:
        content = {r.name for r in self.ours if r.missing_columns([])}
        chosen = [n for n in names if n in content]
        return _mean(logs.get(f"rewards/{n}/mean") for n in chosen) if chosen else logs.get("reward")

    def _warn(
        self, key: str, step: int, message: str, value: float | None, limit: float | None
    ) -> HealthWarning | None:
        if key in self.warned:
            return None
        self.warned.add(key)
        warning = HealthWarning(key.split(":")[0], step, message, value, limit)
        self.warnings.append(warning)
        logger.warning("health (step %d): %s", step, message)
        return warning

    def _warnings_due(self, step: int) -> list[HealthWarning]:
        t, out = self.limits, []
        recent = {k: _mean(v) for k, v in self.recent.items()}
        full = self.logs >= t.window
        zero = recent.get("zero_spread")
        first = self.history.get("zero_spread", [None])[0] if self.logs == 1 else None
        if t.zero_spread is not None and zero is not None and ((full and zero >= t.zero_spread) or first == 1.0):
            how = "every prompt group" if first == 1.0 else f"{zero:.0%} of the prompt groups"
            span = "of the first logged batch" if first == 1.0 else f"over the last {t.window} logs"
            whose = "its" if first == 1.0 else "their"
            out.append(self._warn("zero_spread", step, (
                f"{how} {span} gave all {whose} completions the same reward: every advantage is zero "
                "there and nothing is learned from them. Try: more generations or a higher "
                "temperature, a reward that gives partial credit, data that is neither too easy nor too hard, and "
                "check that the rewards read the right columns (rewardsmith rewards show NAME)."
            ), zero, t.zero_spread))  # fmt: skip
        shares = {k[len("variance_share/") :]: v for k, v in recent.items() if k.startswith("variance_share/")}
        if t.dominant is not None and full and len(shares) >= 2:
            top, value = max(shares.items(), key=lambda kv: kv[1] or 0.0)
            others = [k for k, v in shares.items() if k != top and (v or 0.0) > 1e-6 and self._still_moving(k)]
            if value is not None and value >= t.dominant and others:
                out.append(self._warn(f"dominant:{top}", step, (
                    f"{top} carries {value:.0%} of the total reward's variance (weight times spread) while "
                    f"{', '.join(others)} also move: their signal is drowned and the advantages follow {top} alone. "
                    "Try: lower its weight, put the rewards on one scale (combine(..., normalize='zscore'), or "
                    "multi_objective_aggregation='normalize_then_sum'), or check its range."
                ), value, t.dominant))  # fmt: skip
        for key, value in recent.items():
            if value is None or not full:
                continue
            name = key.rsplit("/", 1)[0]
            if key.endswith("/error_rate") and t.error_rate is not None and value >= t.error_rate:
                out.append(self._warn(f"errors:{name}", step, (
                    f"reward {name} failed on {value:.0%} of its samples over the last {t.window} logs; they score "
                    f"None (or 0 with on_error='zero') and teach nothing. The first traceback was logged when it "
                    f"happened; try `rewardsmith check {name} --dataset ...` to see it fail outside training."
                ), value, t.error_rate))  # fmt: skip
            if key.endswith("/unscored_rate") and t.unscored is not None and value >= t.unscored:
                out.append(self._warn(f"unscored:{name}", step, (
                    f"reward {name} scored {'no' if value >= 1 else f'only {1 - value:.0%} of the'} samples over the "
                    f"last {t.window} logs (None: not applicable or failed). If that is not meant (a task route), "
                    "check the columns it reads and that the completions have the shape it expects."
                ), value, t.unscored))  # fmt: skip
            if key.startswith("disagreement/") and t.disagreement is not None and value >= t.disagreement:
                pair = key[len("disagreement/") :].replace("~", " and ")
                out.append(self._warn(f"disagreement:{pair}", step, (
                    f"{pair} disagree on {value:.0%} of the samples (pass/fail at mid-range): the judge may be "
                    "rewarding something the rule does not (style, length, confidence), or the rule misses right "
                    "answers. Read the samples where they differ; calibrate the judge's prompt or the rule."
                ), value, t.disagreement))  # fmt: skip
        out += [self._warn(*w[:1], step, *w[1:]) for w in tool_warnings(recent, t)] if full else []
        out.append(self._length_drift(step))
        return [w for w in out if w is not None]

    def _length_drift(self, step: int) -> HealthWarning | None:
        t = self.limits
        lengths, correct = self.history.get("mean_length", []), self.history.get("correctness", [])
        if t.length_drift is None or len(lengths) < 2 * t.window:
            return None
        start, now = _mean(lengths[: t.window]), _mean(lengths[-t.window :])
        c0, c1 = _mean(correct[: t.window]), _mean(correct[-t.window :])
        if not start or now is None or c0 is None or c1 is None:
            return None
        drift = (now - start) / start
        self.history["length_drift"].append(drift)
        if abs(drift) >= t.length_drift and abs(c1 - c0) < t.flat_correctness:
            way = "grown" if drift > 0 else "shrunk"
            return self._warn("length_drift", step, (
                f"completions have {way} by {abs(drift):.0%} (mean length {start:.0f} -> {now:.0f} tokens) while "
                f"correctness stayed flat ({c0:.3f} -> {c1:.3f}): the model is changing its length, not its answers. "
                "Check for a reward that pays for length (or padding), truncation at max_completion_length, and "
                "repetition; a length or repetition penalty may help."
            ), drift, t.length_drift)  # fmt: skip
        return None

    def summary(self) -> dict[str, Any]:
        """For ``summary.json``: the warnings, and each metric's last, mean and worst value."""
        metrics = {}
        for key, values in self.history.items():
            clean = [v for v in values if v is not None]
            if clean:
                metrics[key] = {"last": clean[-1], "mean": statistics.fmean(clean), "max": max(clean)}
        return {"warnings": [asdict(w) for w in self.warnings], "metrics": metrics, "logs": self.logs}


def health_settings(value: bool | dict[str, Any]) -> dict[str, Any] | None:
    """A config's ``health:`` as the monitor's settings (``None``: off), checked before anything loads.

    >>> health_settings(True), health_settings(False), health_settings({"fail_fast": False, "zero_spread": 0.8})
    ({'thresholds': {}, 'fail_fast': True}, None, {'thresholds': {'zero_spread': 0.8}, 'fail_fast': False})
    >>> health_settings({"zero_sprad": 0.8})
    Traceback (most recent call last):
    ...
    rewardsmith.core.problems.ConfigError: health: no setting 'zero_sprad'. ...
    """
    if isinstance(value, bool):
        return {"thresholds": {}, "fail_fast": True} if value else None
    settings = dict(value)
    fail_fast = settings.pop("fail_fast", True)
    if not isinstance(fail_fast, bool):
        raise ConfigError(f"health.fail_fast: true or false, got {fail_fast!r}")
    known = ["fail_fast", *HealthThresholds.__dataclass_fields__]
    for key in settings:
        if key not in HealthThresholds.__dataclass_fields__:
            raise ConfigError(
                f"health: no setting {key!r}.{did_you_mean(str(key), known)} Settings: {', '.join(known)}"
            )
    try:
        HealthThresholds(**settings)
    except TypeError as exc:
        raise ConfigError(f"health: {exc}") from None
    return {"thresholds": settings, "fail_fast": fail_fast}


# A component whose recent spread is under this share of its largest is taken as settled (learned or given up).
_STILL_MOVING = 0.25


def _shares(spreads: dict[str, float]) -> dict[str, float]:
    total = math.fsum(s * s for s in spreads.values())
    if total <= 0:
        return {}
    return {name: s * s / total for name, s in spreads.items()}


def silent_reward(reward: Reward) -> SilentRewardError | None:
    """The error to stop a run with when ``reward`` (or a part of it) scored nothing on its first batch.

    A part that failed on every sample it was given, or raised a ``TypeError``
    about how it is called, is silent, unless its ``on_error`` was set on purpose.

    >>> from rewardsmith import get_reward
    >>> def first_word_length(completions, **kwargs):
    ...     return [float(len(c.split()[0])) for c in completions]
    >>> r = get_reward(first_word_length)
    >>> r(prompts=["p"], completions=[""])
    [None]
    >>> print(str(silent_reward(r)).splitlines()[0])
    reward 'first_word_length' failed on all 1 samples of the first batch: IndexError: list index out of range
    """
    for leaf, inside in leaf_rewards(reward):
        c = leaf.counters
        failure = c.first_failure
        if failure is None or leaf.on_error_explicit or c.samples == 0:
            continue
        signature = failure.exc_type == "TypeError" and bool(_SIGNATURE.search(failure.message))
        if c.errors < c.samples and not signature:
            continue
        where = f" (part of {inside})" if inside else ""
        how_many = f"all {c.samples}" if c.errors >= c.samples else f"{c.errors} of {c.samples}"
        return SilentRewardError(
            f"reward {leaf.name!r}{where} failed on {how_many} samples of the first batch: {failure.message}\n"
            f"{_fix(leaf, signature)}\n"
            f"The first traceback:\n{failure.format_traceback().rstrip()}"
        )
    return None


def _fix(reward: Reward, signature: bool) -> str:
    if signature:
        fn = getattr(reward, "fn", None)
        params = ""
        if fn is not None:
            import inspect

            try:
                params = f" Its signature is {getattr(fn, '__name__', 'f')}{inspect.signature(fn)}."
            except (TypeError, ValueError):
                params = ""
        return (
            "Likely fix: TRL calls reward functions as f(prompts=..., completions=..., completion_ids=..., **columns), "
            f"each dataset column by name.{params} Name the parameters completions (and prompts) and add **kwargs, "
            "or write it per sample: @reward def f(completion, answer) -> float. Set on_error explicitly to train on "
            "anyway."
        )
    return (
        "Likely fix: run `rewardsmith check NAME --dataset ...` to see it fail outside training (a missing column, "
        "a completion shape it does not expect, a library not installed), fix it, or set on_error explicitly "
        "(on_error: none keeps training with it scoring None)."
    )
