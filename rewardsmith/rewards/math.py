"""``math_accuracy``: the final answer, checked with math-verify against a LaTeX reference.

What counts as the answer (only the final one, never a number found anywhere):

1. the text after the reasoning (after the last ``</think>``), read from its
   last revision on ("wait, that's wrong", see ``_answers``), then in it
2. every ``<answer>`` block (its boxes if it has any) and every ``\\boxed{}``
   outside the blocks; they must all agree, or the completion hedged and
   scores 0 (one box offering alternatives, ``18 \\text{ or } 20``, hedges too);
3. failing those, answer statements ("the answer is", "Final Answer: The
   final answer is", ``# Answer``, ``**Final answer:**``);
4. failing those, a conservative closing statement (the last sentence
   stating its value after "is" or ``=``, or opening with "so"/"therefore").

Several answers in order against a reference that lists as many values
(``p = \\boxed{3}``, ``q = \\boxed{5}`` against ``3, 5``) are one multi-part answer.
Choice letters, inequalities against intervals, ordered lists and units are
compared in ``_equivalence``; the comparison itself (exact checks, math-verify, caches) is in ``_mathcheck``.
An equal value in another form than the prompt asks for ("Express your answer as a common fraction":
``\\frac{6}{8}``, ``0.75``) scores 0 (``_equivalence.form_mismatch``).

The reference comes from the ``answer`` column (``solution`` is used when
there is no ``answer`` column; a worked solution's last ``\\boxed{}`` or
``#### N`` is taken). It is parsed as LaTeX even when written bare (``7\\pi``,
``\\dfrac{1}{9}``, ``10{,}000``), once per process and reference (an LRU cache).
A reference that cannot be parsed makes the row unscorable (``None``).

Identical answers, and two plain rationals (repeating decimals such as
``0.\\overline{3}`` included, exactly), are decided without sympy; so is
every answer that cannot be equal for a cheap reason: one whose value or
expansion is astronomically large (``9^{9^{9}}``, ``1000000!``) against a
reference that is not, one longer than ``MAX_ANSWER_CHARS``, or one that writes
repeating digits in a form that is not an exact repeating decimal.
Everything else goes to math-verify. Decisions are cached, so a group of
completions that agree costs one verification. math-verify can hang on some
inputs, so this reward runs in a worker process with a hard ``timeout``
(10 s per sample by default); a sample that times out (or whose check
crashes) scores 0, as a wrong answer does (``on_error="zero"``), so that
breaking the checker never pays better than being wrong.

A ``\\boxed{}`` that only holds a blank to fill in (``\\phantom{2}``,
``\\square``, nothing), or that restates a box of the prompt, is not an
answer. A reference written in words (``forty two``) is not math: the row
scores ``None``.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rewardsmith.core.engine import OnError
from rewardsmith.core.injection import Column, Input
from rewardsmith.core.inputs import Batch
from rewardsmith.core.registry import register_reward
from rewardsmith.core.result import RewardResult
from rewardsmith.core.reward import Reward
from rewardsmith.rewards._answers import alternatives, math_spans
from rewardsmith.rewards._containers import (
    check_answer_settings,
)
from rewardsmith.rewards._equivalence import form_mismatch, multiplied, ordered_prompt, without_unit
from rewardsmith.rewards._latex import is_prose
from rewardsmith.rewards._math_answers import final_math_answers, read_final_answers
from rewardsmith.rewards._mathcheck import (
    VARIABLE,
    WARM_UP,
    chain_values,
    clear_caches,
    compare,
    hedge_reason,
    normal_form,
    parse_latex,
    parts_of,
    rational,
    short,
    strip_delimiters,
)
from rewardsmith.rewards._text import (
    boxed_contents,
    visible_text,
)
from rewardsmith.rewards.reasoning import after_reasoning

__all__ = ["MathAccuracy", "clear_caches", "final_math_answers", "read_final_answers", "reference_latex"]


def reference_latex(gold: Any) -> str | None:
    r"""The LaTeX of a reference answer: a bare answer, or a worked solution's last ``\boxed{}`` / ``#### N``.

    >>> reference_latex(r"so the area is $\boxed{7\pi}$.")
    '7\\pi'
    >>> reference_latex(" $10{,}000$ ")
    '10{,}000'
    >>> reference_latex(None) is None, reference_latex(r"$\boxed{1}$ and $\boxed{4}$")
    (True, '1, 4')
    >>> reference_latex(r"\boxed{1} papers and \boxed{2} bins"), reference_latex(r"\boxed{1}, so we get \boxed{2}")
    ('1, 2', '2')
    """
    if gold is None:
        return None
    text = str(gold)
    if "####" in text:
        text = text.rsplit("####", 1)[1]
    boxed = boxed_contents(text)
    if len(boxed) > 1 and _listed(text, boxed):
        return ", ".join(strip_delimiters(b) for b in boxed)  # "\boxed{1} and \boxed{4}": both are the answer
    if boxed:
        text = boxed[-1]
    elif _FORMULA_LIST.fullmatch(text.strip()):
        text = ", ".join(math_spans(text))
    text = _AND.sub(", ", strip_delimiters(text))  # "6 \text{ and } 8" lists two values
    return text or None


#: What joins the boxes of one answer in several parts (``\boxed{1} and \boxed{4}``, ``$\boxed{1}$, $\boxed{4}$``).
_BOX_LIST = re.compile(
    r"(?:\s{0,5}(?:\$|\\[()])?(?:\s{1,5}[A-Za-z]{1,20})?"  # a unit word after a box (``\boxed{1} papers and``)
    r"\s{0,5}(?:,|;|and|,\s{0,5}and)?\s{0,5}(?:\$|\\[()])?\s{0,5}\x00)+"
)
#: A reference offering alternatives says "or" (``1/2 \text{ or } 1``); "and" joins the parts of one answer.
_OFFERED = re.compile(r"(?<![\w\\])or(?!\w)")
#: Formulas joined by "and" or commas in a reference (``$1$ and $2$ and $3$``) are one list.
_FORMULA_LIST = re.compile(r"\$([^$]{1,200})\$((?:\s{0,5}(?:,|and|,\s{0,5}and)\s{1,5}\$[^$]{1,200}\$){1,20})")
_AND = re.compile(r"\s{0,5}\\text\s{0,3}\{\s{0,5}and\s{0,5}\}\s{0,5}")


def _listed(text: str, boxed: list[str]) -> bool:
    """Whether the boxes of ``text`` (their contents ``boxed``) are written as one list, nothing but a joint between."""
    marked = text
    for content in boxed:
        marked = marked.replace(f"\\boxed{{{content}}}", "\x00", 1)
    first, last = marked.find("\x00"), marked.rfind("\x00")
    return first < last and _BOX_LIST.fullmatch(marked, first + 1, last + 1) is not None


@register_reward("math_accuracy", aliases=("accuracy",))
@dataclass
class MathAccuracy(Reward):
    r"""The final answer is mathematically equal to the reference (math-verify), hedging scores 0.

    Only the final answer counts (``<answer>`` block, ``\boxed{}`` or "the
    answer is", after any ``</think>``); several different final answers
    score 0; a reference that cannot be parsed gives ``None``. With
    ``reasoning_delimiters`` (e.g. ``["</think>"]``, as TRL's
    ``reasoning_accuracy_reward``) the answer is looked for only after the
    reasoning, and a completion whose reasoning never ends scores 0. The
    reference is parsed as LaTeX even when bare. Runs with a hard per-sample
    ``timeout`` (10 s) in a worker process; ``workers=N`` scores in parallel.

    Columns: ``answer`` (configurable; ``solution`` is used when there is no
    ``answer`` column). Range: {0, 1} or None.

    >>> acc = MathAccuracy(timeout=None)  # in this process, for the example
    >>> acc(completions=[r"... so $x = \boxed{\frac{1}{2}}$", r"\boxed{0.5}", r"\boxed{2} or \boxed{3}", "try 0.5, 2"],
    ...     answer=[r"\dfrac{1}{2}"] * 4)
    [1.0, 1.0, 0.0, 0.0]
    >>> acc.check(r"The answer is $7\pi$.", answer=r"7\pi").reason
    'predicted 7\\pi (answer phrase), reference 7\\pi: identical'
    """

    default_name = "math_accuracy"
    score_range = (0.0, 1.0)

    answer_column: str = "answer"
    reasoning_delimiters: Sequence[str] | None = None
    #: The answer blocks' container and the reasoning's (a tag name, or ``[opening, closing]``; see ``_containers``).
    answer_tag: str | Sequence[str] = "answer"
    think_tag: str | Sequence[str] | None = "think"
    timeout: float | None = field(default=10.0, kw_only=True)
    #: A sample whose check times out or crashes scores as a wrong answer (see the module docs).
    on_error: OnError = field(default="zero", kw_only=True)

    def __post_init__(self) -> None:
        super().__post_init__()
        check_answer_settings(self)

    def inputs(self) -> dict[str, Input]:
        # MATH-style data has a worked `solution` whose last \boxed{} is the answer; it serves when there is
        # no `answer` column.
        fallbacks = ("solution",) if self.answer_column == "answer" else ()
        return {"reference": Column(self.answer_column, *fallbacks)}

    def _library_timeout(self) -> int | None:
        # math-verify's own timeouts use signals: only on the main thread, and only when
        # this reward is not already bounded by its worker process's hard timeout.
        if self.timeout is None and threading.current_thread() is threading.main_thread():
            return 5
        return None

    def affinity(self, row: dict[str, Any]) -> Any:
        return str(row.get("reference"))

    def prepare_worker(self) -> None:
        # Import sympy and math-verify and warm the LaTeX parser's prediction cache on the shapes answers take,
        # so that the first samples a worker scores are not slowed (or timed out) by a cold parser.
        for latex in WARM_UP:
            parse_latex(latex, None)

    def score_batch(self, batch: Batch) -> list[Any]:
        """Decide in this process what needs no sympy; send the rest to the worker processes.

        Identical answers, plain rationals, missing or malformed answers are
        decided exactly in microseconds (linear-time text work, no hang risk),
        so only samples that need math-verify pay a trip to a worker and its
        hard timeout.
        """
        rows = self.injection.rows(batch)
        if self.timeout is None and self.workers <= 1:
            return self.run_samples(rows)
        out: list[Any] = []
        for row in rows:
            try:
                out.append(self._judge(row["completion"], row["reference"], row.get("prompt"), allow_sympy=False))
            except Exception:  # anything odd is left to the worker, where errors are per sample
                out.append(None)
        pending = [i for i, value in enumerate(out) if value is None]
        for i, value in zip(pending, self.run_samples([rows[i] for i in pending])):
            out[i] = value
        return out

    def score(self, completion: str, reference: Any, prompt: Any = None) -> RewardResult | None:
        return self._judge(completion, reference, prompt, allow_sympy=True)

    def _judge(self, completion: str, reference: Any, prompt: Any, *, allow_sympy: bool) -> RewardResult | None:
        """Score one sample; without ``allow_sympy``, ``None`` wherever math-verify would be needed."""
        if self.reasoning_delimiters:
            final = after_reasoning(completion, self.reasoning_delimiters)
            if final is None:
                return RewardResult(0.0, f"the reasoning never ends (no {' or '.join(self.reasoning_delimiters)})")
            completion = final
        gold = reference_latex(None if reference is None else visible_text(str(reference)))
        if gold is not None and is_prose(gold):
            return RewardResult(None, f"the reference {str(reference)[:60]!r} is written in words, not math")
        if gold is not None and _OFFERED.search(gold) and len(alternatives(gold)) > 1:
            return RewardResult(None, f"the reference {str(reference)[:60]!r} offers alternatives: no answer can match")
        if gold is None:
            return RewardResult(None, f"the reference {str(reference)[:60]!r} cannot be parsed")
        prompt_text = prompt if isinstance(prompt, str) else None
        answers, where, offered = read_final_answers(completion, prompt_text, self.answer_tag, self.think_tag)
        answers = [value for answer in answers or [] for value in chain_values(answer)]
        if answers and all(normal_form(a) == normal_form(gold) for a in answers):  # the reference as written
            return RewardResult(1.0, f"predicted {short(answers[-1])} ({where}), reference {short(gold)}: identical")
        timeout = self._library_timeout()
        gold_value: Any = None
        if rational(gold) is None:  # whether a LaTeX reference parses takes sympy
            if not allow_sympy:
                return None
            gold_value = parse_latex(gold, timeout)
            if not gold_value:
                return RewardResult(None, f"the reference {str(reference)[:60]!r} cannot be parsed")
        if not answers:
            return RewardResult(0.0, where)
        # a list keeps its order unless the problem, or a worked reference ("so the solutions are"), makes it a set
        ordered = ordered_prompt(prompt_text) and ordered_prompt(str(reference))
        last = answers[-1]
        hedge = hedge_reason([without_unit(multiplied(a)) for a in answers], allow_sympy, timeout)
        if hedge is None:
            return None
        if hedge:
            parts, opening, closing = parts_of(gold)
            # values offered as alternatives are a hedge, unless the problem asks for all solutions ("x = 5 or x = -2")
            if (offered and ordered) or not (2 <= len(parts) == len(answers)):
                return RewardResult(0.0, hedge)
            # a problem asking for several quantities, answered one box each, in order
            joined = ", ".join(VARIABLE.sub("", a) for a in answers)
            last, where = f"{opening}{joined}{closing}", f"{where}, one per part"
        verdict = compare(gold, gold_value, last, ordered, allow_sympy, timeout)
        if verdict is None:
            return None
        ok, how = verdict
        broken = form_mismatch(last, prompt_text, gold) if ok else None
        if broken:  # the value asked for, not in the form asked for
            return RewardResult(0.0, f"predicted {short(last)} ({where}): {broken}")
        return RewardResult(1.0 if ok else 0.0, f"predicted {short(last)} ({where}), reference {short(gold)}: {how}")
