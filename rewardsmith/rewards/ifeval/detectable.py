"""Content and format constraints: ``detectable_content:number_placeholders``, ``detectable_content:postscript``,
``detectable_format:number_bullet_lists``, ``constrained_response``, ``number_highlighted_sections``,
``multiple_sections``, ``json_format``, ``title``.

Each follows IFEval's definition exactly, including its quirks (a markdown
rule ``---`` counts as a bullet; ``**bold**`` counts as a highlight). Where
IFEval uses a regular expression that backtracks on hostile text
(``\\[.*?\\]``, ``^\\s*\\*`` with ``re.MULTILINE``, ``<<[^\\n]+>>``), the same
matches are found here by a linear scan.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from typing import Any

from rewardsmith.rewards.ifeval.registry import Arg, constraint
from rewardsmith.rewards.ifeval.text import literal_pattern

__all__ = [
    "bullet_lines",
    "constrained_response",
    "count_placeholders",
    "json_format",
    "multiple_sections",
    "number_bullet_lists",
    "number_highlighted_sections",
    "number_placeholders",
    "postscript",
    "title",
]


def count_placeholders(text: str) -> int:
    """The number of ``[...]`` spans as IFEval finds them (``\\[.*?\\]``: the nearest ``]`` on the same line).

    >>> count_placeholders("[name] lives at [address] [unclosed\\n[x]")
    3
    """
    count, position = 0, 0
    while True:
        start = text.find("[", position)
        if start < 0:
            return count
        end = text.find("]", start + 1)
        newline = text.find("\n", start + 1)
        if end < 0:
            return count
        if 0 <= newline < end:  # no ']' on this line: no '[' before the newline can match either
            position = newline + 1
            continue
        count += 1
        position = end + 1


@constraint("detectable_content:number_placeholders", Arg("num_placeholders", "int"))
def number_placeholders(response: str, args: Mapping[str, Any]) -> bool:
    """At least `num_placeholders` placeholders in square brackets, like ``[address]`` (``[]`` counts).

    >>> number_placeholders("Dear [name], see you at [place].", {"num_placeholders": 2})
    True
    """
    return count_placeholders(response) >= args["num_placeholders"]


_PPS = re.compile(r"p\.\s?p\.\s?s")
_PS = re.compile(r"p\.\s?s\.")


def _strip(value: str) -> str:
    return value.strip()


@constraint("detectable_content:postscript", Arg("postscript_marker", "text", _strip))
def postscript(response: str, args: Mapping[str, Any]) -> bool:
    """The marker appears anywhere, in any case: ``P.P.S`` also as ``p. p. s``, ``P.S.`` also as ``p. s.``.

    >>> postscript("Bye.\\n\\np.s. call me", {"postscript_marker": "P.S."})
    True
    """
    text = response.lower()
    marker = args["postscript_marker"]
    if marker == "P.P.S":
        pattern = _PPS
    elif marker == "P.S.":
        pattern = _PS
    else:
        pattern = literal_pattern(marker.lower(), ignore_case=False)
    return pattern.search(text) is not None


# IFEval's bullet patterns are ^\s*\*[^\*].*$ and ^\s*-.*$ with re.MULTILINE. Their \s* crosses blank lines, which
# makes them quadratic on a run of newlines; starting from each line's own first non-blank character instead finds
# the same bullets (the blank lines before it hold no other match) in linear time. After "*", any character but
# "*" may follow, a newline too, and then the match runs to the end of the next line, as IFEval's does.
_STAR_BULLET = re.compile(r"^[^\S\n]*\*(?:[^*\n][^\n]*|\n[^\n]*)", re.MULTILINE)
_DASH_BULLET = re.compile(r"^[^\S\n]*-[^\n]*", re.MULTILINE)


def bullet_lines(text: str, star: bool) -> list[str]:
    """The bullets IFEval counts: lines whose first non-blank character is ``*`` (not ``**``), or ``-``.

    A bare ``*`` line takes the next line with it, as in IFEval.

    >>> text = "* one\\n  * two\\n**bold**\\n- three\\n---"
    >>> len(bullet_lines(text, star=True)), len(bullet_lines(text, star=False))
    (2, 2)
    """
    return (_STAR_BULLET if star else _DASH_BULLET).findall(text)


@constraint("detectable_format:number_bullet_lists", Arg("num_bullets", "int"))
def number_bullet_lists(response: str, args: Mapping[str, Any]) -> bool:
    """Exactly `num_bullets` markdown bullets: lines starting (after spaces) with ``* `` or ``-``.

    >>> number_bullet_lists("Plan:\\n* eat\\n* sleep\\n- repeat", {"num_bullets": 3})
    True
    """
    return len(bullet_lines(response, star=True)) + len(bullet_lines(response, star=False)) == args["num_bullets"]


_OPTIONS = ("My answer is yes.", "My answer is no.", "My answer is maybe.")


@constraint("detectable_format:constrained_response")
def constrained_response(response: str, args: Mapping[str, Any]) -> bool:
    """One of "My answer is yes.", "My answer is no.", "My answer is maybe." appears (case matters).

    >>> constrained_response("Well... My answer is no.", {})
    True
    """
    text = response.strip()
    return any(option in text for option in _OPTIONS)


_HIGHLIGHT = re.compile(r"\*[^\n\*]*\*")
_DOUBLE_HIGHLIGHT = re.compile(r"\*\*[^\n\*]*\*\*")


@constraint("detectable_format:number_highlighted_sections", Arg("num_highlights", "int"))
def number_highlighted_sections(response: str, args: Mapping[str, Any]) -> bool:
    """At least `num_highlights` non-blank ``*highlighted*`` (or ``**highlighted**``) spans on one line.

    >>> number_highlighted_sections("*one* and **two** but not * *", {"num_highlights": 2})
    True
    """
    wanted = args["num_highlights"]
    count = 0
    for pattern, inner in ((_HIGHLIGHT, 1), (_DOUBLE_HIGHLIGHT, 2)):
        for match in pattern.finditer(response):
            if not match.group()[inner:-inner].isspace() and match.end() - match.start() > 2 * inner:
                count += 1
                if count >= wanted:
                    return True
    return count >= wanted


@constraint("detectable_format:multiple_sections", Arg("section_spliter", "text", _strip), Arg("num_sections", "int"))
def multiple_sections(response: str, args: Mapping[str, Any]) -> bool:
    """At least `num_sections` section marks: the splitter word (case matters) followed by a number (``Section 2``).

    >>> multiple_sections("SECTION 1\\nIntro\\nSECTION 2\\nBody", {"section_spliter": "SECTION", "num_sections": 2})
    True
    """
    splitter = literal_pattern(args["section_spliter"], ignore_case=False).pattern
    pattern = _sections_pattern(splitter)
    return sum(1 for _ in pattern.finditer(response)) >= args["num_sections"]


@functools.lru_cache(maxsize=256)
def _sections_pattern(splitter: str) -> re.Pattern[str]:
    return re.compile(r"\s?" + splitter + r"\s?\d+\s?")


_FENCE_PREFIXES = ("```json", "```Json", "```JSON", "```")


@constraint("detectable_format:json_format")
def json_format(response: str, args: Mapping[str, Any]) -> bool:
    """The whole response is JSON, optionally in a markdown fence (```` ```json ... ``` ````).

    >>> json_format('```json\\n{"a": 1}\\n```', {}), json_format('Here: {"a": 1}', {})
    (True, False)
    """
    text = response.strip()
    for prefix in _FENCE_PREFIXES:
        text = text.removeprefix(prefix)
    text = text.removesuffix("```").strip()
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


@constraint("detectable_format:title")
def title(response: str, args: Mapping[str, Any]) -> bool:
    """A non-blank title in double angular brackets on one line, like ``<<poem of joy>>``.

    >>> title("<<My Title>>\\nText", {}), title("<< >> and <<\\n>>", {})
    (True, False)
    """
    # IFEval's <<[^\n]+>> matches at most once per line: from its first "<<" to its last ">>".
    position = 0
    while True:
        start = response.find("<<", position)
        if start < 0:
            return False
        line_end = response.find("\n", start)
        if line_end < 0:
            line_end = len(response)
        end = response.rfind(">>", start, line_end)
        if end >= start + 3 and response[start : end + 2].lstrip("<").rstrip(">").strip():
            return True
        position = line_end + 1
