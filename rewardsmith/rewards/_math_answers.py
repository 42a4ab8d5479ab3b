r"""What a completion states as its final math answer: boxes, answer blocks, statements, closing sentences.

The reading ``math_accuracy`` does before any comparison (see ``math`` for the
rules): the final part of the text (after the reasoning and the last
revision), then every ``<answer>`` block and ``\\boxed{}``, else the answer
statements, else a conservative closing sentence; each stated answer split
into the values it offers, without what rules a value out or shows its working.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rewardsmith.rewards._answers import (
    MAX_STATEMENT_CHARS,
    alternatives,
    answer_statements,
    before_end_of_turn,
    final_part,
    math_spans,
    phrase_matches,
    revision_after,
    stated_values,
    statement_values,
    unescaped,
    without_emphasis,
)
from rewardsmith.rewards._closing import OFFERS, closing_sentence, closing_statement
from rewardsmith.rewards._containers import (
    Container,
    blocks,
    container,
    final_part_after,
    find_markers,
    last_end,
    reopened,
)
from rewardsmith.rewards._latex import is_placeholder, is_prose
from rewardsmith.rewards._mathcheck import VARIABLE, normal_form, parts_of, strip_delimiters
from rewardsmith.rewards._rejections import rejected_values, without_negation, without_working
from rewardsmith.rewards._text import MAX_ANSWERS, boxed_contents, visible_text

__all__ = ["final_math_answers", "read_final_answers"]


def final_math_answers(
    completion: str,
    prompt: str | None = None,
    answer_tag: str | Sequence[str] | Container = "answer",
    think_tag: str | Sequence[str] | Container | None = "think",
) -> tuple[list[str] | None, str]:
    r"""The final answers a completion states, and where they were found (``None`` when malformed).

    Blanks to fill in (``\boxed{}``, ``\boxed{\phantom{2}}``, ``\square``) are
    not answers, and neither is a box that restates one of the ``prompt``'s,
    unless the completion states nothing else. One stated answer that offers
    alternatives (``18 \text{ or } 20``) counts as each of them.

    >>> final_math_answers(r"<think>maybe \boxed{5}</think> so it is \boxed{6}.")
    (['6'], '\\boxed')
    >>> final_math_answers("<answer>$\\frac{1}{2}$</answer>")
    (['\\frac{1}{2}'], '<answer>')
    >>> final_math_answers("I think 42 is involved")
    ([], 'no final answer (no \\boxed{}, <answer>, answer statement or closing statement)')
    >>> asked = r"What goes in $\boxed{\phantom{2}} + 3 = 5$?"
    >>> final_math_answers(r"We fill $\boxed{\phantom{2}} + 3 = 5$: it is $\boxed{2}$.", prompt=asked)
    (['2'], '\\boxed')
    >>> final_math_answers("Final Answer: The final answer is $5$. I hope it is correct.")
    (['5'], 'answer phrase')
    >>> final_math_answers(r"So it is $\boxed{17}$. Wait, that's wrong: it is $\boxed{18}$.")
    (['18'], '\\boxed')
    """
    answers, where, _ = read_final_answers(completion, prompt, answer_tag, think_tag)
    return answers, where


def read_final_answers(
    completion: str,
    prompt: str | None = None,
    answer_tag: str | Sequence[str] | Container = "answer",
    think_tag: str | Sequence[str] | Container | None = "think",
) -> tuple[list[str] | None, str, bool]:
    r""":func:`final_math_answers`, and whether the values are offered as alternatives ("or", "either", "possibly").

    Several values offered so are a hedge even where the reference lists as many: they are never one list.

    >>> read_final_answers(r"either $\boxed{3}$ or $\boxed{5}$"), read_final_answers(r"$\boxed{3}$ and $\boxed{5}$")
    ((['3', '5'], '\\boxed', True), (['3', '5'], '\\boxed', False))
    """
    answer_box = answer_tag if isinstance(answer_tag, Container) else container(answer_tag, "answer_tag")
    segment = before_end_of_turn(visible_text(completion))
    if think_tag is not None:
        segment = final_part_after(segment, think_tag if isinstance(think_tag, Container) else container(think_tag))
    markers = ("\\boxed", "\\fbox", answer_box.opening)
    segment = reopened(segment, final_part(segment, markers), answer_box)
    found = _marked_answers(segment, answer_box)
    if found is None or isinstance(found, str):
        return None, found or "malformed", False
    answers, where = found
    answers = _real_answers([strip_delimiters(a) for a in answers], prompt)
    offered = any(OFFERS.search(a) for a in answers) or _offered_between(segment, markers)
    final = _final_statement_after(segment, markers) if answers else None
    if final:  # "= \boxed{200} ... = \boxed{255} ... Final Answer: The final answer is $10,455$."
        answers, where, offered = final, "final answer statement after the boxes", False
    if not answers:
        statements = answer_statements(segment)
        if statements is None:
            return None, f"more than {MAX_ANSWERS} answer statements", False
        # the last statement is the answer; an earlier one counts too unless it is prose ("answer: we first ...")
        stated = [a for a in statements[:-1] if not is_prose(a)] + statements[-1:]
        answers = [v for a in stated for v in stated_values(a)]
        answers = [a for a in answers if not is_placeholder(strip_delimiters(a))]
        where, offered = "answer phrase", any(OFFERS.search(a) for a in stated)
    revised = revision_after(segment, _last_answer_at(segment, markers)) if answers else None  # scans after it only
    if revised is not None and closing_statement(segment[revised:]):  # "**Final answer:** 7 ... Actually it's 8."
        answers, where = closing_statement(segment[revised:]) or [], "closing statement after a revision"
        offered = bool(OFFERS.search(closing_sentence(segment[revised:]) or ""))
    if not answers:
        answers, where = closing_statement(segment) or [], "closing statement"
        offered = bool(OFFERS.search(closing_sentence(segment) or ""))
    if not answers:
        answers, where = _closing_list(segment), "closing list"  # "Summary:\n- d(6) = 1/3\n- d(16) = 1"
    if not answers:
        return [], "no final answer (no \\boxed{}, <answer>, answer statement or closing statement)", False
    answers = [strip_delimiters(alt) for a in answers for alt in alternatives(_plain(a))]
    answers = [a for a in answers if a and a not in _BARE_DELIMITERS]
    rejected = {normal_form(strip_delimiters(v)) for v in rejected_values(segment)}
    kept = [a for a in answers if normal_form(a) not in rejected]
    if answers and not kept:
        return [], 'every stated answer is rejected in the text ("not ...", "... is incorrect")', False
    return _restated(kept), where, offered


def _plain(answer: str) -> str:
    """A stated answer as LaTeX, without the value it rules out or the working after it."""
    return without_working(without_negation(unescaped(answer)))


_ITEM = re.compile(r"[ \t]{0,8}(?:[-*+\u2022]|\d{1,2}[.)])[ \t]{1,8}(.{1,300})")
_ITEM_VALUE = re.compile(r"=\s{0,5}([^=]{1,200})$")


def _closing_list(segment: str) -> list[str]:
    r"""The values of a list of formulas that closes the text, one item per line (a multi-part answer, or a hedge).

    >>> _closing_list("Summary:\n- \\( d(6) = \\frac{1}{3} \\)\n- \\( d(16) = 1 \\)"), _closing_list("- 3 apples")
    (['\\frac{1}{3}', '1'], [])
    """
    items = []
    for line in reversed(segment.rstrip().split("\n")[-MAX_ANSWERS:]):
        item = _ITEM.fullmatch(line.rstrip())
        spans = math_spans(item.group(1)) if item else []
        if len(spans) != 1:
            break
        value = _ITEM_VALUE.search(spans[0])
        items.append(value.group(1).strip() if value else spans[0])
    return items[::-1] if len(items) >= 2 else []


def _restated(answers: list[str]) -> list[str]:
    r"""The answers, without the parts a tuple restates (``a=\boxed{3}``, ``b=\boxed{5}``, so ``\boxed{(3,5)}``).

    >>> _restated(["a = 3", "b = 5", "(3, 5)"]), _restated(["(3, 5)", "3", "5"]), _restated(["3", "5", "(3, 6)"])
    (['(3, 5)'], ['(3, 5)'], ['3', '5', '(3, 6)'])
    """
    if len(answers) < 3:
        return answers
    for whole, rest in ((answers[-1], answers[:-1]), (answers[0], answers[1:])):
        parts = parts_of(whole)[0]
        if len(parts) == len(rest) and all(
            normal_form(VARIABLE.sub("", a)) == normal_form(p) for a, p in zip(rest, parts)
        ):
            return [whole]
    return answers


def _final_statement_after(segment: str, markers: tuple[str, ...]) -> list[str] | None:
    r"""The values of a "final answer" statement that closes the text after its last box (the boxes were working).

    >>> _final_statement_after(r"so $= \boxed{200}$, then $10,455$. Final Answer: The final answer is $10,455$.",
    ...     ("\\boxed",))
    ['10,455']
    >>> _final_statement_after(r"Final answer: \boxed{3}", ("\\boxed",)) is None
    True
    """
    phrases = phrase_matches(segment[-MAX_STATEMENT_CHARS:])
    if not phrases or "final" not in phrases[-1].group(0).casefold():
        return None
    start = len(segment) - len(segment[-MAX_STATEMENT_CHARS:]) + phrases[-1].start()
    if max(segment.rfind(m) for m in markers) > start:
        return None
    statements = answer_statements(segment[start:])
    values = [v for v in stated_values(statements[-1])] if statements else []
    return values or None


def _last_answer_at(segment: str, markers: tuple[str, ...]) -> int:
    """Where the last answer marker or answer phrase of ``segment`` begins."""
    phrases = phrase_matches(segment)
    return max([segment.rfind(m) for m in markers] + [phrases[-1].start() if phrases else -1])


def _offered_between(segment: str, markers: tuple[str, ...]) -> bool:
    """Whether the words around several nearby answer markers offer them as alternatives (``either .. or ..``)."""
    spans = [(segment.find(m), segment.rfind(m)) for m in markers if m in segment]
    if not spans:
        return False
    first, last = min(f for f, _ in spans), max(end for _, end in spans)
    return first < last <= first + 300 and OFFERS.search(segment, max(0, first - 12), last) is not None


#: A delimiter alone (``we get: \\[`` with the formula on the next lines) states nothing.
_BARE_DELIMITERS = frozenset(("\\[", "\\(", "\\]", "\\)", "$", "$$"))


def _marked_answers(segment: str, box: Container) -> tuple[list[str], str] | str | None:
    """The answers in ``<answer>`` blocks and boxes (every box counts: two boxes in one block are two answers)."""
    found = blocks(segment, box, limit=MAX_ANSWERS)
    if found is None:
        return f"unbalanced {box.opening} {box.closing} markers"
    answers: list[str] = []
    where = ""
    if found:
        where = box.opening
        for block in found[: MAX_ANSWERS + 1]:
            boxed = boxed_contents(block, limit=MAX_ANSWERS)
            answers += [v for b in boxed for v in _box_values(b)] or _block_values(block)
        first = find_markers(segment, (box,), limit=0)[0].start
        outside = segment[:first] + segment[last_end(segment, box, closing=True) or len(segment) :]
        answers += boxed_contents(outside, limit=MAX_ANSWERS)
    else:
        answers = boxed_contents(segment, limit=MAX_ANSWERS)
        where = "\\boxed" if answers else ""
    if len(answers) <= MAX_ANSWERS:
        answers = [v for a in answers for v in _box_values(a)]
    if len(answers) > MAX_ANSWERS:
        return f"more than {MAX_ANSWERS} stated answers"
    return answers, where


_WORDS = re.compile(r"[A-Za-z]{2,}")
_DOLLAR = re.compile(r"(?<!\\)\$")
#: A label naming what the formulas after it are (``Special matrix:``): a few words and a colon, no instruction.
_LABEL = re.compile(
    r"\s{0,5}(?!(?:find|solve|compute|calculate|evaluate|simplify|determine|show|prove|what|which|how)\b)"
    r"[A-Za-z][A-Za-z ,'-]{0,50}:\s{0,5}",
    re.IGNORECASE,
)
_MATH_OUTSIDE = re.compile(
    r"\$\$(?:\\.|[^$\\]){0,2000}\$\$|\$(?:\\.|[^$\\]){0,2000}\$|\\\(.{0,2000}?\\\)|\\\[.{0,2000}?\\\]", re.DOTALL
)


def _box_values(content: str) -> list[str]:
    r"""A box's answer: as written, unless it holds formulas inside prose (a question copied into a box).

    A box that opens with math and closes its formula inside (``\boxed{12 $ and $13}``) states the values between.

    >>> _box_values("12 $ and $13 "), _box_values(r"\frac{1}{2}"), _box_values("Find $x$."), _box_values(r"\$1.5M")
    (['12', '13'], ['\\frac{1}{2}'], [], ['\\$1.5M'])
    """
    dollars = [m.start() for m in _DOLLAR.finditer(content)]
    if not dollars and "\\(" not in content:
        return [content]
    opening = content[: dollars[0]] if dollars else ""
    if opening.strip() and not _WORDS.search(opening):
        return statement_values(_DOLLAR.sub(" ", content))
    return _block_values(content)


def _block_values(block: str) -> list[str]:
    r"""What an answer block without a box states: its formulas, or its text (a statement inside it is read as one).

    >>> _block_values(r"Special matrix: $\begin{pmatrix}1 \end{pmatrix}$"), _block_values("Solve: $x + 1 = 2$")
    (['\\begin{pmatrix}1 \\end{pmatrix}'], [])
    """
    statements = answer_statements(block)
    if statements:
        return [v for s in statements for v in stated_values(s)]
    text = without_emphasis(block.strip())
    spans = math_spans(text)
    if not spans:
        return statement_values(text)  # "5 apples", "18 or 20", "Evelyn"
    first = _MATH_OUTSIDE.search(text)
    before = text[: first.start()] if first else text
    after = _WORDS.findall(_MATH_OUTSIDE.sub(" ", text[len(before) :]))
    if len(after) <= 2 and (not _WORDS.search(before) or _LABEL.fullmatch(before)):
        # formulas, a word or two after them ("(simplified)"), a short label before them ("Special matrix:");
        # never an instruction before them
        return spans
    # prose with formulas (an echoed question, say): only a closing statement in it is an answer
    return closing_statement(text if text.endswith((".", "!", "?")) else f"{text}.") or []  # a question: none


def _real_answers(answers: list[str], prompt: str | None) -> list[str]:
    """The stated answers that are answers: blanks left out, and boxes the prompt has (unless that is all)."""
    filled = [a for a in answers if not is_placeholder(a)]
    if not prompt or not filled:
        return filled
    asked = {normal_form(strip_delimiters(b)) for b in boxed_contents(visible_text(prompt), limit=MAX_ANSWERS)}
    own = [a for a in filled if normal_form(a) not in asked]
    return own or filled
