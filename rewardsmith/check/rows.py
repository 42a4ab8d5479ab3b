"""What an audit knows about one row: its prompt, its reference answer, its reference solution, its format.

Probes are built from these (:mod:`rewardsmith.check.probes`), so they fit
whatever data and reward are audited:

* the **reference answer** is read from the column the reward itself declares
  (``answer`` for ``gsm8k_accuracy``; the first of its required, then optional
  columns that holds a short value), or a column named with ``answer_column``;
  a worked solution there is cut to its final answer (last ``\\boxed{}`` or
  ``#### N``);
* the **reference solution** (a completion known to be right) comes from the
  gold column, when there is one;
* the **format** (tag names, ``\\boxed{}``, ``####``) is read from the
  reference solutions, else from the prompts, else the common ones are used;
* a **wrong answer** for each row is another row's reference answer with a
  different value.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from rewardsmith.check.tasks import VisibleCall, given_numbers, solve_numbers, stub_program, visible_calls
from rewardsmith.core.inputs import completion_text, prompt_text
from rewardsmith.core.reward import Reward
from rewardsmith.rewards._text import boxed_contents, format_number, iter_numbers, parse_number

__all__ = [
    "Format",
    "RowContext",
    "answer_text",
    "build_rows",
    "candidate_formats",
    "choose_formats",
    "declared_columns",
    "near_miss",
    "occurrence",
    "reference_column",
    "replace_answer",
    "wrong_answers",
]

_TAG = re.compile(r"<([A-Za-z_][\w-]{0,30})>")
_WORD = re.compile(r"\w")
#: The longest reference answer used as an answer in probes (longer ones are worked solutions).
_MAX_ANSWER = 200


@dataclass(frozen=True)
class Format:
    """How a completion states its final answer: tags (``think``/``answer``), ``\\boxed{}``, ``####``, a phrase,
    a fenced code block, or a template of the user's with ``{reasoning}`` and ``{answer}`` in it.

    >>> Format("tags", "think", "answer").render("2 and 2 make 4", "4")
    '<think>\\n2 and 2 make 4\\n</think>\\n<answer>\\n4\\n</answer>'
    >>> Format("boxed").render("2 and 2 make 4", "4")
    '2 and 2 make 4\\n\\nThe final answer is $\\\\boxed{4}$.'
    >>> Format.parse("<r>{reasoning}</r><SOLUTION>{answer}</SOLUTION>").answer_block("4")
    '<SOLUTION>4</SOLUTION>'
    """

    kind: str  # "tags", "boxed", "hashes", "phrase", "fence" or "template"
    think_tag: str | None = None
    answer_tag: str | None = None
    text: str | None = None  # the fence's language, or the template

    @classmethod
    def parse(cls, spec: str) -> Format:
        """A format from its description: ``boxed``, ``hashes``, ``phrase``, ``tags:answer``,
        ``tags:think,answer``, ``fence:python``, or a template holding ``{answer}`` (and ``{reasoning}``).

        >>> Format.parse("tags:reasoning,SOLUTION").label, Format.parse("fence:python").label
        ('tags(reasoning, SOLUTION)', 'fence(python)')
        """
        text = spec.strip()
        if "{answer}" in text:
            return cls("template", text=text)
        kind, _, rest = text.partition(":")
        kind = kind.strip().lower()
        if kind in ("boxed", "hashes", "phrase") and not rest:
            return cls(kind)
        if kind == "fence":
            return cls("fence", text=rest.strip())
        names = [n.strip() for n in rest.split(",") if n.strip()]
        if kind == "tags" and 1 <= len(names) <= 2 and all(_TAG.fullmatch(f"<{n}>") for n in names):
            return cls("tags", names[0] if len(names) == 2 else None, names[-1])
        raise ValueError(
            f"unknown probe format {spec!r}: use boxed, hashes, phrase, tags:ANSWER_TAG, tags:THINK_TAG,ANSWER_TAG, "
            "fence:LANGUAGE, or a template with {answer} (and {reasoning}) in it"
        )

    @property
    def label(self) -> str:
        """The format in a few characters: ``tags(think, answer)``, ``boxed``, ..."""
        if self.kind == "fence":
            return f"fence({self.text or 'any'})"
        if self.kind == "template":
            return f"template({self.text})"
        if self.kind != "tags":
            return self.kind
        return f"tags({', '.join(self.tags)})"

    @property
    def slug(self) -> str:
        """The format as part of a name: ``tags_think_answer``, ``boxed``, ..."""
        if self.kind == "fence":
            return "_".join(["fence", *([self.text] if self.text else [])])
        return "_".join([self.kind, *self.tags])

    def render(self, reasoning: str, answer: str) -> str:
        """A completion in this format (an answer block alone, with no reasoning, for tags without a think tag)."""
        if self.kind == "tags":
            answer_part = f"<{self.answer_tag}>\n{answer}\n</{self.answer_tag}>"
            if self.think_tag is None:
                return answer_part
            return f"<{self.think_tag}>\n{reasoning}\n</{self.think_tag}>\n{answer_part}"
        if self.kind == "template":
            return _fill(self.text or "", reasoning, answer)
        if self.kind == "fence":
            return f"{reasoning}\n\n{self.answer_block(answer)}"
        if self.kind == "boxed":
            return f"{reasoning}\n\nThe final answer is $\\boxed{{{answer}}}$."
        if self.kind == "hashes":
            return f"{reasoning}\n#### {answer}"
        return f"{reasoning}\nThe answer is {answer}."

    def answer_block(self, answer: str) -> str:
        """Just the part that states the answer (an answer block, a box, a ``####`` line, a sentence)."""
        if self.kind == "tags":
            return f"<{self.answer_tag}>{answer}</{self.answer_tag}>"
        if self.kind == "template":
            template = self.text or ""
            part = template.partition("{reasoning}")[2] or template
            at = part.index("{answer}")
            opening = part.rfind("<", 0, at)
            return _fill(part[opening if opening >= 0 else 0 :], "", answer).strip()
        if self.kind == "fence":
            return f"```{self.text or ''}\n{answer}\n```"
        if self.kind == "boxed":
            return f"\\boxed{{{answer}}}"
        if self.kind == "hashes":
            return f"#### {answer}"
        return f"The answer is {answer}."

    @property
    def tags(self) -> list[str]:
        """The tag names this format uses."""
        if self.kind == "template":
            return _paired_tags(self.text or "")
        return [t for t in (self.think_tag, self.answer_tag) if t]


def _fill(template: str, reasoning: str, answer: str) -> str:
    return re.sub(r"\{(reasoning|answer)\}", lambda m: reasoning if m.group(1) == "reasoning" else answer, template)


def _paired_tags(text: str) -> list[str]:
    """Tag names that open and close in ``text``, in order of first appearance."""
    names: list[str] = []
    for match in _TAG.finditer(text[:200_000]):
        name = match.group(1)
        if name not in names and f"</{name}>" in text:
            names.append(name)
    return names


def candidate_formats(
    golds: Sequence[str], prompts: Sequence[str], reward: Reward | None = None, given: Sequence[Format] = ()
) -> list[Format]:
    """Formats completions may be expected in, most likely first: those of the reference solutions, those the
    prompts mention, tags named by the reward's ``*_tag`` settings, then the common ones (``<think>``/``<answer>``
    tags, an ``<answer>`` block alone, ``\\boxed{}``, ``#### N``, "The answer is").

    Which of them the reward rewards is found by scoring the reference answer in each
    (:func:`choose_formats`).

    >>> [f.label for f in candidate_formats(["so 4.\\n#### 4"], [])][:2]
    ['hashes', 'tags(think, answer)']
    >>> [f.label for f in candidate_formats([], ["Reason in <reasoning></reasoning>, answer in <solution>."])][0]
    'tags(reasoning, solution)'
    >>> [f.label for f in candidate_formats(["def f(x):\\n    return x"], [])][0]
    'fence(python)'

    ``given`` formats (the user's) are the only candidates when there are any.
    """
    if given:
        return list(dict.fromkeys(given))
    found: list[Format] = []
    fence = _code_fence(golds, prompts, reward)
    if fence is not None:
        found.append(fence)
    for texts, from_gold in ((golds, True), (prompts, False)):
        sample = [t for t in texts[:50] if t]
        if not sample:
            continue
        tag_lists = [_paired_tags(t) if from_gold else _mentioned_tags(t) for t in sample]
        names = max(tag_lists, key=len)
        if names:
            found.append(Format("tags", names[0] if len(names) > 1 else None, names[-1]))
        joined = "\n".join(sample)
        found += [Format(kind) for kind, mark in (("boxed", "\\boxed"), ("hashes", "####")) if mark in joined]
    settings = reward.settings if reward is not None else {}
    answer_tag = settings.get("answer_tag")
    if isinstance(answer_tag, str) and answer_tag:
        think = settings.get("think_tag", "think")
        found.append(Format("tags", think if isinstance(think, str) and think else None, answer_tag))
    found += [Format("tags", "think", "answer"), Format("tags", None, "answer"), Format("boxed"), Format("hashes")]
    found.append(Format("phrase"))
    return list(dict.fromkeys(found))


def _code_fence(golds: Sequence[str], prompts: Sequence[str], reward: Reward | None) -> Format | None:
    """A fenced code block, when the reference solutions are programs or the prompts show test calls."""
    setting = (reward.settings if reward is not None else {}).get("language")
    language = setting if isinstance(setting, str) and setting not in ("", "auto") else "python"
    for gold in golds[:50]:
        fenced = re.search(r"```([\w+-]*)\n", gold or "")
        if fenced:
            return Format("fence", text=fenced.group(1) or language)
    code = any(re.search(r"^\s*(?:def|class|import|#include|function)\b", g or "", re.MULTILINE) for g in golds[:50])
    if code or any(visible_calls(p) for p in prompts[:20]):
        return Format("fence", text=language)
    return None


def choose_formats(candidates: Sequence[Format], scores: dict[Format, list[float]], most: int = 3) -> list[Format]:
    """The candidates whose completions scored best on average (up to ``most``, in the candidates' order).

    >>> tags, boxed = Format("tags", "think", "answer"), Format("boxed")
    >>> [f.label for f in choose_formats([tags, boxed], {tags: [0.0, 1.0], boxed: [1.0, 1.0]})]
    ['boxed']
    """
    means = {f: sum(v) / len(v) for f, v in scores.items() if v}
    if not means:
        return list(candidates[:1])
    best = max(means.values())
    chosen = [f for f in candidates if f in means and means[f] >= best - 1e-9 * max(1.0, abs(best))]
    return chosen[:most] or list(candidates[:1])


def _mentioned_tags(text: str) -> list[str]:
    names: list[str] = []
    for match in _TAG.finditer(text):
        if match.group(1) not in names:
            names.append(match.group(1))
    return names


def answer_text(value: Any) -> str | None:
    """A reference answer as text: a worked solution is cut to its final answer; lists, empty values: ``None``.

    >>> answer_text("She makes 9 * 2 = 18.\\n#### 18"), answer_text(r"so $\\boxed{\\frac{1}{2}}$"), answer_text(16)
    ('18', '\\\\frac{1}{2}', '16')
    >>> answer_text([3, 5]) is None, answer_text("  ") is None
    (True, True)
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float, Fraction)):
        return format_number(Fraction(str(value))) if not isinstance(value, Fraction) else format_number(value)
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text[:1] in "[{" and _is_json_container(text):
        return None
    if "####" in text:
        text = text.rsplit("####", 1)[1].strip()
    elif "\\boxed" in text:
        boxed = boxed_contents(text)
        if boxed:
            text = boxed[-1].strip()
    if not text or len(text) > _MAX_ANSWER:
        return None
    return text


def _is_json_container(text: str) -> bool:
    import json

    try:
        return isinstance(json.loads(text), (dict, list))
    except (ValueError, RecursionError):
        return False


def reference_column(
    reward: Reward, columns: Sequence[str], chosen: str | None = None, first_row: dict[str, Any] | None = None
) -> str | None:
    """The column holding each row's reference answer: ``chosen``, else the first column the reward declares
    (required, then optional) that the data has, else ``answer`` when the data has it. With ``first_row``, a
    column whose value there is no answer (a list of numbers, a JSON object of tests) is passed over.

    >>> from rewardsmith import get_reward
    >>> reference_column(get_reward("countdown"), ["nums", "target"], first_row={"nums": [3, 5], "target": 8})
    'target'

    >>> from rewardsmith import get_reward
    >>> reference_column(get_reward("math_accuracy"), ["prompt", "solution"])
    'solution'
    >>> reference_column(get_reward("think_format"), ["prompt", "answer"]), reference_column(
    ...     get_reward("think_format"), ["prompt"])
    ('answer', None)
    """
    if chosen:
        return chosen
    have = set(columns)
    present = [name for name in dict.fromkeys([*declared_columns(reward), "answer"]) if name in have]
    if first_row is not None:
        usable = [name for name in present if answer_text(first_row.get(name)) is not None]
        present = usable or present
    return present[0] if present else None


def declared_columns(reward: Reward) -> list[str]:
    """Every dataset column the reward reads (required with their fallbacks, then optional), in order.

    A plain TRL batch function ``f(completions, answer, **kwargs)`` reads the
    columns its signature names.

    >>> from rewardsmith import get_reward
    >>> declared_columns(get_reward("math_accuracy"))
    ['answer', 'solution']
    >>> def naive(completions, answer, **kwargs):
    ...     return [1.0] * len(completions)
    >>> declared_columns(get_reward(naive))
    ['answer']
    """
    names: list[str] = []
    for need in reward.missing_columns([]):
        head, _, rest = need.partition(" (or ")
        names += [head, *[n for n in rest.rstrip(")").split(", ") if n]]
    names += list(reward.optional_columns)
    fn = getattr(reward, "fn", None)
    if fn is not None and not names and reward.is_batch_reward():
        import inspect

        try:
            params = inspect.signature(fn).parameters.values()
        except (TypeError, ValueError):
            params = []
        skip = {"prompts", "completions", "completion_ids", "trainer_state", "log_extra", "log_metric", "self"}
        names += [p.name for p in params if p.name not in skip and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    return list(dict.fromkeys(names))


def _value(text: str) -> Fraction | None:
    try:
        return parse_number(text)
    except (ValueError, ZeroDivisionError, OverflowError):
        return None


def _same(a: str, b: str) -> bool:
    if " ".join(a.split()).lower() == " ".join(b.split()).lower():
        return True
    va, vb = _value(a), _value(b)
    return va is not None and va == vb


def wrong_answers(answers: Sequence[str | None], k: int = 12) -> list[list[str]]:
    """For each row, up to ``k`` other rows' answers that differ from its own (in text and in value).

    >>> wrong_answers(["4", "4.0", "7", None, "x"], k=2)
    [['7', 'x'], ['7', 'x'], ['x', '4'], [], ['4', '7']]
    """
    distinct = list(dict.fromkeys(a for a in answers if a))
    out: list[list[str]] = []
    for answer in answers:
        if not answer:
            out.append([])
            continue
        picked: list[str] = []
        start = (distinct.index(answer) + 1) if answer in distinct else 0
        for j in range(len(distinct)):
            other = distinct[(start + j) % len(distinct)]
            if other != answer and not _same(other, answer) and all(not _same(other, p) for p in picked):
                picked.append(other)
                if len(picked) == k:
                    break
        out.append(picked)
    return out


def _numbers(text: str) -> Iterator[tuple[Fraction, int, int]]:
    """Every number in ``text`` with the span of the number itself (no leading space or currency sign)."""
    for value, start, end in iter_numbers(text):
        while start < end and text[start] in " $\t":
            start += 1
        yield value, start, end


def occurrence(text: str, answer: str) -> int | None:
    """Where ``answer`` first occurs in ``text`` as a whole token (a number by its value), else ``None``.

    >>> occurrence("paid $1,000 then 1000 more", "1000"), occurrence("x = 12 and 2", "2"), occurrence("ab", "c")
    (6, 11, None)
    >>> occurrence(r"so $\\frac{\\pi}{2}$", r"\\frac{\\pi}{2}")
    4
    """
    value = _value(answer) if re.fullmatch(r"[-+$\d.,/ ]+", answer.strip()) else None
    if value is not None:
        for found, start, _ in _numbers(text):
            if found == value:
                return start
    if not answer.strip():
        return None
    pattern = re.escape(answer.strip())
    left = r"(?<!\w)" if _WORD.match(answer.strip()[0]) else ""
    right = r"(?!\w)" if _WORD.match(answer.strip()[-1]) else ""
    match = re.search(left + pattern + right, text)
    return match.start() if match else None


def replace_answer(text: str, answer: str, other: str) -> str | None:
    """``text`` with every whole-token occurrence of ``answer`` replaced by ``other`` (``None`` if it has none).

    >>> replace_answer("9 * 2 = 18.\\n#### 18", "18", "21")
    '9 * 2 = 21.\\n#### 21'
    """
    stripped = answer.strip()
    if not stripped or occurrence(text, stripped) is None:
        return None
    value = _value(stripped) if re.fullmatch(r"[-+$\d.,/ ]+", stripped) else None
    if value is not None:
        pieces, last = [], 0
        for found, start, end in _numbers(text):
            if found == value:
                pieces += [text[last:start], other]
                last = end
        return "".join(pieces) + text[last:] if pieces else None
    left = r"(?<!\w)" if _WORD.match(stripped[0]) else ""
    right = r"(?!\w)" if _WORD.match(stripped[-1]) else ""
    return re.sub(left + re.escape(stripped) + right, lambda _: other, text)


def near_miss(answer: str) -> str | None:
    """A wrong answer one away from a numeric ``answer`` (``None`` when it is not a number).

    >>> near_miss("18"), near_miss("0.5"), near_miss("x + 1")
    ('19', '1.5', None)
    """
    if not re.fullmatch(r"-?\$?\d[\d,]*(?:\.\d+)?", answer.strip()):
        return None
    value = _value(answer)
    return None if value is None else format_number(value + 1)


@dataclass
class RowContext:
    """One row of the audited data, as the probes need it.

    For a number puzzle (``numbers`` given), ``answer`` is an equation the
    audit solved and ``target`` the value it must reach; ``calls`` are the
    example calls the prompt shows (code tasks).
    """

    index: int
    prompt: Any
    columns: dict[str, Any]
    answer: str | None = None
    gold: str | None = None
    wrong: list[str] = field(default_factory=list)
    numbers: list[int] | None = None
    target: str | None = None
    calls: list[VisibleCall] = field(default_factory=list)

    @property
    def prompt_text(self) -> str:
        """The prompt's text (the last user message of a conversation)."""
        return prompt_text(self.prompt) if self.prompt is not None else ""

    @property
    def answer_in_prompt(self) -> bool:
        """Whether the reference answer appears in the prompt (echoing the prompt may then be right)."""
        return bool(self.answer) and occurrence(self.prompt_text, self.answer) is not None


def build_rows(
    rows: Sequence[dict[str, Any]],
    reward: Reward,
    *,
    answer_column: str | None = None,
    gold_column: str | None = None,
    exclude: Sequence[str] = (),
) -> tuple[list[RowContext], str | None]:
    """The :class:`RowContext` of each prepared row, and the reference-answer column used (if any).

    ``exclude`` names columns that are not passed to the reward (completions, labels).
    """
    columns = list(rows[0]) if rows else []
    column = reference_column(reward, columns, answer_column, rows[0] if rows else None)
    targets = [answer_text(row.get(column)) if column else None for row in rows]
    numbers = _puzzle_numbers(reward, rows, column)
    answers = [t if n is None else _solved(n, t) for n, t in zip(numbers, targets)]
    others = wrong_answers(answers)
    skip = {"prompt", *exclude}
    out = []
    for i, row in enumerate(rows):
        gold = row.get(gold_column) if gold_column else None
        prompt = row.get("prompt")
        calls = visible_calls(prompt_text(prompt)) if prompt is not None else []
        out.append(
            RowContext(
                index=i,
                prompt=prompt,
                columns={k: v for k, v in row.items() if k not in skip},
                answer=answers[i],
                gold=completion_text(gold) if gold is not None else None,
                wrong=_honest_wrong(numbers[i], targets[i], calls) + others[i],
                numbers=numbers[i],
                target=targets[i],
                calls=calls,
            )
        )
    return out, column


def _puzzle_numbers(reward: Reward, rows: Sequence[dict[str, Any]], answer_column: str | None) -> list[Any]:
    """Each row's given numbers, when the data has a column of integer lists besides the answer's (the reward's
    own columns first: a reward that ignores the numbers is exactly what must be caught)."""
    order = [*declared_columns(reward), *(rows[0] if rows else ())]
    names = [c for c in dict.fromkeys(order) if c not in (answer_column, "prompt") and rows and c in rows[0]]
    column = next((c for c in names if given_numbers(rows[0].get(c)) is not None), None)
    return [given_numbers(row.get(column)) if column else None for row in rows]


def _solved(numbers: list[int], target: str | None) -> str | None:
    value = _value(target) if target else None
    if value is None or value.denominator != 1:
        return None
    return solve_numbers(numbers, int(value))


def _honest_wrong(numbers: list[int] | None, target: str | None, calls: list[VisibleCall]) -> list[str]:
    """A plausible wrong attempt of this row's own: the numbers summed (a puzzle), a stub of the function (code)."""
    if numbers is not None:
        total = " + ".join(str(n) for n in numbers)
        value = _value(target) if target else None
        return [total] if value is not None and value != sum(numbers) else []
    stub = stub_program(calls)
    return [stub] if stub else []
