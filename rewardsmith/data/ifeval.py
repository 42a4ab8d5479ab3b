"""The ``ifeval`` converter: IFEval-format rows (prompt + verifiable constraints) for the ``ifeval`` reward."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rewardsmith.core.errors import DatasetError
from rewardsmith.data.converters import Converter, cell_text, short_repr
from rewardsmith.rewards.ifeval import row_constraints

__all__ = ["IFEvalData"]


@dataclass
class IFEvalData(Converter):
    """IFEval rows: `prompt`, and the constraints in `instruction_id_list` + `kwargs` (or one `ground_truth` column).

    Reads IFEval's layout (``google/IFEval``: ``prompt``,
    ``instruction_id_list``, ``kwargs``) or, with ``ground_truth_key``, a
    Tulu 3 / open-instruct style column holding
    ``{"instruction_id": [...], "kwargs": [...]}``. Writes ``prompt``,
    ``instruction_id_list`` and ``kwargs`` (the columns the ``ifeval`` reward
    reads; ``kwargs`` holds each constraint's checked arguments). Every
    constraint is checked while
    converting: an unknown id or a missing argument stops here, naming the
    row, before any training starts. A prompt column holding chat messages is
    taken as the conversation.

    >>> out = IFEvalData().convert({"prompt": "Write a haiku without commas.",
    ...                             "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]})
    >>> out["instruction_id_list"], out["kwargs"]
    (['punctuation:no_comma'], [{}])
    >>> IFEvalData().convert({"prompt": "Hi", "instruction_id_list": ["punctuation:no_coma"], "kwargs": [{}]})
    Traceback (most recent call last):
    ...
    rewardsmith.rewards.ifeval.registry.ConstraintError: unknown IFEval constraint id 'punctuation:no_coma'. ...
    """

    prompt_key: str = "prompt"
    instructions_key: str = "instruction_id_list"
    kwargs_key: str = "kwargs"
    ground_truth_key: str | None = None

    @property
    def input_columns(self) -> tuple[str, ...]:
        if self.ground_truth_key:
            return (self.prompt_key, self.ground_truth_key)
        return (self.prompt_key, self.instructions_key)

    @property
    def output_columns(self) -> tuple[str, ...]:
        return ("prompt", "instruction_id_list", "kwargs")

    @property
    def removed_columns(self) -> tuple[str, ...]:
        sources = [self.ground_truth_key] if self.ground_truth_key else [self.instructions_key, self.kwargs_key]
        return tuple(s for s in sources if s and s not in self.output_columns)

    def convert(self, row: Mapping[str, Any]) -> dict[str, Any]:
        prompt = row.get(self.prompt_key)
        if not (isinstance(prompt, list) and prompt and all(isinstance(m, Mapping) for m in prompt)):
            prompt = cell_text(row, self.prompt_key, "prompt")
        if self.ground_truth_key:
            constraints = row_constraints(row.get(self.ground_truth_key))
        else:
            ids = row.get(self.instructions_key)
            if ids is None:
                raise DatasetError(f"the {self.instructions_key!r} column holds {short_repr(ids)}, not a list of ids")
            constraints = row_constraints(ids, row.get(self.kwargs_key))
        if not constraints:
            raise DatasetError("the row has no constraints: an IFEval row needs at least one")
        return {
            "prompt": prompt,
            "instruction_id_list": [c.id for c in constraints],
            "kwargs": [dict(c.args) for c in constraints],
        }
