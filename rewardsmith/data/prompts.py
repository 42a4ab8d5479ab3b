"""Prompts: templates over a row's columns, the system message, conversational or plain-text shape.

TRL's trainers take a ``prompt`` column that is either plain text or a list of
chat messages; chat models need the messages (the trainer applies the model's
chat template to them). :func:`build_prompt` makes either shape from the user's
text (or a conversation), inserting the system prompt exactly once.
:class:`PromptTemplate` renders the user's text from the row's columns, as a
Python format string (``"Using {nums}, make {target}."``) or a Jinja template
(``"{{ question }}{% if hint %} Hint: {{ hint }}{% endif %}"``).
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from rewardsmith.core.errors import DatasetError
from rewardsmith.core.inputs import content_text
from rewardsmith.core.names import did_you_mean

__all__ = ["PromptTemplate", "TemplateFormat", "build_prompt", "with_user_text"]

TemplateFormat = Literal["auto", "format", "jinja"]
Messages = list[dict[str, Any]]

_JINJA = re.compile(r"\{%|\{#|\{\{-?\s*[A-Za-z_]")
_FIELD_BASE = re.compile(r"[^.\[]*")


def _format_fields(template: str) -> set[str]:
    fields: set[str] = set()
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise DatasetError(
            f"the format_template {template!r} is not a valid Python format string ({exc}). Write a literal brace "
            "as '{{' or '}}', or use a Jinja template ('{{ column }}')"
        ) from exc
    for _literal, name, spec, _conversion in parsed:
        if name is None:
            continue
        base = _FIELD_BASE.match(name).group(0)  # type: ignore[union-attr]
        if not base or base.isdigit():
            raise DatasetError(
                f"the format_template {template!r} has a positional field '{{{name}}}'; name a column instead, "
                "e.g. '{question}' (write a literal brace as '{{' or '}}')"
            )
        fields.add(base)
        if spec:
            fields |= _format_fields(spec)
    return fields


def _jinja_environment() -> Any:
    from jinja2 import StrictUndefined
    from jinja2.sandbox import SandboxedEnvironment

    return SandboxedEnvironment(undefined=StrictUndefined, keep_trailing_newline=True, autoescape=False)


@dataclass
class PromptTemplate:
    """The user message rendered from a row's columns: a Python format string or a Jinja template.

    ``template_format="auto"`` reads the template as Jinja when it has
    ``{{ name }}``, ``{% ... %}`` or ``{# ... #}``, else as a format string.
    Every column of the row is a variable, and ``prompt`` is the text the
    converter made (the question, the problem, ...). Jinja runs sandboxed, and
    a variable the row lacks is an error, never an empty string.

    >>> PromptTemplate("Using the numbers {nums}, make {target}.").render({"nums": [3, 5], "target": 8})
    'Using the numbers [3, 5], make 8.'
    >>> t = PromptTemplate("{{ prompt }}{% if hint %} (hint: {{ hint }}){% endif %}")
    >>> t.kind, sorted(t.fields), t.render({"prompt": "2+2?", "hint": "even"})
    ('jinja', ['hint', 'prompt'], '2+2? (hint: even)')
    """

    source: str
    template_format: TemplateFormat = "auto"
    kind: str = field(init=False)
    fields: frozenset[str] = field(init=False)
    _compiled: Any = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.source, str) or not self.source.strip():
            raise DatasetError(f"format_template must be a non-empty string, got {self.source!r}")
        if self.template_format not in ("auto", "format", "jinja"):
            raise DatasetError(f"template_format must be 'auto', 'format' or 'jinja', got {self.template_format!r}")
        if self.template_format == "auto":
            self.kind = "jinja" if _JINJA.search(self.source) else "format"
        else:
            self.kind = self.template_format
        self.fields = frozenset(self._jinja_fields() if self.kind == "jinja" else _format_fields(self.source))

    def _jinja_fields(self) -> set[str]:
        from jinja2 import TemplateSyntaxError, meta

        try:
            parsed = _jinja_environment().parse(self.source)
        except TemplateSyntaxError as exc:
            raise DatasetError(f"the format_template is not a valid Jinja template: {exc} (line {exc.lineno})") from exc
        return set(meta.find_undeclared_variables(parsed))

    def check(self, columns: Iterable[str]) -> None:
        """Raise :class:`~rewardsmith.DatasetError` if the template names a column not in ``columns``.

        >>> PromptTemplate("Make {target} from {numbers}.").check(["prompt", "nums", "target"])
        Traceback (most recent call last):
        ...
        rewardsmith.core.errors.DatasetError: the format_template names 'numbers', which the data does not have. ...
        """
        have = set(columns)
        missing = sorted(self.fields - have)
        if not missing:
            return
        hints = "".join(did_you_mean(name, have) for name in missing)
        how = (
            " (it was read as a Jinja template; pass template_format='format' for a Python format string)"
            if self.kind == "jinja" and self.template_format == "auto"
            else ""
        )
        raise DatasetError(
            f"the format_template names {', '.join(map(repr, missing))}, which the data does not have.{hints} "
            f"Variables available: {', '.join(sorted(have))}{how}"
        )

    def render(self, context: Mapping[str, Any]) -> str:
        """The template filled in with ``context`` (a row's columns)."""
        try:
            if self.kind == "format":
                return self.source.format_map(context)
            if self._compiled is None:
                self._compiled = _jinja_environment().from_string(self.source)
            return self._compiled.render(**context)
        except (KeyError, IndexError, AttributeError, ValueError, TypeError) as exc:
            raise DatasetError(f"the format_template could not be filled in: {type(exc).__name__}: {exc}") from exc
        except Exception as exc:  # jinja2's UndefinedError, SecurityError
            if type(exc).__module__.startswith("jinja2"):
                raise DatasetError(f"the format_template could not be filled in: {exc}") from exc
            raise

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_compiled"] = None
        return state


def with_user_text(prompt: str | Messages, text: str) -> str | Messages:
    """``prompt`` with its user text replaced: the text itself, or the last user message's content.

    >>> with_user_text([{"role": "user", "content": "old"}], "new")
    [{'role': 'user', 'content': 'new'}]
    """
    if isinstance(prompt, str):
        return text
    messages = [dict(m) for m in prompt]
    for message in reversed(messages):
        if message.get("role") == "user":
            message["content"] = text
            return messages
    raise DatasetError("the conversation has no user message for the format_template to fill in")


def build_prompt(
    prompt: str | Messages, system_prompt: str | None = None, conversational: bool = True
) -> str | Messages:
    """The ``prompt`` value TRL takes: chat messages, or plain text; the system prompt exactly once.

    A conversation that already starts with a system message gets
    ``system_prompt`` in its place (never two system messages). Plain text puts
    the system prompt first, then a blank line, then the user's text; a
    multi-turn conversation cannot be made plain text.

    >>> build_prompt("2 + 2?", "Answer briefly.")
    [{'role': 'system', 'content': 'Answer briefly.'}, {'role': 'user', 'content': '2 + 2?'}]
    >>> build_prompt("2 + 2?", "Answer briefly.", conversational=False)
    'Answer briefly.\\n\\n2 + 2?'
    """
    if isinstance(prompt, str):
        messages: Messages = [{"role": "user", "content": prompt}]
    else:
        messages = [dict(m) for m in prompt]
    if system_prompt:
        if messages and messages[0].get("role") == "system":
            messages[0]["content"] = system_prompt
        else:
            messages.insert(0, {"role": "system", "content": system_prompt})
    if conversational:
        return messages
    roles = [m.get("role") for m in messages]
    if roles not in (["user"], ["system", "user"]):
        raise DatasetError(
            f"a plain-text prompt cannot hold this conversation (roles {roles}); use conversational=True, "
            "so that the trainer applies the model's chat template"
        )
    parts = [content_text(m.get("content")) for m in messages]
    return "\n\n".join(parts)
