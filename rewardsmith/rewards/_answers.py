r"""How a completion states its final answer in words: answer statements, closing sentences, revisions, hedges.

Shared by ``math_accuracy`` and ``gsm8k_accuracy``. The rules:

* **Answer statements** are what follows "the answer is", "Answer:",
  "Final Answer: The final answer is" (the Minerva / Llama form, read as one
  statement), "**Final answer:**", or an answer heading (``# Answer`` on its
  own line, PRM800K's form), up to the end of its sentence or line. Markdown
  emphasis around the answer is not part of it.
* **A closing sentence** (``_closing``) states the answer when nothing else does: the last
  sentence (ending in ``.`` or ``!``: never a question, nor a sentence cut
  off) stating values after "is", "are", "was", "equals" or ``=`` outside
  any formula, or opening with "so", "therefore", "thus", "hence". A bare
  number in the middle of the text is never an answer.
* **A revision** (":func:`revision_start`"): a completion that states an
  answer, then says it was wrong ("wait", "that's wrong", "mistake",
  "actually", ...) and states another, is read from its last revision on.
  Only the answers after it count, and they must still agree with each other,
  so a policy gains nothing by revising: it ends with one final statement.
* **Alternatives** (":func:`alternatives`"): one stated answer that offers
  several values (``18 \text{ or } 20``, ``18 \\ 20``, ``18 \hspace{1cm} 20``,
  ``18 \mid 20``, ``x = 18 = 20``) is several answers; if they differ, the
  completion hedged.

All of it runs in linear time (bounded quantifiers, statements cut at their sentence).
"""

from __future__ import annotations

import itertools
import re

from rewardsmith.rewards._equivalence import list_parts
from rewardsmith.rewards._text import MAX_ANSWERS, matches_near, number_spans

__all__ = [
    "ANSWER_PHRASE",
    "MAX_STATEMENT_CHARS",
    "alternatives",
    "answer_statements",
    "before_end_of_turn",
    "final_part",
    "masked",
    "math_spans",
    "phrase_matches",
    "retracts",
    "revision_after",
    "revision_start",
    "stated_value",
    "stated_values",
    "statement",
    "statement_values",
    "without_emphasis",
    "without_rounding",
]

#: A statement longer than this is not read for values (it is prose, and reading it would cost more than it is worth).
MAX_STATEMENT_CHARS = 2000

_EMPHASIS = r"(?:\*\*|__)?"
ANSWER_PHRASE = re.compile(
    rf"(?:the\s{{1,20}})?(?:final\s{{1,20}})?answer{_EMPHASIS}\s{{0,20}}(?:is\b\s{{0,20}}:?|:|=|equals\b)"
    rf"(?:\s{{0,20}}{_EMPHASIS})\s{{0,20}}"
    r"(?:the\s{1,20}final\s{1,20}answer\s{1,20}is\b\s{0,20}:?\s{0,20})?"
    r"|(?:^|(?<=\n))[ \t]{0,20}(?:#{1,6}[ \t]{0,20}|\*\*)(?:final[ \t]{1,20})?answer[ \t]{0,20}:?(?:\*\*)?"
    r"[ \t]{0,20}:?[ \t]{0,20}\n\s{0,40}"
    r"|(?:^|(?<=\n))[ \t]{0,20}(?:final[ \t]{1,20})?answer[ \t]{0,3}(?=\$|\\\[|\\\()"  # "Answer $9$" opening a line
    r"|(?<!#)####(?!#)[ \t]{0,20}(?![ \t]|[A-Za-z]{2})",  # ``#### Total Area`` is a Markdown heading
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<!\\)[.!?;](?=\s|$)|\n")  # ``\!`` is TeX spacing, not an exclamation


_END_OF_TURN = re.compile(r"<\|(?:im_start|im_end|eot_id|end_of_text|endoftext|end)\|>|<\|start_header_id\|>")


def before_end_of_turn(text: str) -> str:
    """``text`` up to the first end-of-turn token of a chat template (what follows it is not the completion's).

    >>> before_end_of_turn("So it is 12. I hope it is correct. <|im_start|>user Next question"), before_end_of_turn("7")
    ('So it is 12. I hope it is correct. ', '7')
    """
    end = _END_OF_TURN.search(text)
    return text[: end.start()] if end and text[: end.start()].strip() else text


def without_emphasis(text: str) -> str:
    """``text`` without Markdown emphasis and code marks around it (``**36**``, ``*36*``, ```` `36` ````).

    >>> without_emphasis("**36**"), without_emphasis(r"\\( \\frac{13}{2} \\)**"), without_emphasis("x*y")
    ('36', '\\\\( \\\\frac{13}{2} \\\\)', 'x*y')
    """
    text = text.replace("**", "").replace("__", "").strip()
    if len(text) > 1 and text[0] == text[-1] and text[0] in "*`_":
        text = text[1:-1].strip()
    return text


def statement(text: str, start: int) -> str:
    r"""The statement that begins at ``start``: up to the end of its sentence or line, trailing punctuation removed.

    >>> statement("The answer is 0.5. Next, 7", 14), statement("is 18 or 20\nmore", 3)
    ('0.5', '18 or 20')
    """
    end = _SENTENCE_END.search(text, start)
    said = text[start : end.start() if end else len(text)].strip().rstrip(" .;,!")
    return without_emphasis(said).rstrip(" .;,!")


#: Words every answer phrase contains: a text without any of them is not scanned (a fast test on long texts).
PHRASE_WORDS = ("answer", "####")


def phrase_matches(
    text: str, pattern: re.Pattern[str] = ANSWER_PHRASE, words: tuple[str, ...] = PHRASE_WORDS, limit: int = MAX_ANSWERS
) -> list[re.Match[str]]:
    """The first ``limit + 1`` matches of ``pattern``; none without scanning when ``text`` has none of ``words``.

    >>> [m.group(0) for m in phrase_matches("x. The answer is 5")]
    ['The answer is ']
    """
    key = (text, pattern, words, limit)
    last = _LAST_SCAN[0]
    if last[0] == key:  # the same text is scanned for phrases several times while one answer is read
        return list(last[1])
    found = matches_near(text, pattern, words, _REACH, _LONGEST, limit)
    _LAST_SCAN[0] = (key, tuple(found))  # one assignment: threads never see half of it
    return found


#: How far before its word (``answer``, ``####``) an answer phrase can start (``\n## Final  Answer``: 71), and
#: how far from its start it can read (the longest, every gap at its widest: 259 characters).
_REACH = 96
_LONGEST = 300
_LAST_SCAN: list[tuple] = [(None, ())]


def answer_statements(
    text: str, pattern: re.Pattern[str] = ANSWER_PHRASE, limit: int = MAX_ANSWERS, words: tuple[str, ...] = PHRASE_WORDS
) -> list[str] | None:
    r"""What follows each explicit answer statement ("the answer is", "Final Answer:"), up to its sentence's end.

    A statement also ends where the next answer phrase begins, so each part of
    the text is read once (linear time on any input). ``None`` when there are
    more than ``limit`` statements: at that scale it is hedging, not an answer.

    >>> answer_statements("so the final answer is $\\frac{1}{2}$.\nThanks")
    ['$\\frac{1}{2}$']
    >>> answer_statements("Answer: 3\nAnswer: 18"), answer_statements("The answer is 4. Then we check it.")
    (['3', '18'], ['4'])
    >>> answer_statements("Final Answer: The final answer is $5$. I hope it is correct.")
    ['$5$']
    >>> answer_statements("# Answer\n\n5"), answer_statements("**Final answer:** 5"), answer_statements("is **36**")
    (['5'], ['5'], [])
    >>> answer_statements("no statement"), answer_statements("answer: 1 " * 60)
    ([], None)
    >>> answer_statements("The answer is:\n\\[\n\\frac{1}{2}\n\\]"), answer_statements("### Final Answer\n$$\n7\n$$")
    (['\\frac{1}{2}'], ['7'])
    """
    matches = phrase_matches(text, pattern, words, limit)
    if len(matches) > limit:
        return None
    ends = [m.start() for m in matches[1:]] + [len(text)]
    found = []
    for match, end in zip(matches, ends):
        said = statement(text[match.end() : end], 0)
        if said in ("", "\\[", "$$"):  # "The answer is:" with the formula displayed on the next lines
            display = _DISPLAY_NEXT.match(text, match.end(), end)
            said = next(g for g in display.groups() if g is not None).strip() if display else said
        found.append(said)
    return [s for s in found if s]


_DISPLAY_NEXT = re.compile(r"\s{0,40}(?:\\\[(.{1,2000}?)\\\]|\$\$(.{1,2000}?)\$\$)", re.DOTALL)


_MATH_SPAN = re.compile(  # ``\$`` inside a formula is a dollar sign, not the formula's end
    r"\$\$((?:\\.|[^$\\]){1,2000})\$\$|\$((?:\\.|[^$\\]){1,2000})\$|\\\((.{1,2000}?)\\\)|\\\[(.{1,2000}?)\\\]",
    re.DOTALL,
)


def math_spans(text: str) -> list[str]:
    r"""The formulas of a statement (``$..$``, ``$$..$$``, ``\(..\)``, ``\[..\]``), in order.

    >>> math_spans(r"is $3$ or \(4\), not $$5$$"), math_spans(r"costs $\$32,\!348$.")
    (['3', '4', '5'], ['\\$32,\\!348'])
    """
    if len(text) > MAX_STATEMENT_CHARS:
        return []
    return [next(g for g in m.groups() if g is not None).strip() for m in _MATH_SPAN.finditer(text)]


_CONNECTIVE = re.compile(  # "18 or 20", "18; 20", "18, or 20", "18 (or 20)", "18, possibly 20", "18 to 20"
    r"\s(?:or|and)\s|;|,\s{0,5}(?:or|and)\s|,?\s{0,5}\(\s{0,3}or\s|,?\s{1,5}(?:possibly|perhaps|maybe)\s"
    r"|(?<=\d)\s{1,3}to\s{1,3}(?=[-\d])"
)
_MATH_WORDS = frozenset(
    ("sqrt", "pi", "sin", "cos", "tan", "cot", "sec", "csc", "log", "ln", "exp", "arcsin", "arccos", "arctan", "infty")
)


def _leading_math(part: str) -> str:
    """The math at the start of a plain-text part: up to the first English word (``5 apples`` is ``5``)."""
    kept = []
    for token in part.split():
        word = token.strip(".,;:!?()")
        if len(word) >= 2 and word.isalpha() and word.lower() not in _MATH_WORDS:
            break
        kept.append(token)
    if not kept and len(part.split()) == 1:
        return part.strip(" .,;:!?")  # one word is an answer as written (a name, a day, a choice)
    return " ".join(kept).rstrip(" .,;:").lstrip(" ,;:")  # a leading point is a decimal's (.35)


def statement_values(said: str) -> list[str]:
    r"""The values a statement offers: its formulas, or else the math of each part between "or"/"and".

    >>> statement_values(r"$5$ (as required)"), statement_values("5 apples"), statement_values(r"$3$ or $4$")
    (['5'], ['5'], ['3', '4'])
    >>> statement_values("12 or 13 inches"), statement_values("we first compute the sum")
    (['12', '13'], [])
    """
    said = without_emphasis(said)
    if len(said) > MAX_STATEMENT_CHARS:
        return [said]
    said = stated_value(said)
    spans = math_spans(said)
    if len(spans) > 1 and all(_LIST_GAP.fullmatch(gap) for gap in _gaps(said)):
        # one list written across formulas ("are $-1, 0,$ and $1$"): its items
        spans = [item for span in spans for item in (list_parts(span.rstrip(" ,")) or [span.rstrip(" ,")])]
    if spans:
        return spans
    parts = [_leading_math(p) for p in _CONNECTIVE.split(said)]
    return [p for p in parts if p]


def stated_values(said: str) -> list[str]:
    r"""The values an explicit answer statement offers: :func:`statement_values`, or its one number when it is prose.

    >>> stated_values("Jane started growing Sphere 3 hours ago"), stated_values("she walked 2 miles in 3 hours")
    (['3'], [])
    """
    values = statement_values(said)
    if values or len(said) > MAX_STATEMENT_CHARS:
        return values
    numbers = {key: (start, end) for key, start, end in number_spans(said)}
    if len(numbers) != 1:
        return []
    start, end = next(iter(numbers.values()))
    return [said[start:end].strip()]


#: Where a value starts: a formula, a number (after "approximately", "exactly", Markdown emphasis).
_VALUE_START = re.compile(
    r"[\s:]{0,5}(?:\*\*|__)?\s{0,3}(?:(?:approximately|exactly|about|equal\s{1,3}to)\s{1,3})?"
    r"(?:\$|\\\(|\\\[|[-\u2212]?\.?\d)",
    re.IGNORECASE,
)
_VERB = re.compile(r"\b(?:is|are|was|were|equals|be)\b(?:\s{0,3}\((?:is|are)\))?", re.IGNORECASE)
#: What qualifies a value after it: a condition, a reason, where it occurs ("$13$, occurring where $y$ is least").
_QUALIFIER = re.compile(
    r",?\s{0,5}\b(?:for|where|when|whenever|since|because|as|which|occurring|attained|achieved|given|if|provided"
    r"|with|so\s{1,3}that|such\s{1,3}that|satisfying|assuming|at)\b",
    re.IGNORECASE,
)
_LIST_GAP = re.compile(r"\s{0,5}(?:,\s{0,5})?(?:and\s{1,5})?")


def stated_value(said: str) -> str:
    r"""The part of a statement that states its value: from the value its verb states, without qualifiers after it.

    >>> stated_value(r"The probability that all 3 are aces, given 39 cards, is \(1\)"), stated_value("5 for all n")
    ('\\(1\\)', '5')
    """
    said = without_emphasis(said)
    return said if len(said) > MAX_STATEMENT_CHARS else _qualifiers_cut(_from_value(said)).strip()


def _from_value(said: str) -> str:
    """A statement in prose ("the smallest $n$ such that ... is $n = 10$") from the value its verb states."""
    if _VALUE_START.match(said):
        return said
    blank = masked(said)
    for verb in _VERB.finditer(blank):
        if _VALUE_START.match(said, verb.end()):
            return said[verb.end() :].lstrip(" :")
    return said


def _qualifiers_cut(said: str) -> str:
    """A statement without what qualifies its value (``5 for all $n$``, ``$13$, occurring where ...``)."""
    first = _VALUE_START.search(said)
    if first is None:
        return said
    blank = masked(said)
    value_end = first.end()
    span = _MATH_SPAN.match(said, first.end() - 2) or _MATH_SPAN.match(said, first.end() - 1)
    if span:
        value_end = span.end()
    qualifier = _QUALIFIER.search(blank, value_end)
    return said[: qualifier.start()] if qualifier else said


def _gaps(said: str) -> list[str]:
    """The text between consecutive formulas of a statement."""
    found = list(_MATH_SPAN.finditer(said))
    return [said[a.end() : b.start()] for a, b in itertools.pairwise(found)]


def masked(text: str) -> str:
    """``text`` with every formula blanked (same length), so that words inside formulas are not read as prose.

    >>> masked("the value of $x$ is 5")
    'the value of     is 5'
    """
    return _MATH_SPAN.sub(lambda m: " " * len(m.group(0)), text)


_RETRACTION = re.compile(  # a check ("double-check", "verify") revises nothing
    r"\b(?:wait|hmm+|oops|actually|correction|on second thought|hold on|mistake|wrong|incorrect|error"
    r"|re-?consider|re-?evaluate|re-?examine|re-?calculate|redo|recompute)\b",
    re.IGNORECASE,
)


def retracts(text: str) -> bool:
    """Whether ``text`` says anything that can start a revision ("wait", "actually", "mistake", ...).

    >>> retracts("So it is 7. Actually, 8."), retracts("So it is 7.")
    (True, False)
    """
    return _RETRACTION.search(text) is not None


def revision_after(text: str, last_answer: int) -> int | None:
    """Where a revision after the last stated answer begins ("... is 7. Actually it's 8."), or ``None``.

    >>> text = "**Final answer:** 7. Actually it's 8."
    >>> text[revision_after(text, 2):], revision_after("It is 7. Thanks!", 6)
    ("Actually it's 8.", None)
    """
    marker = None
    for found in _RETRACTION.finditer(text, last_answer + 1):
        marker = found
    return None if marker is None else marker.start()


def revision_start(text: str, first_answer: int, last_answer: int) -> int:
    """Where the last revision between the first and the last stated answer begins (0 if there is none).

    >>> text = "So it is 17. Wait, that's wrong: it is 18."
    >>> text[revision_start(text, 9, 39):]
    "Wait, that's wrong: it is 18."
    >>> revision_start("It is 17. It is 18.", 6, 16)
    0
    """
    marker = None
    for found in _RETRACTION.finditer(text, first_answer + 1, last_answer):
        marker = found
    if marker is None:
        return 0
    stop = text.rfind(". ", 0, marker.start())
    sentence = max(stop + 2 if stop >= 0 else 0, text.rfind("\n", 0, marker.start()) + 1)
    return sentence if sentence > first_answer else marker.start()


_TEXT_WORDS = re.compile(r"\\(?:text\w{0,6}|mbox|mathrm)\s{0,5}\{([^{}]{0,200})\}")
_SEPARATOR = re.compile(
    r"\\\\|\\[hv]space\*?\s{0,5}\{[^{}]{0,40}\}|\\q?quad\b|\\mid\b|\\text\s{0,5}\{\s{0,5}\}|(?<![\w\\])or(?!\w)"
    r"|\\(?:Rightarrow|implies|Longrightarrow|lor|vee|cr|enspace)(?![a-zA-Z])"
    r"|(?<=\d)\s{0,3}(?:~|\\to(?![a-zA-Z])|\\approx(?![a-zA-Z]))\s{0,3}(?=-?\d)"  # "18~20"; "12~cm" is 12 cm
)
#: Spacing after a list's comma (``a = 1, \quad b = 2``) separates nothing the comma does not.
_LIST_SPACING = re.compile(r",\s{0,3}(?:(?:\\q?quad\b|\\[,;: ]|~)\s{0,3}){1,4}")
_ENVIRONMENT = re.compile(r"\\begin\{(\w{1,20}\*?)\}.{0,2000}?\\end\{\1\}", re.DOTALL)
_PLACED = re.compile(r"\x00(\d+)\x00")
_EDGES = re.compile(r"^(?:\s|\\[,;:! ])+|(?:\s|\\[,;:! ])+$")


_ROUNDING = re.compile(r"\s{0,3}\\approx\s{0,3}[-\u2212]?\d{1,30}(?:\.\d{1,30})?\s{0,3}$")
_EXACT_FORM = ("/", "\\frac", "\\dfrac", "\\sqrt", "\\pi", "^", "\\log", "\\ln")


def without_rounding(answer: str) -> str:
    r"""An exact value without the number it rounds to after it (``\frac{1}{3} \approx 0.33`` is ``\frac{1}{3}``).

    Between two plain numbers (``18 \approx 20``) ``\approx`` offers alternatives instead.

    >>> without_rounding(r"x = \frac{1}{3} \approx 0.333"), without_rounding(r"2\sqrt{2}\approx2.83")
    ('x = \\frac{1}{3}', '2\\sqrt{2}')
    >>> without_rounding(r"18 \approx 20"), without_rounding(r"\pi \approx x")
    ('18 \\approx 20', '\\pi \\approx x')
    """
    cut = _ROUNDING.search(answer) if "\\approx" in answer else None
    if cut is None:
        return answer
    exact = answer[: cut.start()].rsplit("=", 1)[-1]
    return answer[: cut.start()].rstrip() if any(form in exact for form in _EXACT_FORM) else answer


_DOUBLED = re.compile(r"(?<!\\)\\\\(?=[A-Za-z]{2})")
_SINGLE_COMMAND = re.compile(r"(?<!\\)\\[A-Za-z]")


def unescaped(answer: str) -> str:
    r"""An answer whose every command is written with a doubled backslash (an escaped string) as LaTeX.

    >>> unescaped(r"\\left( 3, \\frac{\\pi}{2} \\right)"), unescaped(r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}")
    ('\\left( 3, \\frac{\\pi}{2} \\right)', '\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}')
    """
    if "\\\\" not in answer or _SINGLE_COMMAND.search(answer):
        return answer
    return _DOUBLED.sub(lambda _: "\\", answer)


def alternatives(answer: str) -> list[str]:
    r"""The values one stated answer offers: ``[answer]``, or several when it offers alternatives.

    >>> alternatives(r"18 \; \text{(or 20)}"), alternatives(r"18\text{ or 20}"), alternatives(r"18 \\ 20")
    (['18', '20'], ['18', '20'], ['18', '20'])
    >>> alternatives(r"18 \hspace{1cm} 20"), alternatives(r"18 \mid 20"), alternatives(r"\frac{1}{2}")
    (['18', '20'], ['18', '20'], ['\\frac{1}{2}'])
    >>> alternatives(r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}"), alternatives(r"5\text{ cm}")
    (['\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}'], ['5\\text{ cm}'])
    >>> alternatives(r"a_{37} = 19, \quad a_3 = 2"), alternatives(r"a = 1 \quad b = 2")
    (['a_{37} = 19, \\quad a_3 = 2'], ['a = 1', 'b = 2'])
    >>> alternatives(r"3 \\ \begin{pmatrix} 1 \\ 2 \end{pmatrix}")
    ['3', '\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}']
    """
    if len(answer) > MAX_STATEMENT_CHARS:
        return [answer]
    answer = without_rounding(answer)
    environments = [m.group(0) for m in _ENVIRONMENT.finditer(answer)]
    if environments:  # a matrix's rows are no alternatives: set each environment aside while splitting
        answer = _ENVIRONMENT.sub(lambda m: f"\x00{environments.index(m.group(0))}\x00", answer)

    def words(match: re.Match[str]) -> str:
        inner = match.group(1)
        if not re.search(r"(?<!\w)(?:or|and)(?!\w)", inner):
            return match.group(0)
        return " or " + re.sub(r"(?<!\w)(?:or|and)(?!\w)|[()]", " ", inner)

    spread = _SEPARATOR.split(_LIST_SPACING.sub(", ", _TEXT_WORDS.sub(words, answer)))
    parts = [_EDGES.sub("", p) for p in spread]
    parts = [_PLACED.sub(lambda m: environments[int(m.group(1))], p) for p in parts if p]
    return parts if len(parts) > 1 else [_PLACED.sub(lambda m: environments[int(m.group(1))], answer)]


def final_part(
    text: str, markers: tuple[str, ...], pattern: re.Pattern[str] = ANSWER_PHRASE, words: tuple[str, ...] = PHRASE_WORDS
) -> str:
    """``text`` from its last revision on (:func:`revision_start`); answers are found by ``markers`` and ``pattern``.

    >>> final_part("#### 17. Oops, I made a mistake: #### 18", ("####",))
    'Oops, I made a mistake: #### 18'
    """
    spans = [(text.find(m), text.rfind(m)) for m in markers if m in text]
    phrases = [m.start() for m in phrase_matches(text, pattern, words)]
    if phrases:
        spans.append((phrases[0], phrases[-1]))
    if not spans:
        return text
    first, last = min(f for f, _ in spans), max(end for _, end in spans)
    return text[revision_start(text, first, last) :] if first < last else text
