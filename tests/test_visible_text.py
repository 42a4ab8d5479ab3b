"""What a reward reads is what a person sees: every registered reward scores real rows the same with and without
invisible characters inserted between and inside words.

The rewards come from the registry (as in ``tests/test_adversarial.py``: the package's own, aliases once), so a
reward added later is checked without touching this file; one with no row to score fails here saying what to add.
Rewards that need a network endpoint or a model are skipped with the registry's stated reason.

The characters go into the prose a person reads. What a program parses (a fenced code block, a ``<tool_call>``
object) is read as the interpreter or the runtime reads it: a zero-width character in an identifier is a syntax
error there too, so those spans are left as written (``tests/test_adversarial.py`` checks that invisible
characters never raise any score).
"""

from __future__ import annotations

import itertools
import json
import random
import re
from pathlib import Path

import pytest

from rewardsmith import get_reward
from rewardsmith.check.adversarial import fuzz_targets
from rewardsmith.core.registry import registered_target
from tests.ifeval_responses import random_response

pytestmark = pytest.mark.xdist_group("visible_text")

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"

#: Characters that show nothing, between or inside a word: zero-width space, joiners, word joiner, byte-order
#: mark, soft hyphen, invisible operators, the Mongolian vowel separator, tag and variation characters, the
#: combining grapheme joiner, Khmer inherent vowels, a reserved default-ignorable, controls.
MARKS = (
    "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u2062", "\u2063", "\u180e", "\U000e0041",
    "\ufe0f", "\U000e0100", "\u034f", "\u17b4", "\u2065", "\x00", "\x7f",
)  # fmt: skip

#: Spans read by a program, not a person (left as written).
_MACHINE_READ = re.compile(r"```.*?(?:```|\Z)|<tool_call>.*?(?:</tool_call>|\Z)", re.DOTALL)


def _in_prose(text: str, change) -> str:
    out, last = [], 0
    for match in _MACHINE_READ.finditer(text):
        out += [change(text[last : match.start()]), match.group(0)]
        last = match.end()
    return "".join([*out, change(text[last:])])


def inside_words(text: str, mark: str) -> str:
    """``mark`` after the first character of every word of two or more characters."""
    return _in_prose(text, lambda part: re.sub(r"(\S)(?=\S)", lambda m: m.group(1) + mark, part, count=0))


def between_words(text: str, mark: str) -> str:
    """``mark`` after every word."""
    return _in_prose(text, lambda part: re.sub(r"(\S+)", lambda m: m.group(1) + mark, part))


# -- real rows -------------------------------------------------------------------------------------------------


def _jsonl(name: str, n: int) -> list[dict]:
    with open(SHARED / name, encoding="utf-8") as f:
        return [json.loads(line) for line in itertools.islice(f, n)]


def _gsm8k_rows() -> list[dict]:
    rows = []
    for i, row in enumerate(_jsonl("gsm8k_test.jsonl", 3)):
        work, number = row["answer"].split("####")
        work = re.sub(r"<<[^>]*>>", "", work).strip()
        shown = number.strip() if i != 1 else str(int(number.strip().replace(",", "")) + 1)  # one wrong answer
        completion = f"<think>\n{work}\n</think>\n<answer>{shown}</answer>"
        rows.append({"prompt": row["question"], "completion": completion, "answer": row["answer"], "correct": i != 1})
    return rows


def _math_rows() -> list[dict]:
    rows = []
    for r in _jsonl("math500_test.jsonl", 3):
        completion = f"<think>{r['problem']}</think>\n{r['solution']}"
        rows.append({"prompt": r["problem"], "completion": completion, "solution": r["answer"]})
    return rows


def _mbpp_rows() -> list[dict]:
    rows = []
    for r in _jsonl("mbpp.jsonl", 3):
        code = r["code"].replace("\r\n", "\n")
        completion = f"Here is a function that solves the task.\n```python\n{code}\n```\nIt passes the tests."
        rows.append({"prompt": r["text"], "completion": completion, "tests": r["test_list"]})
    return rows


def _ifeval_rows() -> list[dict]:
    rng = random.Random(3)
    rows = []
    for r in _jsonl("ifeval_input_data.jsonl", 12):
        columns = {"instruction_id_list": r["instruction_id_list"], "kwargs": r["kwargs"]}
        rows.append({"prompt": r["prompt"], "completion": random_response(rng, r), **columns})
    return rows


def _other_rows() -> list[dict]:
    schema = {"type": "object", "properties": {"answer": {"type": "number"}}, "required": ["answer"]}
    call = '<tool_call>{"name": "calculator", "arguments": {"expression": "9 * 2"}}</tool_call>'
    return [
        {
            "prompt": "Using the numbers [4, 8, 2, 1], create an equation that equals 15.",
            "completion": "<think>eight plus four is twelve, plus two and one is fifteen</think>\n"
            "<answer>8 + 4 + 2 + 1</answer>",
            "nums": [4, 8, 2, 1],
            "target": 15,
        },
        {
            "prompt": "How many clips did Natalia sell? Answer in JSON.",
            "completion": 'She sold nine clips a day for two days.\n```json\n{"answer": 18}\n```',
            "schema": schema,
        },
        {
            "prompt": "What is 9 times 2? Use the calculator.",
            "completion": f"I will ask the calculator for the product.\n{call}",
            "tool_calls": [{"name": "calculator", "arguments": {"expression": "9 * 2"}}],
            "tools": [
                {
                    "name": "calculator",
                    "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}},
                }
            ],
        },
        {
            "prompt": "Quelle est la capitale de la France ?",
            "completion": "La capitale de la France est Paris, une ville connue pour ses musées et ses cafés.",
            "language": "fr",
        },
        {
            "prompt": "What is the capital of France?",
            "completion": "La capitale de la France est Paris. The capital of France is Paris, a city of museums.",
        },
    ]


ROWS = _gsm8k_rows() + _math_rows() + _mbpp_rows() + _ifeval_rows() + _other_rows()

#: Settings for rewards that cannot be built with their defaults, and for lengths measured in text.
SETTINGS = {
    "length": {"target": 40, "unit": "words"},
    "soft_overlong": {"max_length": 60, "cache_length": 30, "unit": "words"},
    "cosine_length": {"max_length": 80, "unit": "chars"},
    "group_length": {"unit": "chars", "group_size": 1},
    "repetition": {"ngram_size": 2},
}

#: Rows with the columns a reward reads (a row may have more); group_length compares the rows of one prompt.
_COLUMNS_READ = ("answer", "solution", "correct", "tests", "instruction_id_list", "kwargs")
_COLUMNS_READ += ("nums", "target", "schema", "tool_calls", "tools", "language")

#: Rewards that read no text at all.
NO_TEXT = {"environment_reward": "scores the rollout's environment (TRL's environments), not the text"}


def _builtin(name: str) -> bool:
    return getattr(registered_target(name), "__module__", "").startswith("rewardsmith.")


TARGETS = [t for t in fuzz_targets() if t.name != "judge verdict parser" and _builtin(t.name)]


def _rows_for(reward) -> list[dict]:
    required = set(reward.required_columns)
    return [row for row in ROWS if required <= set(row)]


def _columns(reward, rows: list[dict], copies: int) -> dict[str, list]:
    wanted = set(reward.required_columns) | set(getattr(reward, "optional_columns", []))
    names = [c for c in _COLUMNS_READ if c in wanted and all(c in row for row in rows)]
    return {c: [row[c] for row in rows for _ in range(copies)] for c in names}


@pytest.mark.parametrize("target", TARGETS, ids=[t.name for t in TARGETS])
def test_scores_are_the_same_with_invisible_characters_between_and_inside_words(target):
    if target.call is None:
        pytest.skip(target.skip)
    if target.name in NO_TEXT:
        pytest.skip(NO_TEXT[target.name])
    if target.reward is not None:
        target.reward.close()
    reward = get_reward(target.name, **SETTINGS.get(target.name, {}))
    rows = _rows_for(reward)
    assert rows, f"no row in {__name__}.ROWS has the columns {target.name!r} requires: add one"
    marks = itertools.cycle(MARKS)
    texts = []
    for row in rows:
        plain = row["completion"]
        texts += [plain, inside_words(plain, next(marks)), between_words(plain, next(marks))]
        texts.append(between_words(inside_words(plain, next(marks)), next(marks)))
    copies = len(texts) // len(rows)
    try:
        scores = reward(
            prompts=[row["prompt"] for row in rows for _ in range(copies)],
            completions=texts,
            completion_ids=[list(range(40))] * len(texts),
            **_columns(reward, rows, copies),
        )
    finally:
        reward.close()
    differ = []
    for i in range(0, len(texts), copies):
        plain, *marked = scores[i : i + copies]
        for text, score in zip(texts[i + 1 : i + copies], marked):
            if (score is None) != (plain is None) or (plain is not None and abs(score - plain) > 1e-9):
                differ.append(f"{texts[i][:60]!r}: {plain}, with invisible characters {score} ({text[:80]!r})")
    assert not differ, f"{target.name}: invisible characters changed the score\n" + "\n".join(differ)
    assert any(s is not None for s in scores), f"{target.name} scored none of its rows"


def test_every_registered_reward_is_checked_or_skipped_with_a_reason():
    names = {t.name for t in TARGETS}
    assert {"ifeval", "repetition", "language_consistency", "code_tests", "json_schema"} <= names
    assert all(t.call is not None or len(t.skip or "") > 20 for t in TARGETS)


def test_language_is_judged_on_the_whole_completion_with_bounded_work():
    r = get_reward("language_consistency")
    french = "Le chat est assis sur le tapis et regarde la pluie tomber doucement sur la ville. " * 120
    english = "The quick brown fox jumps over the lazy dog while the sun sets behind the hills. " * 2300
    scores = r(completions=[french + english, french, english + french, french[:9000]], language=["fr"] * 4)
    assert scores[0] < 0.2 and scores[1] == 1.0 and scores[2] < 0.2 and scores[3] == 1.0
    huge = r.explain(completions=[french * 60 + english], language=["fr"])[0]  # 800 KB: at most 64 windows
    detected = int(huge.reason.rpartition("from ")[2].split()[0])
    assert 16 <= detected <= 64 and huge.score == pytest.approx(len(french * 60) / len(french * 60 + english), abs=0.01)


def test_repetition_is_not_lowered_by_marks_inside_words():
    rep = get_reward("repetition")
    plain = " ".join(["the cat sat on the mat"] * 30)
    for mark in ("\u200b", "\u17b4", "\u2065", "\ufff0", "\U000e0080"):
        words = [w[0] + mark + w[1:] if i % 4 == 0 else w for i, w in enumerate(plain.split())]
        assert rep(completions=[" ".join(words)]) == rep(completions=[plain]) == [pytest.approx(-0.9662921)]
