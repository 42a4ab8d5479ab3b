r"""Containers: the markers around a completion's reasoning and answer, one notion for every reward that reads them.

A container is set as a tag name (``"answer"`` or ``"<answer>"``: ``<answer>``
… ``</answer>``), as a pair of different opening and closing markers
(``["<start_working_out>", "<end_working_out>"]``, Unsloth's form), or as an
opening marker named ``start_X`` / ``begin_X``, whose closing marker is
``<end_X>`` (``"<start_working_out>"`` is understood as that pair). Markers
are matched as written but case-insensitively, so ``<SOLUTION>`` cannot
smuggle in a second block. ``think_format``, ``tag_count``,
``math_accuracy`` and ``gsm8k_accuracy`` all read their ``think_tag`` and
``answer_tag`` settings through :func:`container`: two ``<SOLUTION>`` blocks
are two answers (a hedge) for the accuracy rewards exactly as two
``<answer>`` blocks are.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

from rewardsmith.core.errors import RewardConfigError
from rewardsmith.rewards._text import Tag, tag_name
from rewardsmith.rewards.reasoning import check_delimiters

__all__ = [
    "Container",
    "blocks",
    "checked_containers",
    "container",
    "count",
    "final_part_after",
    "find_markers",
    "last_end",
    "reopened",
]


class Container(NamedTuple):
    """An opening and a closing marker, and the name messages use for them."""

    name: str
    opening: str
    closing: str

    def describe(self, closing: bool) -> str:
        return self.closing if closing else self.opening

    def setting(self) -> str | tuple[str, str]:
        """The setting's normal form: the tag name, or the pair of markers."""
        return self.name if self.closing == f"</{self.name}>" else (self.opening, self.closing)


_PAIRED_PREFIX = re.compile(r"^(?:start|begin)_(.+)$", re.IGNORECASE)


def container(spec: str | Sequence[str], setting: str = "tag") -> Container:
    """The container a setting names (see :func:`_container`); cached, so that rewards may call it per sample."""
    return _container(tuple(spec) if isinstance(spec, list) else spec, setting)


@functools.lru_cache(maxsize=256)
def _container(spec: str | Sequence[str], setting: str = "tag") -> Container:
    """The container a setting names; :class:`ValueError` saying what to write when it names none.

    >>> container("think"), container("<answer>").closing
    (Container(name='think', opening='<think>', closing='</think>'), '</answer>')
    >>> container("<start_working_out>")
    Container(name='start_working_out', opening='<start_working_out>', closing='<end_working_out>')
    >>> container(["<SOLUTION>", "</SOLUTION>"]).setting(), container(["[[", "]]"]).setting()
    ('SOLUTION', ('[[', ']]'))
    """
    if isinstance(spec, (list, tuple)):
        if len(spec) != 2 or not all(isinstance(m, str) and m.strip() for m in spec):
            raise ValueError(f"{setting} as a pair must be [opening, closing], two non-empty markers; got {spec!r}")
        opening, closing = (m.strip() for m in spec)
        if opening.lower() == closing.lower():
            raise ValueError(f"{setting}: the opening and closing markers must differ; got {spec!r}")
        name = opening[1:-1] if opening.startswith("<") and opening.endswith(">") else opening
        return Container(name, opening, closing)
    name = tag_name(spec, setting)
    paired = _PAIRED_PREFIX.match(name)
    if paired:
        return Container(name, f"<{name}>", f"<end_{paired.group(1)}>")
    return Container(name, f"<{name}>", f"</{name}>")


def checked_containers(reward: Any) -> tuple[Container | None, Container | None]:
    """A reward's ``think_tag`` and ``answer_tag`` as containers (``None`` where unset), the settings normalised.

    Anything that names no container is a configuration error, raised when the reward is made.
    """
    found: list[Container | None] = []
    for setting in ("think_tag", "answer_tag"):
        value = getattr(reward, setting)
        if value is None:
            found.append(None)
            continue
        try:
            box = container(value, setting)
        except ValueError as exc:
            raise RewardConfigError(f"reward {reward.name!r}: {exc}") from None
        setattr(reward, setting, box.setting())
        found.append(box)
    return found[0], found[1]


def check_answer_settings(reward: Any) -> None:
    """Normalise an accuracy reward's reading settings when it is made, or raise a clear configuration error.

    Its ``reasoning_delimiters`` become a tuple, its ``think_tag`` and ``answer_tag`` containers' settings; an
    answer reward needs an answer container.
    """
    reward.reasoning_delimiters = check_delimiters(reward.name, reward.reasoning_delimiters)
    if checked_containers(reward)[1] is None:
        raise RewardConfigError(f"reward {reward.name!r}: answer_tag cannot be None (use the default 'answer')")


_PATTERNS: dict[tuple[Container, ...], tuple[re.Pattern[str], dict[str, tuple[str, bool]]]] = {}


def _pattern(containers: tuple[Container, ...]) -> tuple[re.Pattern[str], dict[str, tuple[str, bool]]]:
    cached = _PATTERNS.get(containers)
    if cached is None:
        markers = {c.opening.lower(): (c.name, False) for c in containers}
        markers.update({c.closing.lower(): (c.name, True) for c in containers})
        alternatives = "|".join(_marker_pattern(m) for m in sorted(markers, key=len, reverse=True))
        cached = _PATTERNS[containers] = (re.compile(alternatives, re.IGNORECASE), markers)
    return cached


def _marker_pattern(marker: str) -> str:
    """A marker as a pattern: a tag may have spaces inside its brackets (``<answer >``, ``</ answer>``), and an
    opening tag attributes (``<think method="cot">``, as reward-kit and some chat templates write them)."""
    tag = re.fullmatch(r"<(/?)([^<>\s]{1,60})>", marker)
    if tag is None:
        return re.escape(marker)
    attributes = "" if tag.group(1) else r"(?:[ \t]{1,3}[^<>]{0,200}?)?"
    return rf"<[ \t]{{0,3}}{tag.group(1)}[ \t]{{0,3}}{re.escape(tag.group(2))}{attributes}[ \t]{{0,3}}>"


_TAG_KEY = re.compile(r"<[ \t]*(/?)[ \t]*([^\s<>]+?)(?:[ \t][^<>]*)?>")


def _marker_key(found: str) -> str:
    """The marker a match stands for: spaces and an opening tag's attributes left out, lower case."""
    tag = _TAG_KEY.fullmatch(found)
    return f"<{tag.group(1)}{tag.group(2)}>".lower() if tag else re.sub(r"[ \t]", "", found).lower()


def iter_markers(text: str, containers: tuple[Container, ...]) -> Iterator[Tag]:
    """Every opening and closing marker of ``containers`` in ``text``, in order, one at a time.

    >>> [(t.name, t.closing) for t in iter_markers("<start_w>a<END_W>", (container("<start_w>"),))]
    [('start_w', False), ('start_w', True)]
    >>> [(t.name, t.closing) for t in iter_markers("<answer >5</ answer>", (container("answer"),))]
    [('answer', False), ('answer', True)]
    >>> [(t.name, t.closing) for t in iter_markers('<think method="cot">x</think><thinking>', (container("think"),))]
    [('think', False), ('think', True)]
    """
    pattern, markers = _pattern(containers)
    for match in pattern.finditer(text):
        found = markers.get(_marker_key(match.group(0)))
        if found is None:  # a case-insensitive match whose lower-case form differs (rare Unicode folds)
            found = next(v for k, v in markers.items() if re.fullmatch(_marker_pattern(k), match.group(0), re.I))
        yield Tag(found[0], found[1], match.start(), match.end())


def find_markers(text: str, containers: tuple[Container, ...], limit: int | None = None) -> list[Tag]:
    """The markers :func:`iter_markers` finds, as a list (with ``limit``, at most ``limit + 1``).

    >>> len(find_markers("<think>" * 100, (container("think"),), limit=3))
    4
    """
    out = []
    for tag in iter_markers(text, containers):
        out.append(tag)
        if limit is not None and len(out) > limit:
            break
    return out


def count(text: str, box: Container, closing: bool) -> int:
    """How often the opening (or closing) marker occurs, read as :func:`iter_markers` reads markers.

    >>> count("<SOLUTION>a</solution><solution>", container("solution"), False)
    2
    >>> count('<answer type="final">4</answer>', container("answer"), False)
    1
    """
    return sum(tag.closing == closing for tag in iter_markers(text, (box,)))


def blocks(text: str, box: Container, limit: int | None = None) -> list[str] | None:
    """The contents of each well-formed block, or ``None`` when markers are unbalanced or nested.

    >>> blocks("<SOLUTION>17</SOLUTION> <SOLUTION>18</SOLUTION>", container("SOLUTION"))
    ['17', '18']
    >>> blocks("<answer>4", container("answer")) is None, blocks("none", container("answer"))
    (True, [])
    """
    out: list[str] = []
    open_at: int | None = None
    for tag in iter_markers(text, (box,)):
        if not tag.closing:
            if open_at is not None:
                return None
            open_at = tag.end
        else:
            if open_at is None:
                return None
            out.append(text[open_at : tag.start])
            open_at = None
            if limit is not None and len(out) > limit:
                return out
    return None if open_at is not None else out


def last_end(text: str, box: Container, closing: bool = False) -> int | None:
    """Where the last opening (or closing) marker ends; ``None`` if there is none.

    >>> last_end("<think>a</think>b</THINK>c", container("think"), closing=True)
    25
    """
    marker = box.describe(closing)
    if text.isascii() and marker.isascii():
        at = text.lower().rfind(marker.lower())
        return None if at == -1 else at + len(marker)
    end = None
    for tag in iter_markers(text, (box,)):
        if tag.closing == closing:
            end = tag.end
    return end


def final_part_after(text: str, reasoning: Container) -> str:
    """The part of a completion after its reasoning: after the last closing marker (all of it if none).

    >>> final_part_after("<start_w>maybe 5<end_w> so 6", container("start_w"))
    ' so 6'
    """
    end = last_end(text, reasoning, closing=True)
    return text if end is None else text[end:]


def reopened(text: str, part: str, box: Container) -> str:
    """``part``, the end of ``text`` from a revision on, with the block it starts inside opened again.

    A revision inside an answer block ("... must be incorrect. However, ...") leaves that block's closing
    marker in ``part``; the block still holds the answer, so its opening marker is put back in front.

    >>> reopened("<answer>7 is wrong. It is 8.</answer>", "It is 8.</answer>", container("answer"))
    '<answer>It is 8.</answer>'
    >>> reopened("<answer>7</answer> wrong: 8", "wrong: 8", container("answer"))
    'wrong: 8'
    """
    cut = len(text) - len(part)
    if cut <= 0:
        return part
    tags = find_markers(text[:cut], (box,))
    return box.opening + part if tags and not tags[-1].closing else part
