"""``gsm8k_accuracy``: the numeric final answer, compared exactly.

Only the text after the reasoning counts (after the last ``</think>``, if
any). Where the answer is taken from, in order:

1. structural markers: ``#### N``, ``\\boxed{N}``, ``<answer>N</answer>``.
   Every occurrence counts; if they state different numbers the completion
   hedged and scores 0. A marked answer that holds no single number scores 0
   (no falling back to numbers elsewhere in the text);
2. the last phrase marker: "The answer is N", "Answer: N", "A: N", "Final
   Answer: The final answer is N", ``# Answer`` on its own line,
   ``**Final answer:** N`` (the number its sentence states; a sentence naming
   several different numbers, like "18 or 20" or "1, 2, 3", is a hedge and
   scores 0, as it does in a marker);
3. with ``fallback_last_number`` (default on), the last number in the text,
   unless it ends a list (``3, 7, 18``, or one item per line).

A revision ("wait, that's wrong") between two stated answers leaves only the
answers after it (see ``_answers``). The markers' tags are settings
(``answer_tag``, ``think_tag``; see ``_containers``).

Numbers are compared exactly as fractions: ``1,000``, ``$1000``,
``1000.00`` and ``1000 dollars`` are all 1000, ``1/2`` equals ``0.5``, and
120006 is not 120000. A non-integer reference also accepts the prediction
rounded to the reference's decimals (``3.333`` for ``3.33``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import islice

from rewardsmith.core.engine import OnError
from rewardsmith.core.injection import Column, Input
from rewardsmith.core.registry import register_reward
from rewardsmith.core.result import RewardResult
from rewardsmith.core.reward import Reward
from rewardsmith.rewards._answers import (
    ANSWER_PHRASE,
    PHRASE_WORDS,
    answer_statements,
    before_end_of_turn,
    final_part,
    stated_value,
)
from rewardsmith.rewards._closing import OFFERS, closing_sentence, closing_statement
from rewardsmith.rewards._containers import (
    Container,
    blocks,
    check_answer_settings,
    container,
    final_part_after,
    reopened,
)
from rewardsmith.rewards._latex import is_placeholder
from rewardsmith.rewards._rejections import rejected_values, without_negation, without_working
from rewardsmith.rewards._text import (
    MAX_ANSWERS,
    boxed_contents,
    format_number,
    iter_numbers,
    number_at,
    number_spans,
    parse_number,
    visible_text,
)
from rewardsmith.rewards.reasoning import after_reasoning

__all__ = ["GSM8KAccuracy", "extract_numeric_answer", "parse_reference_number"]

# Every quantifier that can meet a failure is bounded, so that no run of white space is scanned from many
# starts (``(?:^|\n)\s*A`` over a run of newlines is quadratic).
# ``#### 18`` states an answer; ``#### Total Area`` (a word after the hashes) is a Markdown heading.
_HASHES = re.compile(r"(?<!#)####(?!#)[ \t]{0,20}(?![ \t]|[A-Za-z]{2})([^\n]*)")
_PHRASE_WORDS = (*PHRASE_WORDS, ":")
_PHRASES = re.compile(rf"{ANSWER_PHRASE.pattern}|(?:^|(?<=\n))[ \t]{{0,20}}A[ \t]{{0,20}}:", re.IGNORECASE)


def parse_reference_number(gold: object) -> Fraction | None:
    """The number in a reference answer: a bare number, or a worked solution ending in ``#### N``.

    >>> parse_reference_number("She makes 9 * 2 = $18.\\n#### 18")
    Fraction(18, 1)
    >>> parse_reference_number(" 1,000 ")
    Fraction(1000, 1)
    >>> parse_reference_number("no number") is None
    True
    """
    if gold is None:
        return None
    if isinstance(gold, (int, Fraction)) and not isinstance(gold, bool):
        return Fraction(gold)
    if isinstance(gold, float):
        return Fraction(repr(gold)) if gold == gold and abs(gold) != float("inf") else None
    text = str(gold)
    hashes = _HASHES.findall(text)
    if hashes:
        return parse_number(hashes[-1])
    return parse_number(text)


def extract_numeric_answer(
    completion: str,
    fallback_last_number: bool = True,
    answer_tag: str | Sequence[str] | Container = "answer",
    think_tag: str | Sequence[str] | Container | None = "think",
) -> tuple[Fraction | None, str]:
    """The final numeric answer of a completion and where it was found.

    >>> extract_numeric_answer("<think>9*2</think><answer>$18</answer>")
    (Fraction(18, 1), '<answer>')
    >>> extract_numeric_answer(r"\\boxed{18} or maybe \\boxed{19}")
    (None, 'hedged: 18, 19')
    >>> extract_numeric_answer("so she makes 18 dollars a day")
    (Fraction(18, 1), 'last number')
    >>> extract_numeric_answer("<think>maybe #### 20</think> Answer: 18")
    (Fraction(18, 1), 'answer phrase')
    >>> extract_numeric_answer("The answer is 20 or 18.")
    (None, 'hedged: the answer phrase states several numbers')
    """
    answer_box = answer_tag if isinstance(answer_tag, Container) else container(answer_tag, "answer_tag")
    completion = before_end_of_turn(visible_text(completion))
    if think_tag is not None:
        completion = final_part_after(
            completion, think_tag if isinstance(think_tag, Container) else container(think_tag)
        )
    markers = ("####", "\\boxed", answer_box.opening)
    completion = reopened(completion, final_part(completion, markers, _PHRASES, _PHRASE_WORDS), answer_box)
    marked, problem = _marked_answers(completion, answer_box)
    if problem:
        return None, problem
    rejected = {v for v in map(parse_number, rejected_values(completion)) if v is not None}
    if marked:
        return _one_marked_value(marked, rejected)
    stated = _phrase_answer(completion, rejected)
    if stated is not None:
        return stated
    if fallback_last_number:
        return _last_number_answer(completion, rejected)
    return None, "no answer found"


def _marked_answers(completion: str, answer_box: Container) -> tuple[list[tuple[str, str]], str]:
    """Each answer a marker states (``####``, a box, an answer block) with its marker, or why none can be read."""
    marked: list[tuple[str, str]] = [
        ("####", m.group(1)) for m in islice(_HASHES.finditer(completion), MAX_ANSWERS + 1)
    ]
    marked += [("\\boxed", b) for b in boxed_contents(completion, limit=MAX_ANSWERS) if not is_placeholder(b)]
    found = blocks(completion, answer_box)
    if found is None:
        return [], f"unbalanced {answer_box.opening} {answer_box.closing} markers"
    marked += [(answer_box.opening, b) for b in found[: MAX_ANSWERS + 1]]
    if len(marked) > MAX_ANSWERS:
        return [], f"more than {MAX_ANSWERS} stated answers"
    return marked, ""


def _one_marked_value(marked: list[tuple[str, str]], rejected: set[Fraction]) -> tuple[Fraction | None, str]:
    """The one number the marked answers agree on, once the values the text rejects are set aside."""
    values = []
    for marker, content in marked:
        value = parse_number(without_working(without_negation(content)))
        if value is None:
            return None, f"no single number in the {marker} answer"
        values.append(value)
    distinct = sorted(set(values) - rejected)
    if not distinct:
        return None, "every stated answer is rejected in the text"
    if len(distinct) > 1:
        return None, "hedged: " + ", ".join(format_number(v) for v in distinct)
    return distinct[0], marked[0][0]


def _phrase_answer(completion: str, rejected: set[Fraction]) -> tuple[Fraction | None, str] | None:
    """The verdict of the answer phrases and the closing sentence, or ``None`` when they decide nothing."""
    statements = answer_statements(completion, _PHRASES, words=_PHRASE_WORDS)
    if statements is None:
        return None, f"more than {MAX_ANSWERS} answer statements"
    # every statement of one number is an answer; a statement of several numbers is hedging if it is the last
    statements = [stated_value(said) for said in statements]
    values = [parse_number(without_working(without_negation(said))) for said in statements]
    stated = {value for value in values if value is not None} - rejected
    if statements and values[-1] is None and any(True for _ in iter_numbers(statements[-1])):
        return None, "hedged: the answer phrase states several numbers"
    if len(stated) > 1:
        return None, "hedged: the answer phrases state " + ", ".join(format_number(v) for v in sorted(stated))
    if stated:
        return stated.pop(), "answer phrase"
    sentence = closing_sentence(completion)
    if sentence and OFFERS.search(sentence):  # "So it is 18, possibly 20.": read as math_accuracy reads it
        offered = {v for v in map(parse_number, closing_statement(completion) or []) if v is not None}
        if len(offered) > 1:
            return None, "hedged: the closing sentence offers " + ", ".join(format_number(v) for v in sorted(offered))
    return None


def _last_number_answer(completion: str, rejected: set[Fraction]) -> tuple[Fraction | None, str]:
    """The last number of the text, unless the text rejects it ("20 apples, not 18": the other value)."""
    last, where = _last_number(_PHANTOMS.sub(" ", completion.replace("{,}", ",")))
    if last is not None and last in rejected:
        kept = {v for v in map(parse_number, closing_statement(completion) or []) if v is not None} - rejected
        return (kept.pop(), "closing statement") if len(kept) == 1 else (None, "the last number is rejected")
    return last, where


_PHANTOMS = re.compile(r"\\[hv]?phantom\s{0,5}\{[^{}]{0,200}\}")
# What may stand between two numbers of a list: a comma, semicolon, slash or bar, "or"/"and", or nothing but space.
_LIST_GAP = re.compile(
    r"\$?[ \t]{0,8}(?:[,;/|(][ \t]{0,8})?(?:(?:or|and|to)[ \t]{1,8})?(?:(?:perhaps|possibly|maybe)[ \t]{1,8})?\$?",
    re.IGNORECASE,
)
# A line that is one item of a list: a bullet, number or letter, a short label with "=" or ":", or a table row, then
# one number (a unit may follow).
_ITEM_PREFIX = re.compile(
    r"[ \t]{0,20}(?:[-*+\u2022][ \t]{1,8}|\d{1,3}[.)][ \t]{1,8}|\(?[A-Za-z]\)[ \t]{1,8})?"
    r"(?:([^\d=:\n|]{1,40})[=:][ \t]{0,8})?"
)
_ITEM_REST = re.compile(r"\$?[ \t]?[-\u2212\u2013]?[\d.,/]{1,30}[ \t]{0,4}[A-Za-z%]{0,12}[ \t]{0,4}[.,;]?[ \t]{0,8}")
_TOTAL = re.compile(r"total|sum|answer|result|altogether|in all|final|overall", re.IGNORECASE)


def _list_item(line: str) -> tuple[bool, bool]:
    """Whether a line is one item of a list (``- 3``, ``2. 5``, ``a = 3``, ``| b | 3 |``), and whether it is a total."""
    if line.lstrip().startswith("|"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        line = cells[-1] if cells else ""
    prefix = _ITEM_PREFIX.match(line)
    rest = line[prefix.end() :] if prefix else line
    label = prefix.group(1) if prefix else None
    return _ITEM_REST.fullmatch(rest) is not None, bool(label and _TOTAL.search(label))


def _ends_line_list(text: str, at: int) -> bool:
    """Whether the number at ``at`` is the last item of a list written one item per line."""
    line_start = text.rfind("\n", 0, at) + 1
    line_end = text.find("\n", at)
    item, total = _list_item(text[line_start : line_end if line_end != -1 else len(text)])
    if not item or total:
        return False
    before = text[max(0, line_start - 400) : max(0, line_start - 1)].rstrip().rsplit("\n", 1)[-1]
    return bool(before.strip()) and _list_item(before)[0]


def _last_number(text: str) -> tuple[Fraction | None, str]:
    r"""The last number, unless it ends a list of different numbers (``3, 7, 18``; ``18 or 20``): a list is no answer.

    A list written one item per line (bullets, numbers, ``a = 3`` lines, a table) is a list too.

    >>> _last_number("so 9 * 2 = 18."), _last_number("Possible answers: 3, 7, 18")
    ((Fraction(18, 1), 'last number'), (None, 'hedged: the last number ends a list of numbers'))
    >>> _last_number("Options:\n- 3\n- 18"), _last_number("a = 3\nb = 5\ntotal = 8")
    ((None, 'hedged: the last number ends a list of numbers'), (Fraction(8, 1), 'last number'))
    """
    last, last_start, last_end, listed = None, -1, -1, False
    for key, start, end in number_spans(text):  # spellings only: values are computed for the last number alone
        in_list = last is not None and _LIST_GAP.fullmatch(text, last_end, start) is not None
        listed = in_list and (listed or key != last)
        last, last_start, last_end = key, start, end
    if last is None:
        return None, "no answer found"
    if listed or _ends_line_list(text, last_start):
        return None, "hedged: the last number ends a list of numbers"
    value = number_at(text, last_start)
    return (None, "no answer found") if value is None else (value, "last number")


def _decimals(value: Fraction) -> int | None:
    """Digits after the point of a finite decimal (``None`` if it has none that are finite)."""
    den = value.denominator
    for places in range(0, 19):
        if (10**places) % den == 0:
            return places
    return None


def numbers_match(predicted: Fraction, gold: Fraction) -> bool:
    """Exact equality; a non-integer gold also accepts the prediction rounded to its decimals.

    >>> numbers_match(Fraction(120006), Fraction(120000))
    False
    >>> numbers_match(Fraction("3.333"), Fraction("3.33")), numbers_match(Fraction("3.3"), Fraction("3.33"))
    (True, False)
    """
    if predicted == gold:
        return True
    if gold.denominator == 1:
        return False
    places = _decimals(gold)
    if places is None or places == 0:
        return False
    pred_places = _decimals(predicted)
    if pred_places is not None and pred_places <= places:
        return False
    return round(predicted, places) == gold


@register_reward("gsm8k_accuracy")
@dataclass
class GSM8KAccuracy(Reward):
    """Numeric final answer equals the reference exactly (GSM8K and other number-answer tasks).

    The reference comes from ``answer_column`` (``answer`` by default): a bare
    number or a full solution ending in ``#### N``. Returns ``None`` when the
    reference has no number (the row is not scorable), 1.0 for a match, else 0.0.
    With ``reasoning_delimiters`` (e.g. ``["</think>"]``) the answer is looked
    for only after the reasoning, and a completion whose reasoning never ends
    scores 0.

    Columns: ``answer`` (configurable). Range: {0, 1} or None.

    >>> acc = GSM8KAccuracy()
    >>> acc(completions=["... so she makes $18 every day.", "#### 18.00", "#### 180", r"\\boxed{18} \\boxed{17}"],
    ...     answer=["18", "18", "18", "18"])
    [1.0, 1.0, 0.0, 0.0]
    >>> acc.check("<answer>1,000</answer>", answer="Total: 10 * 100 = 1000\\n#### 1000").reason
    'predicted 1000 (<answer>), reference 1000'
    """

    default_name = "gsm8k_accuracy"
    score_range = (0.0, 1.0)

    answer_column: str = "answer"
    fallback_last_number: bool = True
    #: A sample whose check times out or crashes scores as a wrong answer, never better.
    on_error: OnError = field(default="zero", kw_only=True)
    reasoning_delimiters: Sequence[str] | None = None
    #: The answer blocks' container and the reasoning's (a tag name, or ``[opening, closing]``; see ``_containers``).
    answer_tag: str | Sequence[str] = "answer"
    think_tag: str | Sequence[str] | None = "think"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_answer_settings(self)

    def inputs(self) -> dict[str, Input]:
        return {"reference": Column(self.answer_column)}

    def score(self, completion: str, reference: object) -> RewardResult:
        gold = parse_reference_number(reference)
        if gold is None:
            return RewardResult(None, f"the reference {str(reference)[:60]!r} has no number")
        if self.reasoning_delimiters:
            final = after_reasoning(completion, self.reasoning_delimiters)
            if final is None:
                return RewardResult(0.0, f"the reasoning never ends (no {' or '.join(self.reasoning_delimiters)})")
            completion = final
        predicted, where = extract_numeric_answer(
            completion, self.fallback_last_number, self.answer_tag, self.think_tag
        )
        if predicted is None:
            return RewardResult(0.0, where)
        ok = numbers_match(predicted, gold)
        return RewardResult(
            1.0 if ok else 0.0, f"predicted {format_number(predicted)} ({where}), reference {format_number(gold)}"
        )
