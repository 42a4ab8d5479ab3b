"""``prepare_dataset``: a source (Hub name, local file, rows) to a dataset TRL's trainers take as-is.

The steps, each done once for every converter:

1. load one split (:mod:`rewardsmith.data.loading`);
2. shuffle (with a seed) and keep the first ``max_samples`` rows;
3. check before converting anything: the converter's source columns, the
   template's variables, the first row's conversion (so mistakes fail in a
   second, not an hour into a streaming run);
4. convert every row (``datasets.map``, order kept): the converter's columns,
   the template, the system prompt, conversational or plain text. A row in
   verl's layout (``reward_model: {style, ground_truth}``) also gets its
   ``ground_truth`` (and ``answer``) columns from ``reward_model``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rewardsmith.core.errors import DatasetError
from rewardsmith.core.extras import require_extra
from rewardsmith.core.inputs import completion_text, prompt_text
from rewardsmith.data.converters import Converter, verl_reference
from rewardsmith.data.loading import AnyDataset, describe_source, load_source
from rewardsmith.data.prompts import PromptTemplate, TemplateFormat, build_prompt, with_user_text
from rewardsmith.data.registry import get_converter, list_converters

__all__ = ["prepare_dataset"]


def prepare_dataset(
    source: Any,
    split: str = "train",
    *,
    config: str | None = None,
    converter: str | Converter | Any = "generic",
    system_prompt: str | None = None,
    format_template: str | None = None,
    template_format: TemplateFormat = "auto",
    conversational: bool = True,
    max_samples: int | None = None,
    shuffle: bool = False,
    seed: int = 0,
    streaming: bool = False,
    shuffle_buffer: int = 10_000,
    task: str | None = None,
    load_kwargs: Mapping[str, Any] | None = None,
    **converter_settings: Any,
) -> AnyDataset:
    """A dataset ready for ``GRPOTrainer(train_dataset=...)`` and for scoring with rewards.

    Every row has ``prompt`` (chat messages, or plain text with
    ``conversational=False``) and the columns its rewards read (``answer``,
    ``nums``, ``target``, ...); other columns pass through. Row count and
    order are kept (``shuffle`` and ``max_samples`` aside).

    Args:
        source: a Hub dataset name, a local ``.jsonl``/``.json``/``.parquet``/``.csv``
            file or a folder (``save_to_disk`` or data files), a list of dicts,
            or a ``datasets.Dataset``/``DatasetDict``.
        split: the split to load; for a single local file, the name it goes by
            (slices such as ``"train[:100]"`` work for files and the Hub).
        config: the Hub dataset's configuration (``"main"`` for ``openai/gsm8k``).
        converter: a registered name (``gsm8k``, ``math``, ``countdown``,
            ``generic``, ``chat``, or your own), a ``Converter``, or a function
            ``f(row) -> dict``. Its settings are the extra keyword arguments
            (``prompt_key="instruction"``, ``answer_key="output"``...).
        system_prompt: put once at the start of every prompt (replacing a
            system message the data already has).
        format_template: the user message, as a Python format string or a Jinja
            template over the row's columns; ``{prompt}`` is the converter's text.
        template_format: ``"auto"`` (Jinja when the template has ``{{ x }}`` or
            ``{% %}``), ``"format"`` or ``"jinja"``.
        conversational: chat messages (what chat models need) or plain text.
        max_samples: keep only this many rows (the first ones, or a random
            sample with ``shuffle``).
        shuffle, seed: shuffle the rows first, reproducibly.
        streaming: return an ``IterableDataset`` that reads as it goes (for
            data too large to prepare up front); the first row is still checked
            now, later rows as they are read. ``shuffle_buffer`` sets how many
            rows a streaming shuffle mixes.
        task: fill a ``task`` column with this value (for multi-task routing
            when several prepared datasets are concatenated).
        load_kwargs: extra arguments for ``datasets.load_dataset``.

    >>> from rewardsmith.data import prepare_dataset
    >>> rows = [{"question": "2 + 3?", "answer": "2 + 3 = 5\\n#### 5"}]
    >>> ds = prepare_dataset(rows, converter="gsm8k", system_prompt="Answer with a number.")
    >>> ds[0]["prompt"]
    [{'role': 'system', 'content': 'Answer with a number.'}, {'role': 'user', 'content': '2 + 3?'}]
    >>> ds[0]["answer"], ds.column_names
    ('5', ['question', 'answer', 'prompt', 'solution'])
    """
    require_extra("eval", "preparing a dataset")
    conv = get_converter(converter, **converter_settings)
    template = PromptTemplate(format_template, template_format) if format_template is not None else None
    _check_options(max_samples, task)
    label = describe_source(source) + (f", split {split!r}" if isinstance(source, (str, os.PathLike)) else "")
    dataset = load_source(source, split, config=config, streaming=streaming, **dict(load_kwargs or {}))
    dataset = _subset(dataset, shuffle, seed, shuffle_buffer, max_samples, streaming)

    first = _first_row(dataset, label)
    columns = list(dataset.column_names or first)
    mapper = _RowMapper(conv, template, system_prompt, conversational, task, label)
    first_out = mapper.validate(first, columns)
    removed = [c for c in conv.removed_columns if c in columns]
    name = converter if isinstance(converter, str) else type(conv).__name__
    if streaming:
        return dataset.map(mapper, batched=True, with_indices=True, remove_columns=removed or None)
    return dataset.map(
        mapper,
        batched=True,
        with_indices=True,
        remove_columns=removed or None,
        load_from_cache_file=False,
        new_fingerprint=mapper.fingerprint(dataset._fingerprint),
        features=_output_features(dataset.features, first_out, conv, conversational, removed),
        desc=f"Preparing prompts ({name})",
    )


def _check_options(max_samples: Any, task: Any) -> None:
    if max_samples is not None and (isinstance(max_samples, bool) or not isinstance(max_samples, int)):
        raise DatasetError(f"max_samples must be a positive integer or None, got {max_samples!r}")
    if max_samples is not None and max_samples < 1:
        raise DatasetError(f"max_samples must be at least 1, got {max_samples}")
    if task is not None and not isinstance(task, str):
        raise DatasetError(f"task must be a string (the value of the task column), got {task!r}")


def _subset(
    dataset: AnyDataset, shuffle: bool, seed: int, shuffle_buffer: int, max_samples: int | None, streaming: bool
) -> AnyDataset:
    """The rows to prepare: shuffled first when asked, then the first ``max_samples``."""
    if shuffle:
        dataset = dataset.shuffle(seed=seed, buffer_size=shuffle_buffer) if streaming else dataset.shuffle(seed=seed)
    if max_samples is not None:
        dataset = dataset.take(max_samples) if streaming else dataset.select(range(min(max_samples, len(dataset))))
    return dataset


def _first_row(dataset: AnyDataset, label: str) -> dict[str, Any]:
    from datasets import IterableDataset

    if isinstance(dataset, IterableDataset):
        first = next(iter(dataset.take(1)), None)
    else:
        first = dataset[0] if len(dataset) else None
    if first is None:
        raise DatasetError(f"the dataset is empty: {label} has no rows")
    return dict(first)


@dataclass
class _RowMapper:
    """Converts batches of rows for ``datasets.map``: converter, template, system prompt, shape."""

    converter: Converter
    template: PromptTemplate | None
    system_prompt: str | None
    conversational: bool
    task: str | None
    label: str

    def validate(self, first: dict[str, Any], columns: list[str]) -> dict[str, Any]:
        """Check the columns, the template and the first row before converting everything; the row's output."""
        missing = self.converter.missing_inputs(columns)
        if missing:
            raise DatasetError(
                f"{self.label}: the converter ({type(self.converter).__name__}) needs the column(s) "
                f"{', '.join(missing)}, which the data does not have. Columns present: {', '.join(columns)}. "
                f"{_suggest_converters(columns, self.converter)}"
            )
        if self.template is not None:
            self.template.check([*columns, *self.converter.output_columns, "prompt", *(["task"] if self.task else [])])
        out = self.convert(first, 0)
        absent = [c for c in self.converter.output_columns if c not in out]
        if absent:
            raise DatasetError(
                f"{self.label}: the converter declares the column(s) {', '.join(map(repr, absent))} "
                f"but did not write them for row 0 (it wrote: {', '.join(out)})"
            )
        return out

    def convert(self, row: dict[str, Any], index: int) -> dict[str, Any]:
        """The output columns for one row (``index`` is for error messages)."""
        try:
            out = {**verl_reference(row), **self.converter.convert(row)}
            if "prompt" not in out or out["prompt"] is None:
                raise DatasetError("the converter wrote no 'prompt'")
            if self.task is not None:
                out["task"] = self.task
            prompt = out["prompt"]
            if self.template is not None:
                text = self.template.render({**row, **out, "prompt": prompt_text(prompt)})
                prompt = with_user_text(prompt, text)
            out["prompt"] = build_prompt(prompt, self.system_prompt, self.conversational)
            if not self.conversational:
                for column in self.converter.message_columns:
                    if out.get(column) is not None:
                        out[column] = completion_text(out[column])
        except DatasetError as exc:
            raise DatasetError(f"{self.label}, row {index}: {exc} (row: {_preview(row)})") from exc
        return out

    def __call__(self, batch: dict[str, list[Any]], indices: list[int]) -> dict[str, list[Any]]:
        names = list(batch)
        outs = [self.convert({k: batch[k][i] for k in names}, index) for i, index in enumerate(indices)]
        keys = list(dict.fromkeys(key for out in outs for key in out))
        return {key: [out.get(key) for out in outs] for key in keys}

    def fingerprint(self, source_fingerprint: str) -> str:
        """A name for the converted data's cache file (the data is always recomputed, never read back)."""
        text = f"{source_fingerprint}|{self!r}"
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def _output_features(
    source: Any, first_out: dict[str, Any], converter: Converter, conversational: bool, removed: list[str]
) -> Any:
    """The converted data's column types, from the first converted row, or ``None`` to let ``datasets`` infer them.

    ``datasets`` fixes a column's type from the first batch it writes, so a
    column whose first thousand values are ``None`` (a chat converter's
    ``completion`` where the first conversations have no assistant turn) could
    not hold values after that. The converter knows which of its columns hold
    messages, so when the first row has ``None`` there, the types are set here
    (from the first row for the other columns). Otherwise, the usual case, and
    whenever a type is still unknown, ``datasets`` infers them from each batch.
    """
    import pyarrow as pa
    from datasets import Features

    untyped = [column for column in converter.message_columns if first_out.get(column) is None]
    if not untyped:
        return None

    def infer(row: dict[str, Any]) -> Features:
        return Features.from_arrow_schema(pa.Table.from_pylist([row]).schema)

    out = infer(first_out)
    empty: Any = [{"role": "assistant", "content": ""}] if conversational else ""
    for column in untyped:
        out[column] = infer({column: empty})[column]
    features = {name: feature for name, feature in source.items() if name not in removed}
    features.update(out)
    if any(_has_null(feature) for feature in Features(features).arrow_schema.types):
        return None
    return Features(features)


def _has_null(arrow_type: Any) -> bool:
    import pyarrow as pa

    if pa.types.is_null(arrow_type):
        return True
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return _has_null(arrow_type.value_type)
    if pa.types.is_struct(arrow_type):
        return any(_has_null(arrow_type.field(i).type) for i in range(arrow_type.num_fields))
    return False


def _preview(row: Mapping[str, Any], limit: int = 120) -> str:
    text = repr(dict(row))
    return text if len(text) <= limit else text[: limit - 4] + "...}"


def _suggest_converters(columns: list[str], current: Converter) -> str:
    fits = []
    for name in list_converters():
        try:
            candidate = get_converter(name)
        except DatasetError:
            continue
        if type(candidate) is not type(current) and candidate.input_columns and not candidate.missing_inputs(columns):
            fits.append(name)
    hint = f"The converter(s) {', '.join(map(repr, fits))} fit these columns. " if fits else ""
    return hint + "Otherwise set the converter's column settings (e.g. prompt_key=...) to the names your data uses."
