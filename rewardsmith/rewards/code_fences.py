"""Fenced code blocks in a completion, found in one pass over its lines (linear time on any text).

A block opens with a line of three or more backticks (or tildes), optionally
indented, followed by an info string whose first word names the language
(```` ```python ````); it closes at a line of at least as many of the same
characters and nothing else. A block left open runs to the end of the text
(as in CommonMark). The backend code of a completion is then the last (or
first, or all) of the blocks tagged with the requested language; untagged
blocks count when no block is tagged with it; blocks of other languages never.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from rewardsmith.sandbox.languages import LANGUAGES, language

__all__ = ["EXTRACT_CHOICES", "Block", "extract_code", "fenced_blocks"]

EXTRACT_CHOICES = ("last", "first", "all", "raw")


@dataclass(frozen=True)
class Block:
    """One fenced block: its language tag (lower case, ``""`` when untagged), its code, and whether it was closed."""

    tag: str
    code: str
    closed: bool = True


def _fence(line: str) -> tuple[str, int, str] | None:
    """``(character, length, info string)`` when ``line`` opens a fence."""
    stripped = line.lstrip(" \t")
    if not stripped or stripped[0] not in "`~":
        return None
    char = stripped[0]
    length = len(stripped) - len(stripped.lstrip(char))
    if length < 3:
        return None
    info = stripped[length:].strip()
    if char == "`" and "`" in info:
        return None
    return char, length, info


def _spans(lines: list[str]) -> Iterator[tuple[str, int, int, bool]]:
    """``(tag, first line, end line, closed)`` of each fenced block, the lines being those of its code."""
    opened: tuple[str, int, str] | None = None
    start = 0
    for number, raw in enumerate(lines):
        line = raw[:-1] if raw.endswith("\r") else raw
        if opened is None:
            opened, start = _fence(line), number + 1
            continue
        char, length, info = opened
        stripped = line.strip(" \t")
        if len(stripped) >= length and stripped.startswith(char * length) and not stripped.strip(char):
            yield _tag(info), start, number, True
            opened = None
    if opened is not None:
        yield _tag(opened[2]), start, len(lines), False


def _code(lines: list[str], start: int, end: int) -> str:
    return "\n".join(line[:-1] if line.endswith("\r") else line for line in lines[start:end])


def _blank(lines: list[str], start: int, end: int) -> bool:
    return not any(line.strip() for line in lines[start:end])


def fenced_blocks(text: str) -> list[Block]:
    """Every fenced block of ``text``, in order.

    >>> fenced_blocks("Here:\\n```python\\nprint(1)\\n```\\nand\\n~~~\\nx\\n~~~")
    [Block(tag='python', code='print(1)', closed=True), Block(tag='', code='x', closed=True)]
    >>> fenced_blocks("```cpp\\nint main() {}")
    [Block(tag='cpp', code='int main() {}', closed=False)]
    """
    lines = text.split("\n")
    return [Block(tag, _code(lines, start, end), closed) for tag, start, end, closed in _spans(lines)]


def _tag(info: str) -> str:
    word = info.split(None, 1)[0] if info.strip() else ""
    return word.strip("{}.").lower()


def _tag_language(tag: str) -> str | None:
    for lang in LANGUAGES.values():
        if tag in lang.fence_tags:
            return lang.name
    return None


def extract_code(completion: str, lang: str = "python", extract: str = "last") -> tuple[str, str] | None:
    """The code to run and its language, or ``None`` when the completion has none.

    ``lang`` is a language name, or ``"auto"``: the language of the chosen block
    (blocks of no known language are skipped). ``extract``: ``last``, ``first``,
    ``all`` (every matching block, joined) or ``raw`` (the whole completion).

    >>> extract_code("```python\\nx = 1\\n```\\n```js\\nlet y;\\n```\\n```python\\nx = 2\\n```")
    ('x = 2', 'python')
    >>> extract_code("```\\nprint(3)\\n```"), extract_code("no code"), extract_code("```c++\\nint x;\\n```", "auto")
    (('print(3)', 'python'), None, ('int x;', 'cpp'))
    """
    if extract == "raw":
        return completion, language(lang).name if lang != "auto" else "python"
    wanted = None if lang == "auto" else language(lang).name
    lines = completion.split("\n")
    tagged: list[tuple[int, int, str]] = []  # the blocks of the language (every language with "auto")
    untagged: list[tuple[int, int, str]] = []
    for tag, start, end, _closed in _spans(lines):
        found = _tag_language(tag)
        kept = tagged if (found is not None and (wanted is None or found == wanted)) else None
        if kept is None and tag == "" and wanted is not None:
            kept, found = untagged, wanted
        if kept is None or _blank(lines, start, end):
            continue
        if extract == "first" and kept:
            continue
        if extract == "last":
            kept.clear()
        kept.append((start, end, found))
    chosen = tagged or untagged
    if not chosen:
        return None
    if extract == "all":
        last = chosen[-1][2]
        return "\n\n".join(_code(lines, start, end) for start, end, name in chosen if name == last), last
    start, end, name = chosen[0]
    return _code(lines, start, end), name
