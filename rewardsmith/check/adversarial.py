"""Adversarial texts and time-growth measurement, for checking that a reward runs in linear time.

Under RL the policy searches for whatever scores, so every completion is
adversarial input. A reward whose time grows faster than its input (a
backtracking regex over a run of newlines, a search for a closing tag repeated
after every unclosed opening one) stalls a training step on one degenerate
sample. This module generates the hostile families such samples come from
and measures how a reward's time grows with their size:

* :data:`FAMILIES`: runs of one character, repeated (unclosed) tags and
  markers, deep nesting, and random mixes, each at any size;
* :func:`measure_growth`: the CPU time of one call at 10 KB, 100 KB and
  1 MB (best of repeats, :func:`cpu_seconds`), giving up on a size (and
  extrapolating) when the growth seen so far predicts more than a budget;
* :func:`fuzz_targets`: every registered reward (built with its defaults, or
  the settings in :data:`FUZZ_SETTINGS`) and the judge verdict parser, each
  as a function of one completion text; rewards that need a network endpoint
  or a model are listed with the reason they are skipped;
* :data:`SAMPLE_VALUES`: a value for each dataset column a reward may
  require, so that a reward is called with a row like a real one.

The rule the fuzz test enforces (``tests/test_adversarial.py``): on every
family, the CPU time fitted over all sizes grows at most 15x per 10x size,
and 1 MB takes at most 3 CPU seconds. CPU time, not wall time: the rule
judges the algorithm, not how busy the machine is (a process waiting for a
core uses none), and a verdict that breaks the rule is measured once more
before it stands.

>>> [f.name for f in FAMILIES][:3]
['run:\\\\n', 'run:space', 'run:a']
>>> len(family("repeat:<think>").text(1000))
1000
>>> growth = measure_growth(len, family("run:a"), sizes=(1000, 10_000))
>>> growth.problems()
[]
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from rewardsmith.check.growth import MB, Growth, cpu_seconds, measure_growth
from rewardsmith.core.errors import RewardConfigError, RewardsmithError

__all__ = [
    "FAMILIES",
    "FUZZ_SETTINGS",
    "SAMPLE_VALUES",
    "SKIPPED",
    "Family",
    "FuzzTarget",
    "Growth",
    "MissingSampleValue",
    "cpu_seconds",
    "family",
    "fuzz_targets",
    "measure_growth",
    "sample_columns",
]

KB = 1_000
SIZES = (10 * KB, 100 * KB, MB)


@dataclass(frozen=True)
class Family:
    """A family of adversarial texts: ``text(n)`` is its member of exactly ``n`` characters."""

    name: str
    build: Callable[[int], str] = field(repr=False, compare=False)

    def text(self, n: int) -> str:
        """The member of ``n`` characters (cached: the same text for every reward)."""
        return _text_of(self, n)


@lru_cache(maxsize=16)
def _text_of(fam: Family, n: int) -> str:
    text = fam.build(n)
    return (text + " " * n)[:n] if len(text) < n else text[:n]


def _run(unit: str) -> Callable[[int], str]:
    return lambda n: unit * (n // len(unit) + 1)


def _nested(opening: str, middle: str, closing: str) -> Callable[[int], str]:
    def build(n: int) -> str:
        k = max(1, (n - len(middle)) // (len(opening) + len(closing)))
        return opening * k + middle + closing * k

    return build


def _random(alphabet: Sequence[str], seed: int) -> Callable[[int], str]:
    def build(n: int) -> str:
        rng = random.Random(seed)
        out: list[str] = []
        size = 0
        while size < n:
            piece = rng.choice(alphabet)
            out.append(piece)
            size += len(piece)
        return "".join(out)

    return build


def _label(unit: str) -> str:
    return {" ": "space", "\t": "\\t", "\n": "\\n", "\r\n": "\\r\\n"}.get(unit, unit.encode("unicode_escape").decode())


#: Single characters repeated: what a degenerate sample looks like.
_RUNS = (
    "\n", " ", "a", "9", "{", "}", "(", "[", "\\", "$", "#", "`", "<", ">", ".", "-", "*", "_", "\t", ",", "/",
    "^", ":", '"', "=", "|", "'", "\u200b", "\u3164", "\u0301",
)  # fmt: skip

#: Tags, markers and fragments repeated, mostly unclosed: each one a place where a pattern may start and fail late.
_REPEATS = (
    "<think>", "</think>", "<answer>", "</answer>", "<tool_call>", "</tool_call>", "<code>", "```", "```python\n",
    "```json\n", "\\boxed{", "\\boxed ", "\\fbox{", "\\frac{", "\\text{", "\\overline{", "\\left(", "\\(", "$$",
    "####", "#### 1\n", "A:\n", "\nA", "\n A :", "Answer:", "answer is ", "The answer is 1 or ", "Final Answer: ",
    "Step 1:", "1. ", "- ", "First, ", "Then ", "Score:", "score: 1", "**Score", "{\"score\": ", "{\"a\": ",
    "[1, ", "9^{", "1/", "1.", "1,", "1,000,", "1 ", "-1 ", "0.", "<prompt>", "< response", "<think>x</think>",
    "<answer>1</answer>", "\\boxed{1}", "<tool_call>{}</tool_call>", "```\nx\n```\n", "\n \n", " \n", "\r\n",
    "\n\t", "a\u200b", "the ", "go go ", "import os\n", "__class__.", "def f(:\n", "x = (",
)  # fmt: skip

#: Deep nesting: an opening repeated, a middle, the closing repeated as often.
_NESTED = (
    ("(", "1", ")"), ("{", "1", "}"), ("[", "1", "]"), ("\\boxed{", "1", "}"), ("<think>", "x", "</think>"),
    ("<answer>", "1", "</answer>"), ('{"a":', "1", "}"), ("\\frac{1}{", "2", "}"), ("9^{", "9", "}"),
    ("<code>", "x", "</code>"), ("\\left(", "1", "\\right)"), ("((", "1", "))"), ("[[", "1", "]]"),
)  # fmt: skip

_TOKENS = (
    "<think>", "</think>", "<answer>", "</answer>", "<tool_call>", "</tool_call>", "\\boxed{", "}", "{", "####",
    "```", "\n", " ", "1", "18", ",", ".", "/", "Answer:", "Step 1:", "Score: 7", '{"score": 7}', "$", "\\frac",
    "(", ")", "=", "\u200b",
)  # fmt: skip

#: Every family, in a fixed order.
FAMILIES: tuple[Family, ...] = (
    *(Family(f"run:{_label(u)}", _run(u)) for u in _RUNS),
    *(Family(f"repeat:{_label(u)}", _run(u)) for u in _REPEATS),
    *(Family(f"nested:{_label(o)}", _nested(o, m, c)) for o, m, c in _NESTED),
    Family("random:printable", _random([chr(c) for c in range(32, 127)] + ["\n"], 1)),
    Family("random:tokens", _random(_TOKENS, 2)),
    Family("random:unicode", _random([chr(c) for c in range(0x20, 0x3000, 7)] + ["\u200b", "\u0301", "\n"], 3)),
)

_BY_NAME = {f.name: f for f in FAMILIES}


def family(name: str) -> Family:
    """The family called ``name`` (see :data:`FAMILIES`)."""
    return _BY_NAME[name]


# -- what is fuzzed ------------------------------------------------------------------------------------------

PROMPT = "Natalia sold 9 clips a day for 2 days. How many clips did she sell? Think, then answer."

#: A sample value for every dataset column a reward may require, keyed by column name. A reward that requires a
#: column missing here cannot be fuzzed: add a realistic value for it.
SAMPLE_VALUES: dict[str, Any] = {
    "answer": "18",
    "solution": "She sold 9 * 2 = 18 clips.\n\\boxed{18}",
    "reference": "18",
    "ground_truth": "18",
    "correct": True,
    "task": "math",
    "question": PROMPT,
    "nums": [4, 8, 2, 1],
    "target": 15,
    "schema": {"type": "object", "properties": {"answer": {"type": "number"}}, "required": ["answer"]},
    "tool_calls": [{"name": "calculator", "arguments": {"expression": "9 * 2"}}],
    "tools": [
        {"name": "calculator", "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}}}
    ],
    # code execution (MBPP, HumanEval, APPS)
    "tests": ["assert add(1, 2) == 3", "assert add(-1, 1) == 0"],
    "test_list": ["assert add(1, 2) == 3", "assert add(-1, 1) == 0"],
    "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n",
    "entry_point": "add",
    "input_output": '{"inputs": ["1 2\\n"], "outputs": ["3\\n"]}',
    # instruction following (IFEval)
    "instruction_id_list": ["punctuation:no_comma", "length_constraints:number_words"],
    "kwargs": [{}, {"relation": "at least", "num_words": 5}],
    "language": "en",
}

#: Settings for rewards that cannot be built with their defaults alone.
FUZZ_SETTINGS: dict[str, dict[str, Any]] = {
    "length": {"target": 200, "unit": "chars"},
}

#: Registered rewards that are not fuzzed, and why. Judges (a chat endpoint) and local-model rewards are
#: recognised by their class; this lists the others.
SKIPPED: dict[str, str] = {
    "remote": "scores on a rewardsmith serve server (a network endpoint); the served rewards are fuzzed themselves",
}


class MissingSampleValue(RewardsmithError, KeyError):
    """A reward requires a column that :data:`SAMPLE_VALUES` has no value for."""

    def __str__(self) -> str:
        return str(self.args[0])


def sample_columns(reward: Any) -> dict[str, list[Any]]:
    """One row of columns for ``reward``: a sample value for each column it requires, and for each optional one
    that has a sample value (arguments a row carries with its required columns, like IFEval's ``kwargs``).

    >>> from rewardsmith import get_reward
    >>> sample_columns(get_reward("countdown"))
    {'nums': [[4, 8, 2, 1]], 'target': [15]}
    """
    columns: dict[str, list[Any]] = {}
    for name in reward.required_columns:
        if name not in SAMPLE_VALUES:
            raise MissingSampleValue(
                f"reward {reward.name!r} requires the column {name!r}, which has no sample value: add a realistic "
                f"one to SAMPLE_VALUES in rewardsmith/check/adversarial.py"
            )
        columns[name] = [SAMPLE_VALUES[name]]
    for name in getattr(reward, "optional_columns", []):
        if name in SAMPLE_VALUES and name not in columns:
            columns[name] = [SAMPLE_VALUES[name]]
    return columns


@dataclass
class FuzzTarget:
    """One thing to fuzz: ``call(text)`` scores one completion; ``skip`` says why it is not fuzzed (else ``None``)."""

    name: str
    call: Callable[[str], Any] | None
    skip: str | None = None
    reward: Any = None


def _skip_reason(name: str, target: Any) -> str | None:
    if name in SKIPPED:
        return SKIPPED[name]
    from rewardsmith.judges.base import ChatJudge
    from rewardsmith.judges.local_model import LocalModelReward

    cls = target if isinstance(target, type) else type(target)
    if issubclass(cls, ChatJudge):
        return "asks a chat endpoint (network); the verdict parser it reads the answers with is fuzzed"
    if issubclass(cls, LocalModelReward):
        return "runs a model from a folder or the Hub; its cost is the model's, not the text's"
    return None


def _reward_call(reward: Any) -> Callable[[str], Any]:
    columns = sample_columns(reward)

    def call(text: str) -> Any:
        ids = list(range(len(text) // 4 + 1))
        return reward(prompts=[PROMPT], completions=[text], completion_ids=[ids], **columns)

    return call


def _verdict_call(text: str) -> Any:
    from rewardsmith.judges.verdict import parse_verdict

    return parse_verdict(text)


def fuzz_targets(names: Iterable[str] | None = None) -> list[FuzzTarget]:
    """Every registered reward (one per registered object: aliases are skipped) and the judge verdict parser.

    A reward that cannot be built with its defaults and :data:`FUZZ_SETTINGS`,
    or that requires a column without a sample value, raises a clear error:
    the fuzz test must not silently leave it out.

    >>> [t.name for t in fuzz_targets(["think_format"])]
    ['think_format']
    """
    from rewardsmith.core.registry import get_reward, list_rewards, registered_target

    described = list_rewards()
    chosen = [n for n in described if not described[n].startswith("alias of")] if names is None else list(names)
    out: list[FuzzTarget] = []
    for name in chosen:
        target = registered_target(name)
        reason = _skip_reason(name, target)
        if reason is not None:
            out.append(FuzzTarget(name, None, reason))
            continue
        try:
            reward = get_reward(name, **FUZZ_SETTINGS.get(name, {}))
        except RewardConfigError as exc:
            raise RewardConfigError(
                f"the reward {name!r} cannot be built for fuzzing ({exc}); add the settings it needs to FUZZ_SETTINGS "
                "in rewardsmith/check/adversarial.py, or a reason to SKIPPED if it needs a network endpoint or a model"
            ) from exc
        out.append(FuzzTarget(name, _reward_call(reward), reward=reward))
    if names is None:
        out.append(FuzzTarget("judge verdict parser", _verdict_call))
    return out
