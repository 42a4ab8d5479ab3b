"""``llm_judge`` and ``reference_fidelity``: a chat model grades each completion against a rubric.

Both send one request per completion to an OpenAI-compatible endpoint (see
:class:`~rewardsmith.judges.base.ChatJudge` for the endpoint, concurrency,
retry, cache and cost settings) and map the judge's score to [0, 1].
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from rewardsmith.core.injection import Column, Computed, Input
from rewardsmith.core.inputs import Batch
from rewardsmith.core.registry import register_reward
from rewardsmith.core.result import RewardResult
from rewardsmith.judges.base import ChatJudge
from rewardsmith.judges.templates import (
    DEFAULT_SYSTEM_PROMPT,
    DEFAULT_TEMPLATE,
    FIDELITY_RUBRIC,
    FIDELITY_TEMPLATE,
    defuse,
    format_prompt,
    render,
    row_columns,
)
from rewardsmith.judges.verdict import fmt_number

__all__ = ["LLMJudge", "ReferenceFidelity"]

DEFAULT_RUBRIC = (
    "Helpfulness: the response answers what was asked, correctly, completely and clearly, without padding. "
    "Wrong or made-up content weighs more than style."
)


@register_reward("llm_judge")
@dataclass(kw_only=True, eq=False)
class LLMJudge(ChatJudge):
    """A chat model grades each completion against a rubric; the score is mapped to [0, 1].

    The judge sees the rubric, the prompt (a conversation with its roles,
    system prompt included), the completion and, when the data has the
    ``reference_column`` (``reference`` by default), the reference answer. Its
    verdict is read from a JSON object (``{"score": 8}``) or a ``Score: 8``
    line (:func:`~rewardsmith.judges.verdict.parse_verdict`) and mapped from
    ``scale`` (1 to 10 by default) to [0, 1]. A judge that fails for good, or
    answers without a readable verdict, gives ``None`` for that sample, never 0.

    Settings: ``rubric``, ``template`` (Jinja2; variables ``rubric``,
    ``prompt``, ``completion``, ``reference``, ``scale_min``, ``scale_max``,
    ``row``), ``system_prompt``, ``reference_column``, and the endpoint
    settings of :class:`~rewardsmith.judges.base.ChatJudge` (``base_url``,
    ``model``, ``api_key_env``, ``max_concurrency``, ``requests_per_minute``,
    ``cache``, ...). Columns: ``reference`` (optional, configurable).

    Here against a local OpenAI-compatible server that grades by length:

    >>> from rewardsmith.http.testing import LocalChatServer
    >>> def grade(request):  # the server's answer to each request
    ...     return '{"reason": "ok", "score": %d}' % min(10, len(request.block("response")))
    >>> with LocalChatServer(grade) as server:
    ...     judge = LLMJudge(base_url=server.base_url, model="local-judge", api_key_env=None, cache=None)
    ...     scores = judge.explain(prompts=["Say hi", "Say hi"], completions=["hi", "hello there"])
    >>> [round(r.score, 3) for r in scores], scores[0].metrics["prompt_tokens"]
    ([0.111, 1.0], 120.0)
    """

    default_name = "llm_judge"
    rubric: str = DEFAULT_RUBRIC
    template: str = DEFAULT_TEMPLATE
    system_prompt: str | None = DEFAULT_SYSTEM_PROMPT
    reference_column: str = "reference"

    def __post_init__(self) -> None:
        super().__post_init__()
        self.template_for(self.template, "template")  # a syntax error is a config error now, not at the first batch

    def inputs(self) -> dict[str, Input]:
        # The template names the columns it reads as row.<column>; one that uses `row` as a whole gets them all.
        columns = row_columns(self.template)
        row = Computed(functools.partial(_row_values, columns=columns), columns or ())
        return {"reference": Column(self.reference_column), "row": row}

    def messages_for(
        self, completion: str, prompt_messages: Any = None, reference: Any = None, row: dict[str, Any] | None = None
    ) -> list[dict[str, str]]:
        """The chat messages sent to the judge for one sample.

        >>> judge = LLMJudge(model="m", rubric="Be polite.", system_prompt=None)
        >>> print(judge.messages_for("Thanks!", "Say thanks")[0]["content"][:60])
        Grade the response against the rubric.
        <BLANKLINE>
        Rubric:
        Be polite.
        """
        variables = {
            "rubric": self.rubric,
            "prompt": defuse(format_prompt(prompt_messages)),
            "completion": defuse(completion),
            "reference": None if reference is None else defuse(str(reference)),
            "scale_min": fmt_number(self.scale[0]),
            "scale_max": fmt_number(self.scale[1]),
            "row": dict(row or {}),
        }
        user = render(self.template_for(self.template, "template"), variables)
        messages = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
        return [*messages, {"role": "user", "content": user}]

    def preflight(self, row: dict[str, Any]) -> None:
        self.messages_for(row["completion"], row.get("prompt_messages"), row.get("reference"), row.get("row"))

    async def score(
        self, completion: str, prompt_messages: Any = None, reference: Any = None, row: Any = None
    ) -> RewardResult:
        """Ask the judge about one sample (``row``: the dataset columns the template reads)."""
        messages = self.messages_for(completion, prompt_messages, reference, row)
        judgement = await self.judge(messages, quoted=(completion, defuse(completion)))
        score = self.require_verdict(judgement)
        return RewardResult(score, judgement.verdict.reason, judgement.metrics())


@register_reward("reference_fidelity")
@dataclass(kw_only=True, eq=False)
class ReferenceFidelity(LLMJudge):
    """No hallucination against a reference answer: a judge checks each claim of the completion against it.

    Scores 1 when every claim is supported by the reference (``reference_column``,
    ``reference`` by default; required), 0 when the main claim contradicts it
    or is invented; ``None`` for a row with no reference (the reward does not
    apply). Omissions are not hallucinations, but an empty answer earns nothing.
    All settings of ``llm_judge`` apply.

    >>> from rewardsmith.http.testing import LocalChatServer
    >>> def grade(request):  # a stand-in judge: is the reference's number in the response?
    ...     return "Score: 10" if request.block("reference") in request.block("response") else "Score: 1"
    >>> with LocalChatServer(grade) as server:
    ...     fidelity = ReferenceFidelity(base_url=server.base_url, model="m", api_key_env=None, cache=None,
    ...                                  reference_column="answer")
    ...     fidelity.explain(completions=["It opened in 1889.", "It opened in 1901."],
    ...                      answer=["1889", "1889"])[1].score
    0.0
    """

    default_name = "reference_fidelity"

    rubric: str = FIDELITY_RUBRIC
    template: str = FIDELITY_TEMPLATE

    async def score(  # type: ignore[override]
        self, completion: str, reference: Any, prompt_messages: Any = None, row: Any = None
    ) -> RewardResult:
        if reference is None or (isinstance(reference, str) and not reference.strip()):
            return RewardResult(None, "no reference answer for this row")
        return await super().score(completion, prompt_messages, reference, row)


def _row_values(batch: Batch, columns: tuple[str, ...] | None) -> list[dict[str, Any]]:
    """For each sample, the named columns the batch has (``None``: every column), what a template reads as ``row``."""
    names = batch.column_names if columns is None else columns
    present = [c for c in names if batch.has_column(c) and len(batch.raw_columns[c]) == len(batch)]
    lists = [batch.column(c) for c in present]
    return [dict(zip(present, values)) for values in zip(*lists)] if present else [{} for _ in range(len(batch))]
