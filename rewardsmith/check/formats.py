"""How completions state their answer, for an audit: the formats probes are written in, and how they are found.

A :class:`Format` is tags (``<think>``/``<answer>``), ``\\boxed{}``, ``####``,
"The answer is", a fenced code block, or a template of the user's.
:func:`candidate_formats` lists the ones the data suggests (the reference
solutions' tags and markers, the tags the prompts mention, a code fence where
the references are programs or the prompts show test calls, the reward's own
``*_tag`` settings, then the common ones); :func:`choose_formats` keeps those
the reward scores best.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rewardsmith.check.tasks import visible_calls
from rewardsmith.core.reward import Reward

__all__ = ["Format", "candidate_formats", "choose_formats"]

_TAG = re.compile(r"<([A-Za-z_][\w-]{0,30})>")


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
        lead, tail = _AROUND.get(self.kind, ("\n", ""))
        return f"{reasoning}{lead}{self.answer_block(answer)}{tail}"

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


#: What goes between the reasoning and the answer block, and after it, in each plain format.
_AROUND = {"fence": ("\n\n", ""), "boxed": ("\n\nThe final answer is $", "$."), "hashes": ("\n", "")}


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
