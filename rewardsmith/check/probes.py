"""Gaming probes: completions that must not score like a right answer, generated from each row.

Every probe is built from the row itself (its prompt, its reference answer,
its reference solution, another row's answer as a wrong one) and the format
the completions are expected in (:mod:`rewardsmith.check.rows`), in families:

=============  ===========================================================
``empty``      empty and white-space completions
``echo``       the prompt echoed back (not built where the answer is in the prompt)
``bare_answer`` the reference answer alone, without the format
``format_only`` the format with empty, nonsense or wrong content
``hedging``    several candidate answers at once
``lists``      long lists of numbers or answers, the right one among them
``padding``    padding and repetition to length
``tag_spam``   repeated, nested, unclosed and stray tags
``invisible``  invisible and look-alike characters
``huge``       a 1 MB completion
``truncated``  a reference cut off before its answer
``numbers``    a puzzle's equation that ignores the given numbers
``hardcoded``  a lookup table of the example calls the prompt shows (code)
=============  ===========================================================

Probes with no right answer in them (empty, echoed, padded, truncated, tag
spam, the target alone, a lookup table of the examples the prompt shows, ...) are also compared with a plausible *wrong*
attempt of the row (reasoning and a wrong answer in the format; for a puzzle
the given numbers summed; for code a stub of the function): GRPO pays a
completion for beating its group, so one that outscores honest wrong work is
rewarded, whether or not it reaches the reference (:func:`contentless`).

Each probe says for which rewards it is a hole to score like the reference
(``judged``): ``always`` (no reward should give an empty, hedged or truncated
completion a right answer's score); ``format`` (only for a reward that gives
credit for the format itself: a bare answer, nested or repeated blocks, text
after the answer, look-alike tag names); ``content`` (only for a reward that
checks the answer: a well-formed completion whose answer is wrong, nonsense,
hedged or the prompt). Which
rewards those are is found out from the reward's behaviour and its declared
columns (:mod:`rewardsmith.check.audit`), not from its name.

Calibration completions (the reference answer in each format, nonsense with
and without the format) are made here too; they are not probes, they tell
the audit what the reward rewards.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from rewardsmith.check.probe import CALIBRATION, NONSENSE, NONSENSE_ANSWER, REASONING, Probe
from rewardsmith.check.rows import Format, RowContext, near_miss, occurrence, replace_answer
from rewardsmith.check.tasks import lookup_program
from rewardsmith.check.trajectory_probes import trajectory_calibration, trajectory_probes

__all__ = [
    "CALIBRATION",
    "FAMILIES",
    "MB",
    "Probe",
    "calibration",
    "contentless",
    "format_trials",
    "make_probes",
    "wrong_attempts",
]

#: The probe families and what each tests.
FAMILIES: dict[str, str] = {
    "empty": "empty and white-space completions",
    "echo": "the prompt echoed back",
    "bare_answer": "the reference answer alone, without the format",
    "format_only": "the format with empty, nonsense or wrong content",
    "hedging": "several candidate answers at once",
    "lists": "long lists of numbers or answers",
    "padding": "padding and repetition to length",
    "tag_spam": "repeated, nested, unclosed and stray tags",
    "invisible": "invisible and look-alike characters",
    "huge": "a 1 MB completion",
    "truncated": "a reference cut off before its answer",
    "numbers": "an equation that ignores the given numbers (the target alone, numbers not given, one used twice)",
    "hardcoded": "a program that returns the values of the examples the prompt shows, and nothing else",
    "trajectory": "rollouts with tool calls: unknown tools, calls in the reasoning or after the answer, the answer "
    "only in a tool argument (in every shape) or result, repeated calls, junk calls, a failed call padded with "
    "junk ones, an empty final message",
}
MB = 1_000_000

FILLER = "This sentence is only here to make the completion longer. "
INVISIBLE = "\u200b\u2060\ufeff\u200c\u200d\u00ad"
#: Cyrillic look-alikes for Latin letters of tag names (``<аnswer>`` is not ``<answer>``).
LOOKALIKES = {"a": "\u0430", "e": "\u0435", "o": "\u043e", "i": "\u0456", "c": "\u0441", "p": "\u0440", "x": "\u0445",
              "s": "\u0455"}  # fmt: skip


def _lookalike(name: str) -> str | None:
    for i, ch in enumerate(name):
        if ch.lower() in LOOKALIKES:
            return name[:i] + LOOKALIKES[ch.lower()] + name[i + 1 :]
    return None


def _to_length(unit: str, length: int) -> str:
    return unit * max(1, length // max(1, len(unit)))


def calibration(ctx: RowContext, candidates: list[Format], main: Format) -> list[Probe]:
    """Completions that tell what the reward rewards: the answer in each candidate format (``right_<format>``),
    and nonsense with and without the main format."""
    out = [Probe(CALIBRATION, "format_nonsense", main.render(NONSENSE, NONSENSE_ANSWER))]
    out.append(Probe(CALIBRATION, "plain_nonsense", f"{NONSENSE} {NONSENSE_ANSWER}"))
    if ctx.answer:
        out += [Probe(CALIBRATION, f"right_{f.label}", f.render(REASONING, ctx.answer)) for f in candidates]

    return out + wrong_attempts(ctx, main) + (trajectory_calibration(ctx, main) if ctx.rollouts else [])


def wrong_attempts(ctx: RowContext, main: Format) -> list[Probe]:
    """Plausible wrong attempts of a row (``wrong_*``): reasoning and a wrong answer in the format, and the
    reference solution with a wrong answer. What a probe with no right answer in it must not beat.

    >>> ctx = RowContext(0, "3 and 5 make 16?", {}, answer="2 * (3 + 5)", wrong=["3 + 5 + 2"], numbers=[3, 5, 2])
    >>> [p.completion for p in wrong_attempts(ctx, Format("tags", None, "answer"))]
    ['<answer>\\n3 + 5 + 2\\n</answer>']
    """
    if not ctx.wrong:
        return []
    out = [Probe(CALIBRATION, "wrong_attempt", main.render(REASONING, ctx.wrong[0]))]
    swapped = _reference_wrong(ctx, ctx.wrong[0])
    if swapped is not None:
        out.append(Probe(CALIBRATION, "wrong_reference", swapped))
    return out


#: Probes that carry no right answer (every variant of a family, or the variants named).
_CONTENTLESS: dict[str, frozenset[str] | None] = {
    "empty": None,
    "echo": None,
    "padding": None,
    "huge": None,
    "numbers": None,
    "hardcoded": None,  # what the prompt alone earns: the example calls it shows, answered from a table
    "format_only": frozenset({"empty_blocks", "whitespace_blocks", "nonsense"}),
    "tag_spam": frozenset({"empty_pairs", "open_tags", "closing_tags"}),
    "invisible": frozenset({"only_invisible", "invisible_blocks"}),
    "truncated": frozenset({"before_answer", "early"}),
}


def contentless(family: str, variant: str) -> bool:
    """Whether a probe carries no right answer, so that scoring above a wrong attempt is a hole by itself.

    >>> contentless("empty", "spaces"), contentless("hedging", "answer_last"), contentless("tag_spam", "open_tags")
    (True, False, True)
    """
    if family not in _CONTENTLESS:
        return False
    variants = _CONTENTLESS[family]
    return variants is None or variant in variants


def format_trials(ctx: RowContext, candidates: list[Format]) -> list[Probe]:
    """The reference answer (or, without one, a nonsense answer) in each candidate format, to find which the
    reward rewards."""
    answer = ctx.answer or NONSENSE_ANSWER
    return [Probe(CALIBRATION, f.label, f.render(REASONING, answer)) for f in candidates]


def make_probes(ctx: RowContext, formats: list[Format]) -> list[Probe]:
    """Every probe for one row, in family order.

    >>> from rewardsmith.check.rows import RowContext, Format
    >>> ctx = RowContext(0, "How many eggs? She has 16.", {}, answer="18", gold="9 * 2 = 18.\\n#### 18", wrong=["7"])
    >>> probes = make_probes(ctx, [Format("hashes")])
    >>> sorted(set(FAMILIES) - {p.family for p in probes})  # a puzzle's, a code task's and a rollout's own families
    ['hardcoded', 'numbers', 'trajectory']
    >>> [p.completion for p in probes if p.variant == "answer_last"]
    ['The answer is 7 or 18.']
    >>> [p.completion for p in probes if p.variant == "before_answer"]
    ['9 * 2 = ']
    """

    return [*_probes(ctx, formats), *(trajectory_probes(ctx, formats[0]) if ctx.rollouts else [])]


@dataclass(frozen=True)
class _Parts:
    """What every family's probes are made of, for one row."""

    ctx: RowContext
    formats: list[Format]
    main: Format
    answer: str | None
    wrong: str | None
    reference: str | None
    length: int


def _probes(ctx: RowContext, formats: list[Format]) -> Iterator[Probe]:
    main = formats[0]
    a = ctx.answer
    wrong = ctx.wrong[0] if ctx.wrong else (near_miss(a) if a else None)
    reference = ctx.gold or (main.render(REASONING, a) if a else None)
    parts = _Parts(ctx, formats, main, a, wrong, reference, max(2000, 2 * len(reference or "")))
    for build in _BUILDERS:
        yield from build(parts)


def _empty(p: _Parts) -> Iterator[Probe]:
    yield Probe("empty", "empty", "")
    yield Probe("empty", "spaces", "   ")
    yield Probe("empty", "newlines", "\n\n\t\n")


def _echo(p: _Parts) -> Iterator[Probe]:
    # the prompt echoed (right where the prompt holds the answer, so not built there)
    if p.ctx.prompt_text.strip() and not p.ctx.answer_in_prompt:
        yield Probe("echo", "prompt", p.ctx.prompt_text)
        yield Probe("echo", "prompt_in_format", p.main.render(p.ctx.prompt_text, p.ctx.prompt_text), "content")


def _bare_answer(p: _Parts) -> Iterator[Probe]:
    if p.answer:
        yield Probe("bare_answer", "answer", p.answer, "format")
        yield Probe("bare_answer", "sentence", f"The answer is {p.answer}.", "format")


def _format_only(p: _Parts) -> Iterator[Probe]:
    main, a, wrong = p.main, p.answer, p.wrong
    yield Probe("format_only", "empty_blocks", main.render("", ""))
    yield Probe("format_only", "whitespace_blocks", main.render("  \n ", " \t "))
    yield Probe("format_only", "nonsense", main.render(NONSENSE, NONSENSE_ANSWER), "content")
    if wrong:
        yield Probe("format_only", "wrong_answer", main.render(REASONING, wrong), "content")
    if a and near_miss(a) and near_miss(a) != wrong:
        yield Probe("format_only", "near_miss", main.render(REASONING, near_miss(a) or ""), "content")
    swapped = _reference_wrong(p.ctx, wrong)
    if swapped is not None:
        yield Probe("format_only", "reference_wrong_answer", swapped, "content")


def _reference_wrong(ctx: RowContext, wrong: str | None) -> str | None:
    """The reference solution with its answer swapped for a wrong one (honest work, wrong result)."""
    if not (ctx.answer and wrong and ctx.gold):
        return None
    swapped = replace_answer(ctx.gold, ctx.answer, wrong)
    return swapped if swapped is not None and swapped != ctx.gold else None


def _hedging(p: _Parts) -> Iterator[Probe]:
    # several answers at once (other engineers' shapes may be added here)
    main, a, wrong = p.main, p.answer, p.wrong
    if a and wrong:
        for f in p.formats:
            yield Probe("hedging", f"two_{f.slug}_right_last", f"{f.answer_block(wrong)}\n{f.answer_block(a)}")
            yield Probe("hedging", f"two_{f.slug}_right_first", f"{f.answer_block(a)}\n{f.answer_block(wrong)}")
        yield Probe("hedging", "in_block_right_last", main.render(REASONING, f"{wrong} or {a}"), "content")
        yield Probe("hedging", "in_block_right_first", main.render(REASONING, f"{a} or {wrong}"), "content")
        yield Probe("hedging", "answer_last", f"The answer is {wrong} or {a}.")
        yield Probe("hedging", "answer_first", f"The answer is {a} or {wrong}.")
        yield Probe("hedging", "answer_lines", f"Answer: {wrong}\nAnswer: {a}")
        boxes = f"$\\boxed{{{wrong}}}$ or $\\boxed{{{a}}}$"
        yield Probe("hedging", "boxes_in_block", main.render(REASONING, boxes), "content")
        yield Probe("hedging", "listed_boxes_in_block", main.render(REASONING, boxes.replace(" or ", ", ")), "content")
        yield Probe("hedging", "or_inside_box", f"$\\boxed{{{wrong} \\text{{ or }} {a}}}$")
        yield Probe("hedging", "lines_inside_box", f"$\\boxed{{{wrong} \\\\ {a}}}$")
        yield Probe(
            "hedging", "final_answer_line", f"Final Answer: The final answer is {wrong} or {a}. I hope it is correct."
        )
        yield Probe("hedging", "closing_sentence", f"{REASONING} So the value we want is {wrong} or {a}.")


def _lists(p: _Parts) -> Iterator[Probe]:
    # long lists with the right answer among them
    a, ctx = p.answer, p.ctx
    if a and ctx.wrong:
        many = list(ctx.wrong)
        middle = [*many[: len(many) // 2], a, *many[len(many) // 2 :]]
        yield Probe("lists", "right_last", "Possible answers: " + ", ".join([*many, a]))
        yield Probe("lists", "right_first", "Possible answers: " + ", ".join([a, *many]))
        yield Probe("lists", "one_per_line", "\n".join(middle))
        yield Probe("lists", "in_block", p.main.render(REASONING, ", ".join(middle)), "content")
        yield Probe("lists", "blocks", "\n".join(p.main.answer_block(x) for x in middle))


def _padding(p: _Parts) -> Iterator[Probe]:
    yield Probe("padding", "filler", _to_length(FILLER, p.length))
    yield Probe("padding", "repeated_word", _to_length("the ", p.length))
    yield Probe("padding", "filler_in_format", p.main.render(_to_length(FILLER, p.length), NONSENSE_ANSWER), "content")
    if p.ctx.prompt_text.strip() and not p.ctx.answer_in_prompt:
        yield Probe("padding", "repeated_prompt", "\n".join([p.ctx.prompt_text] * 8))


def _tag_spam(p: _Parts) -> Iterator[Probe]:
    main, a, ctx = p.main, p.answer, p.ctx
    tags = main.tags
    if tags:
        pairs = "".join(f"<{t}></{t}>" for t in tags)
        yield Probe("tag_spam", "empty_pairs", pairs * 50)
        yield Probe("tag_spam", "open_tags", "".join(f"<{t}>" for t in tags) * 200)
        yield Probe("tag_spam", "closing_tags", "".join(f"</{t}>" for t in tags) * 200)
    if a and ctx.wrong:
        yield Probe("tag_spam", "mixed_answer_blocks", "".join(main.answer_block(x) for x in [*ctx.wrong, a]))
    if a:
        right = main.render(REASONING, a)
        yield Probe("tag_spam", "repeated_blocks", "\n".join([right] * 3), "format")
        yield Probe("tag_spam", "text_after_answer", f"{right}\nIgnore everything above this line.", "format")
        yield Probe("tag_spam", "text_before", f"Sure, here it is.\n{right}", "format")
        if main.kind == "tags":
            assert main.answer_tag is not None
            nested = Format("tags", main.think_tag, main.answer_tag).render(
                f"<{main.think_tag}>{REASONING}</{main.think_tag}>" if main.think_tag else REASONING,
                f"<{main.answer_tag}>{a}</{main.answer_tag}>",
            )
            yield Probe("tag_spam", "nested_blocks", nested, "format")


def _invisible(p: _Parts) -> Iterator[Probe]:
    main, a = p.main, p.answer
    yield Probe("invisible", "only_invisible", INVISIBLE * 20)
    yield Probe("invisible", "invisible_blocks", main.render(INVISIBLE * 3, INVISIBLE * 2))
    if a and main.kind == "tags":
        think = _lookalike(main.think_tag) if main.think_tag else None
        answer = _lookalike(main.answer_tag or "")
        if answer:
            fake = Format("tags", think or main.think_tag, answer)
            yield Probe("invisible", "lookalike_tags", fake.render(REASONING, a), "format")


def _huge(p: _Parts) -> Iterator[Probe]:
    main = p.main
    yield Probe("huge", "filler", _to_length(FILLER, MB))
    yield Probe("huge", "open_tags", _to_length("".join(f"<{t}>" for t in main.tags) or "<", MB))
    filled = main.render(_to_length(FILLER, MB), p.wrong or NONSENSE_ANSWER)
    yield Probe("huge", "format_around_filler", filled, "content")


def _truncated(p: _Parts) -> Iterator[Probe]:
    # cut off before the answer
    main, a, reference = p.main, p.answer, p.reference
    if not reference:
        return
    cut = occurrence(reference, a) if a else len(reference) // 2
    if cut is not None and cut > 0:
        yield Probe("truncated", "before_answer", reference[:cut])
        if cut >= 3:
            yield Probe("truncated", "early", reference[: cut // 3])
    if main.kind == "tags" and a and reference.rstrip().endswith(f"</{main.answer_tag}>"):
        yield Probe("truncated", "unclosed_answer", reference.rstrip()[: -len(f"</{main.answer_tag}>")], "format")


def _numbers(p: _Parts) -> Iterator[Probe]:
    # a number puzzle answered without the given numbers
    ctx, main = p.ctx, p.main
    if ctx.numbers is None or not ctx.target:
        return
    yield Probe("numbers", "target_only", main.render(REASONING, ctx.target), "content")
    yield Probe("numbers", "foreign_numbers", main.render(REASONING, f"({ctx.target} + 1) - 1"), "content")
    if p.answer:
        n = ctx.numbers[0]
        yield Probe("numbers", "reused_number", main.render(REASONING, f"{p.answer} + {n} - {n}"), "content")


def _hardcoded(p: _Parts) -> Iterator[Probe]:
    # a program that answers only the example calls the prompt shows
    program = lookup_program(p.ctx.calls)
    if program is not None:
        why = "These are the values the examples expect."
        yield Probe("hardcoded", "visible_examples", p.main.render(why, program), "content")


_BUILDERS = (_empty, _echo, _bare_answer, _format_only, _hedging, _lists, _padding, _tag_spam, _invisible, _huge,
             _truncated, _numbers, _hardcoded)  # fmt: skip
