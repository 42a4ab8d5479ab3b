"""Length rewards: ``length`` (a target or range), ``cosine_length`` (correctness scaled by length),
``soft_overlong`` (DAPO's soft overlong punishment).

Lengths are measured in ``tokens`` (the completion's ``completion_ids``,
which TRL passes; outside TRL, a ``tokenizer`` setting), ``words`` or
``chars``. Words and characters are counted as the text is seen: invisible
characters (zero-width, format, variation selectors) and combining marks count
for nothing and a run of white space counts as one character, so padding
cannot stretch a short answer to a target length. Asking for tokens when there are none and no tokenizer is set is
a clear error, never a silent switch of units.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from rewardsmith.core.composite import Composite, Steps
from rewardsmith.core.engine import Scored
from rewardsmith.core.errors import DatasetError, RewardConfigError
from rewardsmith.core.extras import require_extra
from rewardsmith.core.injection import Column, Input
from rewardsmith.core.inputs import Batch
from rewardsmith.core.registry import get_reward, register_reward
from rewardsmith.core.result import RewardResult
from rewardsmith.core.reward import Reward
from rewardsmith.rewards._text import visible_text

__all__ = [
    "CorrectnessInput",
    "CosineLength",
    "Length",
    "SoftOverlong",
    "check_correct_column",
    "check_unit",
    "correct_or_unknown",
    "measure_length",
    "read_correct",
]

Unit = Literal["tokens", "words", "chars"]
_UNITS = ("tokens", "words", "chars")


@lru_cache(maxsize=4)
def _tokenizer(name: str) -> Any:
    require_extra("models", "counting tokens with a tokenizer", ["transformers"])
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(name)


def measure_length(
    completion: str, completion_ids: Sequence[int] | None, unit: str, tokenizer: str | None, reward_name: str
) -> int:
    """The completion's length in ``unit``.

    >>> measure_length("two words", None, "words", None, "demo")
    2
    >>> measure_length("two words", [5, 6, 7], "tokens", None, "demo")
    3
    """
    if unit == "chars":
        return _seen_chars(completion)
    if unit == "words":
        return len(visible_text(completion).split())
    if completion_ids is not None:
        return len(completion_ids)
    if tokenizer:
        return len(_tokenizer(tokenizer)(completion, add_special_tokens=False)["input_ids"])
    raise RewardConfigError(
        f"reward {reward_name!r} measures tokens but got no completion_ids (TRL passes them during training); "
        "outside TRL set tokenizer='<model name or path>' or use unit='words' or unit='chars'"
    )


def _seen_chars(text: str) -> int:
    """Characters as seen: invisible ones and combining marks left out, each run of white space one character.

    >>> _seen_chars("a  b\u200b\u3000 c\u0301  "), _seen_chars("abc")
    (5, 3)
    """
    seen = " ".join(visible_text(text).split())
    if seen.isascii():
        return len(seen)
    return sum(1 for ch in seen if ch.isascii() or unicodedata.category(ch) not in ("Mn", "Me"))


_TRUE_TEXT = ("true", "yes")
_FALSE_TEXT = ("false", "no")
_UNKNOWN_TEXT = ("", "none", "null", "nan", "n/a")


def read_correct(value: Any) -> float | None:
    """A ``correct`` column's value as a score: a bool, a number, or their text as CSV files hold them.

    ``None``, a NaN (a missing CSV cell) and blank text are unknown (``None``);
    other text raises ``ValueError``.

    >>> read_correct(True), read_correct("False"), read_correct(" true "), read_correct("0.5"), read_correct("")
    (1.0, 0.0, 1.0, 0.5, None)
    >>> read_correct("maybe")
    Traceback (most recent call last):
    ...
    ValueError: 'maybe' is not true, false or a score
    """
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _TRUE_TEXT or text in _FALSE_TEXT:
            return float(text in _TRUE_TEXT)
        if text in _UNKNOWN_TEXT:
            return None
        try:
            number = float(text)
        except ValueError:
            raise ValueError(f"{value!r} is not true, false or a score") from None
    else:
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"{value!r} is not true, false or a score") from None
    if math.isnan(number):
        return None
    return number


def correct_or_unknown(value: Any) -> float | None:
    """:func:`read_correct`, with unreadable text unknown (``None``): the column was checked before training."""
    try:
        return read_correct(value)
    except ValueError:
        return None


def check_correct_column(reward: Reward, column: str, values: Sequence[Any] | None) -> None:
    """Before training: every value of the ``correct`` column can be read (:func:`read_correct`), else an error."""
    bad = []
    for row, value in enumerate(values or []):
        try:
            read_correct(value)
        except ValueError as exc:
            bad.append(f"row {row}: {exc}")
    if bad:
        raise DatasetError(
            f'reward {reward.name!r}: the {column!r} column must hold true/false (or "True"/"False" text) or a '
            f"score per row; {len(bad)} row(s) do not: " + "; ".join(bad[:5])
        )


def check_unit(name: str, unit: str) -> None:
    """A clear error for a length unit that is not ``tokens``, ``words`` or ``chars``."""
    if unit not in _UNITS:
        raise RewardConfigError(f"reward {name!r}: unit must be one of {', '.join(_UNITS)}, got {unit!r}")


@register_reward("length")
@dataclass
class Length(Reward):
    """1.0 within a target length or range, falling off (linear or cosine) to 0 outside it.

    Give ``target`` (an exact length) or ``min_length``/``max_length`` (a
    range, either side open). Outside, the score falls from 1 to 0 over
    ``width`` units; by default it reaches 0 at length 0 below the target and
    at twice the target (or upper bound) above it. Unit: ``tokens`` (default;
    from ``completion_ids``), ``words`` or ``chars``.

    Columns: none (``completion_ids`` from TRL for tokens). Range: [0, 1].

    >>> r = Length(target=4, unit="words")
    >>> r(completions=["one two three four", "one two", "a b c d e f g h", "a " * 40])
    [1.0, 0.5, 0.0, 0.0]
    >>> Length(max_length=4, unit="words", falloff="cosine")(completions=["a b c d e f"])
    [0.5]
    """

    default_name = "length"
    score_range = (0.0, 1.0)

    target: int | None = None
    min_length: int | None = None
    max_length: int | None = None
    unit: Unit = "tokens"
    falloff: Literal["linear", "cosine"] = "linear"
    width: float | None = None
    tokenizer: str | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        check_unit(self.name, self.unit)
        if self.target is None and self.min_length is None and self.max_length is None:
            raise RewardConfigError(f"reward {self.name!r} needs target=N or min_length/max_length")
        if self.target is not None and (self.min_length is not None or self.max_length is not None):
            raise RewardConfigError(f"reward {self.name!r}: give either target or min_length/max_length, not both")
        low, high = self._bounds()
        if low > high:
            raise RewardConfigError(f"reward {self.name!r}: min_length {low} is above max_length {high}")
        if self.falloff not in ("linear", "cosine"):
            raise RewardConfigError(f"reward {self.name!r}: falloff must be 'linear' or 'cosine', got {self.falloff!r}")
        if self.width is not None and self.width <= 0:
            raise RewardConfigError(f"reward {self.name!r}: width must be positive, got {self.width}")

    def _bounds(self) -> tuple[float, float]:
        if self.target is not None:
            return self.target, self.target
        low = self.min_length if self.min_length is not None else 0
        high = self.max_length if self.max_length is not None else math.inf
        return low, high

    def score(self, completion: str, completion_ids: Any = None) -> RewardResult:
        length = measure_length(completion, completion_ids, self.unit, self.tokenizer, self.name)
        low, high = self._bounds()
        distance = low - length if length < low else max(0.0, length - high)
        if distance == 0:
            return RewardResult(1.0, f"{length} {self.unit}, within target")
        if self.width:
            width = self.width
        elif length < low:
            width = max(low, 1)  # reaches 0 at length 0
        else:
            width = high if high > 0 else 1  # reaches 0 at twice the upper bound
        fraction = min(distance / width, 1.0)
        value = 1.0 - fraction if self.falloff == "linear" else 0.5 * (1.0 + math.cos(math.pi * fraction))
        return RewardResult(value, f"{length} {self.unit}, {distance:g} outside the target")


class CorrectnessInput:
    """What a reward that needs correctness reads: its ``correctness`` reward, else its ``correct_column``.

    A mixin for dataclass rewards with the fields ``correctness`` (a reward, or ``None``) and ``correct_column``.
    """

    correctness: Any
    correct_column: str

    def resolve_correctness(self) -> None:
        """Make the ``correctness`` setting (a name, entry or reward) a reward."""
        if self.correctness is not None:
            self.correctness = get_reward(self.correctness)

    def read_correctness(self, batch: Batch) -> Steps:
        """Each row's correctness (``None``: unknown) and the rows whose correctness check failed.

        A step of a composite's ``steps``: ``correct, failed = yield from self.read_correctness(batch)``.
        """
        if self.correctness is None:
            return [correct_or_unknown(v) for v in self.injection.values(batch, "correct") or []], set()  # type: ignore[attr-defined]
        (scored,) = yield [(self.correctness, batch)]
        return scored.scores, scored.failed

    def components(self) -> list[Reward]:
        return [self.correctness] if self.correctness is not None else []

    def inputs(self) -> dict[str, Input]:
        return {} if self.correctness is not None else {"correct": Column(self.correct_column)}

    def check_data(self, columns: dict[str, Sequence[Any]]) -> None:
        check_correct_column(self, self.correct_column, columns.get("correct"))  # type: ignore[arg-type]


@register_reward("cosine_length", aliases=("cosine",))
@dataclass
class CosineLength(CorrectnessInput, Composite):
    """Correctness scaled by length on a cosine schedule: short correct answers score most, short wrong ones least.

    A correct completion scores from ``max_value_correct`` (length 0) down to
    ``min_value_correct`` (length ``max_length``); a wrong one from
    ``min_value_wrong`` up to ``max_value_wrong``. Lengths beyond
    ``max_length`` are clamped to it, so very long outputs never score high
    again (the cosine is not periodic here). Correctness comes from the
    ``correct_column`` (a bool or score per row, or its text as CSV holds it:
    ``"True"``/``"False"``; other text is an error before training) or from another reward
    (``correctness="math_accuracy"``); a score at or above ``threshold`` is
    correct, and a ``None`` correctness (the reward does not apply) gives
    ``None``. A correctness check that *fails* (times out or crashes) counts
    as wrong: breaking the checker never pays better than a wrong answer.

    Columns: ``correct`` (configurable), or those of the ``correctness``
    reward. Range: [min_value_wrong, max_value_correct].

    >>> r = CosineLength(max_length=10, unit="words")
    >>> [round(v, 4) for v in r(completions=["a", "a " * 10, "a", "a " * 500], correct=[True, True, False, False])]
    [0.9878, 0.5, -0.9878, -0.5]
    """

    default_name = "cosine_length"

    max_length: int = 1000
    min_value_wrong: float = -1.0
    max_value_wrong: float = -0.5
    min_value_correct: float = 0.5
    max_value_correct: float = 1.0
    correctness: Any = None
    correct_column: str = "correct"
    threshold: float = 1.0
    unit: Unit = "tokens"
    tokenizer: str | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        check_unit(self.name, self.unit)
        if self.max_length <= 0:
            raise RewardConfigError(f"reward {self.name!r}: max_length must be positive, got {self.max_length}")
        self.resolve_correctness()

    @property
    def score_range(self) -> tuple[float, float]:  # type: ignore[override]
        values = (self.min_value_wrong, self.max_value_wrong, self.min_value_correct, self.max_value_correct)
        return (min(values), max(values))

    def steps(self, batch: Batch, explain: bool) -> Steps:
        correct, failed = yield from self.read_correctness(batch)
        ids = batch.completion_ids or [None] * len(batch)
        out: list[Any] = []
        for i, (text, completion_ids, score) in enumerate(zip(batch.texts, ids, correct)):
            if score is None and i in failed:
                score = -math.inf  # the check failed: scored as a wrong answer
            if score is None:
                out.append(RewardResult(None, "correctness unknown") if explain else None)
                continue
            length = measure_length(text, completion_ids, self.unit, self.tokenizer, self.name)
            progress = min(length / self.max_length, 1.0)
            cosine = math.cos(progress * math.pi)
            ok = score >= self.threshold
            low, high = (
                (self.min_value_correct, self.max_value_correct) if ok else (self.max_value_wrong, self.min_value_wrong)
            )
            value = low + 0.5 * (high - low) * (1.0 + cosine)
            reason = f"{'correct' if ok else 'wrong'}, {length} {self.unit}"
            if score == -math.inf:
                reason = f"the correctness check failed: scored as wrong, {length} {self.unit}"
            out.append(RewardResult(value, reason) if explain else value)
        return Scored(out)


@register_reward("soft_overlong", aliases=("soft_overlong_punishment",))
@dataclass
class SoftOverlong(Reward):
    """DAPO's soft overlong punishment: 0 up to ``max_length - cache_length`` tokens, then down to -1 at ``max_length``.

    Beyond ``max_length`` the score stays -1. Counted in tokens
    (``completion_ids``) by default.

    Columns: none (``completion_ids`` from TRL). Range: [-1, 0].

    >>> r = SoftOverlong(max_length=10, cache_length=4)
    >>> r(completions=["", "", "", ""], completion_ids=[[1] * 6, [1] * 8, [1] * 10, [1] * 50])
    [0.0, -0.5, -1.0, -1.0]
    """

    default_name = "soft_overlong"
    score_range = (-1.0, 0.0)

    max_length: int = 1024
    cache_length: int = 256
    unit: Unit = "tokens"
    tokenizer: str | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        check_unit(self.name, self.unit)
        if not 0 < self.cache_length <= self.max_length:
            raise RewardConfigError(
                f"reward {self.name!r}: need 0 < cache_length <= max_length, "
                f"got cache_length={self.cache_length} and max_length={self.max_length}"
            )

    def score(self, completion: str, completion_ids: Any = None) -> RewardResult:
        length = measure_length(completion, completion_ids, self.unit, self.tokenizer, self.name)
        soft_start = self.max_length - self.cache_length
        if length <= soft_start:
            return RewardResult(0.0, f"{length} {self.unit}")
        value = max(-1.0, (soft_start - length) / self.cache_length)
        return RewardResult(value, f"{length} {self.unit}, {length - soft_start} into the soft zone")
