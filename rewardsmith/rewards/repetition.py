"""``repetition``: a penalty for repeated n-grams, and ``reasoning_steps``: credit for explicit steps."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any, Literal

from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.extras import require_extra
from rewardsmith.core.registry import register_reward
from rewardsmith.core.result import RewardResult
from rewardsmith.core.reward import Reward
from rewardsmith.rewards._text import fold_word, has_content, visible_text
from rewardsmith.rewards.segment import chinese_words

__all__ = ["ReasoningSteps", "Repetition"]


@register_reward("repetition", aliases=("repetition_penalty",))
@dataclass
class Repetition(Reward):
    """N-gram repetition penalty: 0 when no n-gram repeats, down to ``max_penalty`` when all do.

    The penalty is ``(1 - distinct n-grams / all n-grams) * max_penalty``
    over words or tokens (``completion_ids``). Words are split on white space
    as the text is seen (invisible characters removed, blank-drawn ones as
    spaces) and compared folded (case, accents, compatibility forms and
    look-alike letters), so that a zero-width suffix or a Cyrillic ``о`` does
    not make a repeated word new. Completions shorter than ``ngram_size`` score 0.
    For text written without spaces, ``language="zh"`` splits words with
    jieba (``pip install 'rewardsmith[text]'``), as open-r1 does; token units
    work for any language.

    Columns: none. Range: [max_penalty, 0].

    >>> r = Repetition(ngram_size=2)
    >>> r(completions=["the cat sat on the mat", "go go go go go", "hi"])
    [0.0, -0.75, 0.0]
    >>> Repetition(ngram_size=2, language="zh")(completions=["这个这个这个这个这个"])
    [-0.75]
    """

    default_name = "repetition"

    ngram_size: int = 3
    max_penalty: float = -1.0
    unit: Literal["words", "tokens"] = "words"
    language: Literal["en", "zh"] = "en"

    @property
    def score_range(self) -> tuple[float, float]:  # type: ignore[override]
        return (self.max_penalty, 0.0)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.ngram_size < 1:
            raise RewardConfigError(f"reward {self.name!r}: ngram_size must be >= 1, got {self.ngram_size}")
        if self.max_penalty > 0:
            raise RewardConfigError(f"reward {self.name!r}: max_penalty must be <= 0, got {self.max_penalty}")
        if self.unit not in ("words", "tokens"):
            raise RewardConfigError(f"reward {self.name!r}: unit must be 'words' or 'tokens', got {self.unit!r}")
        if self.language not in ("en", "zh"):
            raise RewardConfigError(
                f"reward {self.name!r}: language must be 'en' (words between spaces) or 'zh' (jieba's words), got "
                f"{self.language!r}; for other languages written without spaces use unit='tokens'"
            )
        if self.language == "zh" and self.unit == "words":
            require_extra("text", f"reward {self.name!r} with language='zh' (jieba)", ["jieba"])

    def score(self, completion: str, completion_ids: Any = None) -> RewardResult:
        if self.unit == "tokens":
            if completion_ids is None:
                raise RewardConfigError(
                    f"reward {self.name!r} counts token n-grams but got no completion_ids; use unit='words' outside TRL"
                )
            items: list[Any] = list(completion_ids)
        elif self.language == "zh":
            items = chinese_words(visible_text(completion))
        else:
            items = list(map(fold_word, visible_text(completion).split()))
        n = self.ngram_size
        total = len(items) - n + 1
        if total <= 0:
            return RewardResult(0.0, f"shorter than {n} {self.unit}")
        # n-grams of words as strings (words hold no space): a set of strings, which the garbage collector never scans
        grams = zip(*(items[i:] for i in range(n)))
        distinct = len(set(map(" ".join, grams) if self.unit == "words" else grams))
        repeated = 1.0 - distinct / total
        penalty = repeated * self.max_penalty if repeated else 0.0
        return RewardResult(penalty, f"{total - distinct} of {total} {n}-grams repeat")


# Bounded quantifiers: no run of white space is scanned from more than a few starts.
_STEP_MARKER = re.compile(
    r"(?im)^[ \t]{0,20}(?:step[ \t]{0,5}\d{1,9}[ \t]{0,5}[:.)]|\d{1,9}[ \t]{0,5}[.)]\s|[-*•]\s)"
    r"|(?:^[ \t]{0,20}|(?<=[.!?]\s))(?:first|second|third|next|then|finally|lastly)\b,?"
)


@register_reward("reasoning_steps")
@dataclass
class ReasoningSteps(Reward):
    """Credit for explicit reasoning steps ("Step 1:", numbered or bulleted lines, "First,/Then,/Finally,").

    Each marker counts only when at least ``min_step_chars`` visible
    characters (not white space, not invisible) follow it before the next
    marker, so a list of empty "Step N:" lines, or of steps padded with
    zero-width characters, earns nothing. The score is ``min(1, steps / min_steps)``.

    Columns: none. Range: [0, 1].

    >>> r = ReasoningSteps()
    >>> r(completions=["Step 1: add the apples.\\nStep 2: add the pears.\\nStep 3: sum both totals.",
    ...                "First, we add the numbers. Then, we divide by two.", "Step 1:\\nStep 2:\\nStep 3:\\n", "42"])
    [1.0, 0.6666666666666666, 0.0, 0.0]
    """

    default_name = "reasoning_steps"
    score_range = (0.0, 1.0)

    min_steps: int = 3
    min_step_chars: int = 8

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.min_steps < 1:
            raise RewardConfigError(f"reward {self.name!r}: min_steps must be >= 1, got {self.min_steps}")

    def score(self, completion: str) -> RewardResult:
        completion = visible_text(completion)
        steps = 0
        previous = None
        for marker in itertools.chain(_STEP_MARKER.finditer(completion), [None]):
            if previous is not None:
                content = completion[previous.end() : marker.start() if marker else len(completion)]
                if _visible_chars(content, self.min_step_chars) >= self.min_step_chars:
                    steps += 1
                    if steps >= self.min_steps:
                        break
            previous = marker
        return RewardResult(min(1.0, steps / self.min_steps), f"{steps} step(s) with content")


def _visible_chars(text: str, enough: int) -> int:
    """How many characters of ``text`` show something (counting stops at ``enough``)."""
    count = 0
    for ch in text:
        if has_content(ch):
            count += 1
            if count >= enough:
                break
    return count
