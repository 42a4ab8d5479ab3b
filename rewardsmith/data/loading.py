"""Loading one split of a dataset: from the Hugging Face Hub, local files, a saved folder, or rows in memory.

Everything goes through ``datasets`` (``load_dataset``, ``load_from_disk``);
what this module adds is deciding which call a source needs and turning the
failures ``datasets`` reports vaguely (an offline Hub, an unknown split, a
malformed JSON Lines file, an empty file) into errors that say what to do.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from rewardsmith.core.errors import DatasetError
from rewardsmith.core.extras import require_extra
from rewardsmith.core.plugins import load_plugins
from rewardsmith.data.jsonfiles import is_blank_file, json_problem

if TYPE_CHECKING:
    from datasets import Dataset, IterableDataset

__all__ = ["FILE_TYPES", "AnyDataset", "describe_source", "load_source", "register_source_scheme"]

AnyDataset = Union["Dataset", "IterableDataset"]

#: Local file types and the ``datasets`` builder that reads each.
FILE_TYPES = {".jsonl": "json", ".json": "json", ".parquet": "parquet", ".csv": "csv"}

_SCHEMES: dict[str, Callable[[str], Any]] = {}
_SCHEME = re.compile(r"^([A-Za-z][\w\-]+):(?!//)(.+)$")
_HUB_NAME = re.compile(r"^[A-Za-z0-9][\w.\-]*(/[\w.\-]+)?$")
_SPLIT_NAME = re.compile(r"^[\w.\-]+")
_SPLIT_LIST = re.compile(r"(?:Should be one of|Available splits:)\s*\[([^\]]*)\]")
_LOCAL_HINT = (
    "If you have the data locally, pass its path instead: a .jsonl, .json, .parquet or .csv file, or a folder "
    "written by Dataset.save_to_disk (e.g. prepare_dataset('data/gsm8k_train.jsonl', converter='gsm8k'))."
)


def describe_source(source: Any) -> str:
    """A short name for ``source`` in messages.

    >>> describe_source("openai/gsm8k"), describe_source([{"prompt": "hi"}])
    ("'openai/gsm8k'", 'a list of 1 row')
    """
    if isinstance(source, (str, os.PathLike)):
        return repr(str(source))
    if isinstance(source, list):
        return f"a list of {len(source)} row{'s' * (len(source) != 1)}"
    return type(source).__name__


def register_source_scheme(scheme: str, resolve: Callable[[str], Any]) -> None:
    """Let sources be named ``scheme:rest``: ``resolve(rest)`` gives what to load instead (a path, rows, a dataset).

    Integrations register their schemes on import (``fireworks:ACCOUNT/ID``
    reads a dataset back from Fireworks). Registering a scheme again replaces it.

    >>> register_source_scheme("inline", lambda text: [{"prompt": p} for p in text.split("|")])
    >>> list(load_source("inline:2+2?|3+3?")["prompt"])
    ['2+2?', '3+3?']
    """
    if not re.fullmatch(r"[A-Za-z][\w\-]+", scheme):
        raise DatasetError(f"a source scheme is a word of two or more letters, digits, '_' or '-', got {scheme!r}")
    _SCHEMES[scheme] = resolve


def load_source(
    source: Any,
    split: str = "train",
    *,
    config: str | None = None,
    streaming: bool = False,
    **load_kwargs: Any,
) -> AnyDataset:
    """One split of ``source`` as a ``datasets.Dataset`` (an ``IterableDataset`` when ``streaming``).

    ``source`` is a Hub dataset name (``config`` picks its configuration), a
    local ``.jsonl``/``.json``/``.parquet``/``.csv`` file (one file is one
    split, named by ``split``; slices like ``"train[:100]"`` work), a folder
    written by ``save_to_disk`` or holding data files, a list of dicts, or a
    ``Dataset``/``DatasetDict`` already loaded, or ``scheme:rest`` for a
    scheme registered with :func:`register_source_scheme` (``fireworks:ACCOUNT/ID``).
    Other keyword arguments go to
    ``datasets.load_dataset`` (``revision``, ``data_files``, ``token``, ...).

    >>> load_source([{"question": "2+2?", "answer": "4"}, {"question": "3+3?"}])
    Dataset({
        features: ['question', 'answer'],
        num_rows: 2
    })
    """
    require_extra("eval", "loading a dataset")
    if not isinstance(split, str) or not split.strip():
        raise DatasetError(f"split must be a split name such as 'train' or 'test', got {split!r}")
    if streaming and "[" in split:
        raise DatasetError(
            f"split slices like {split!r} do not work with streaming=True; pass split={_base(split)!r} "
            "and max_samples= instead"
        )
    if isinstance(source, str):
        source = _resolve_scheme(source)
    if isinstance(source, list):
        return _from_rows(source, streaming)
    if isinstance(source, (str, os.PathLike)):
        text = os.fspath(source).strip()
        path = Path(text).expanduser()
        if path.exists():
            return _from_path(path, split, config, streaming, load_kwargs)
        if not isinstance(source, str) or not _HUB_NAME.match(text) or path.suffix.lower() in FILE_TYPES:
            raise DatasetError(
                f"no such file or folder: {text!r} (relative paths are resolved from {Path.cwd()}). "
                "Give an existing local path or a Hugging Face Hub dataset name such as 'openai/gsm8k'."
            )
        return _from_hub(text, config, split, streaming, load_kwargs)
    return _from_object(source, split, streaming)


def _resolve_scheme(source: str) -> Any:
    match = _SCHEME.match(source.strip())
    if match is None or Path(source).expanduser().exists():
        return source
    scheme, rest = match.groups()
    load_plugins()  # plug-ins register their schemes (fireworks:) when loaded
    if scheme not in _SCHEMES:
        known = ", ".join(f"{name}:" for name in sorted(_SCHEMES)) or "none"
        raise DatasetError(
            f"unknown source scheme {scheme + ':'!r} in {source!r}. Registered schemes: {known}; otherwise give a "
            "local path or a Hugging Face Hub dataset name such as 'openai/gsm8k'."
        )
    return _SCHEMES[scheme](rest)


def _from_rows(rows: list[Any], streaming: bool) -> AnyDataset:
    from datasets import Dataset

    if not rows:
        raise DatasetError("the dataset is empty: the list of rows has no rows; pass at least one dict")
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise DatasetError(f"row {i} of the list is {type(row).__name__}, not a dict of column values")
    columns = list(dict.fromkeys(key for row in rows for key in row))  # every row's keys, first-seen order
    try:
        dataset = Dataset.from_dict({key: [row.get(key) for row in rows] for key in columns})
    except UnicodeEncodeError as exc:
        raise DatasetError(
            f"cannot make a dataset from these rows: a text holds {exc.object[exc.start : exc.end]!r}, half of a "
            "UTF-16 surrogate pair, which is not valid Unicode and which Arrow datasets cannot store; replace it "
            "(text.encode('utf-8', 'replace').decode()) before loading"
        ) from exc
    except (ValueError, TypeError) as exc:  # pyarrow's ArrowInvalid / ArrowTypeError derive from these
        raise DatasetError(
            f"cannot make a dataset from these rows: {exc}. Each column must hold values of one type in every row"
        ) from exc
    return dataset.to_iterable_dataset() if streaming else dataset


def _from_object(obj: Any, split: str, streaming: bool) -> AnyDataset:
    from datasets import Dataset, DatasetDict, IterableDataset, IterableDatasetDict

    if isinstance(obj, (DatasetDict, IterableDatasetDict)):
        obj = _pick_split(obj, split, type(obj).__name__)
    if isinstance(obj, Dataset):
        return obj.to_iterable_dataset() if streaming else obj
    if isinstance(obj, IterableDataset):
        return obj
    raise DatasetError(
        f"cannot load a dataset from {type(obj).__name__}: pass a Hub name, a local file or folder path, "
        "a list of dicts, or a datasets.Dataset"
    )


def _pick_split(splits: Mapping[str, Any], split: str, label: str) -> Any:
    if split in splits:
        return splits[split]
    if "[" in split and _base(split) in splits:
        raise DatasetError(
            f"split slices like {split!r} work for files and Hub datasets, not for {label}; "
            f"pass split={_base(split)!r} and max_samples= instead"
        )
    raise DatasetError(_split_message(split, label, list(splits)))


def _split_message(split: str, label: str, available: Sequence[str] | None) -> str:
    listed = ", ".join(repr(s) for s in available) if available else "unknown"
    return f"split {split!r} does not exist in {label}. Available splits: {listed}; pass one of them as split="


def _base(split: str) -> str:
    match = _SPLIT_NAME.match(split.strip())
    if match is None:
        raise DatasetError(f"{split!r} is not a split name; write e.g. 'train', 'test' or 'train[:100]'")
    return match.group(0)


def _from_path(path: Path, split: str, config: str | None, streaming: bool, load_kwargs: dict[str, Any]) -> AnyDataset:
    label = repr(str(path))
    if path.is_dir():
        if (path / "dataset_dict.json").is_file() or (path / "state.json").is_file():
            from datasets import load_from_disk

            saved = load_from_disk(str(path))
            return _from_object(saved, split, streaming)
        try:
            return _load(str(path), config, split, streaming, load_kwargs, label)
        except DatasetError:
            raise
        except Exception as exc:
            raise DatasetError(
                f"could not read the folder {label}: {_innermost(exc)}. A folder must be written by "
                f"Dataset.save_to_disk or hold data files ({', '.join(FILE_TYPES)})"
            ) from exc
    kind = FILE_TYPES.get(path.suffix.lower())
    if kind is None:
        raise DatasetError(
            f"cannot read {label}: unsupported file type {path.suffix or '(none)'!r}. Supported: "
            f"{', '.join(FILE_TYPES)}, or a folder written by Dataset.save_to_disk"
        )
    if config is not None:
        raise DatasetError(f"config={config!r} applies to Hub datasets; a local file has no configurations")
    if kind in ("json", "csv") and is_blank_file(path):
        raise DatasetError(f"the file {label} is empty: it holds no rows")
    if streaming and kind == "json":
        # A stream reads the file only as it goes, so a broken line would surface mid-job as a parser's traceback;
        # checking the file first gives the same error as loading it whole, before anything is written.
        _raise_json_problem(path, label)
    try:
        return _load(kind, None, split, streaming, {"data_files": {_base(split): str(path)}, **load_kwargs}, label)
    except DatasetError:
        raise
    except Exception as exc:
        if kind == "json":
            _raise_json_problem(path, label)
        raise DatasetError(f"could not read {label}: {_innermost(exc)}") from exc


def _raise_json_problem(path: Path, label: str) -> None:
    """Raise a :class:`DatasetError` naming the file's first bad line, if it has one."""
    problem = json_problem(path)
    if problem is not None:
        raise DatasetError(f"{label} is not valid JSON{' Lines' * (path.suffix == '.jsonl')}: {problem}")


def _from_hub(name: str, config: str | None, split: str, streaming: bool, load_kwargs: dict[str, Any]) -> AnyDataset:
    from datasets.exceptions import DatasetNotFoundError

    label = f"the Hub dataset {name!r}" + (f" (config {config!r})" if config else "")
    try:
        return _load(name, config, split, streaming, load_kwargs, label)
    except DatasetNotFoundError as exc:
        raise DatasetError(
            f"no dataset {name!r} was found on the Hugging Face Hub ({exc}). Check the name; for a private or "
            f"gated dataset log in first (`hf auth login`). {_LOCAL_HINT}"
        ) from exc
    except ConnectionError as exc:
        raise DatasetError(
            f"could not load {name!r} from the Hugging Face Hub: {exc}. The Hub is not reachable from here (or "
            f"HF_HUB_OFFLINE / HF_DATASETS_OFFLINE is set), and no local file or folder has that name. {_LOCAL_HINT}"
        ) from exc
    except OSError as exc:
        raise DatasetError(f"could not load {label}: {exc}. {_LOCAL_HINT}") from exc


def _load(
    path: str, config: str | None, split: str, streaming: bool, load_kwargs: dict[str, Any], label: str
) -> AnyDataset:
    """``datasets.load_dataset``, with its split and config errors made clear."""
    from datasets import load_dataset

    try:
        return load_dataset(path, config, split=split, streaming=streaming, **load_kwargs)
    except ValueError as exc:
        message = str(exc)
        if "corresponds to no data" in message:
            raise DatasetError(f"the dataset is empty: {label}, split {split!r} has no rows") from exc
        if "split" in message.lower() and (_SPLIT_LIST.search(message) or "Unknown split" in message):
            listed = _SPLIT_LIST.search(message)
            available = [s.strip().strip("'\"") for s in listed.group(1).split(",")] if listed else None
            raise DatasetError(_split_message(split, label, available)) from exc
        if "config" in message.lower():
            raise DatasetError(f"{label}: {message} Pass the configuration as config=...") from exc
        raise


def _innermost(exc: BaseException) -> str:
    """The message of the deepest cause of ``exc`` (``datasets`` wraps the useful one)."""
    seen = exc
    while seen.__cause__ is not None or (seen.__context__ is not None and not seen.__suppress_context__):
        seen = seen.__cause__ or seen.__context__  # type: ignore[assignment]
    return f"{type(seen).__name__}: {seen}" if str(seen) else type(seen).__name__
