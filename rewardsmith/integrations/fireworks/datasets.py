"""Datasets to and from Fireworks: convert to its evaluation JSON Lines, push, and read back by name.

Fireworks evaluation datasets are JSON Lines, one ``{"messages": [...],
"ground_truth": ...}`` per line: the prompt as chat messages, and the reference
a reward compares with. :func:`push_dataset` prepares any source rewardsmith
loads (through a converter, with a system prompt if you give one), writes that
file, creates the dataset and uploads it. ``fireworks:ACCOUNT/ID`` names such a
dataset anywhere a dataset source is taken (``evaluate``, ``prepare_dataset``,
``rewardsmith eval --dataset``): it is downloaded and read as a local file; the
``fireworks`` converter turns it into a prompt and an ``answer``.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rewardsmith.core.errors import DatasetError
from rewardsmith.core.inputs import as_messages, completion_text
from rewardsmith.data.prepare import prepare_dataset
from rewardsmith.integrations.fireworks.rest import FireworksClient, FireworksError

__all__ = ["PushResult", "fetch_dataset", "push_dataset", "write_fireworks_jsonl"]

#: Columns tried, in order, for the ground truth when none is named.
GROUND_TRUTH_COLUMNS = ("ground_truth", "answer", "solution", "completion")


@dataclass
class PushResult:
    """What :func:`push_dataset` did: the dataset's name, how many examples, and the JSONL it uploaded."""

    account: str
    dataset_id: str
    examples: int
    state: str
    path: Path | None

    @property
    def name(self) -> str:
        """``accounts/ACCOUNT/datasets/ID``, the dataset's resource name at Fireworks."""
        return f"accounts/{self.account}/datasets/{self.dataset_id}"


def write_fireworks_jsonl(
    source: Any,
    path: str | os.PathLike[str],
    *,
    split: str = "train",
    ground_truth_column: str | None = None,
    **dataset_options: Any,
) -> int:
    """Write ``source`` (prepared with ``prepare_dataset``) as Fireworks evaluation JSON Lines; the row count.

    Each line is ``{"messages": prompt as chat messages, "ground_truth": value}``;
    the ground truth is ``ground_truth_column``, else the first of
    ``ground_truth``, ``answer``, ``solution``, ``completion`` the data has.

    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "gsm8k.jsonl"
    >>> write_fireworks_jsonl([{"question": "2+3?", "answer": "2+3=5\\n#### 5"}], out, converter="gsm8k",
    ...                       system_prompt="Answer with a number.")
    1
    >>> import json
    >>> line = json.loads(out.read_text())
    >>> line["messages"], line["ground_truth"]
    ([{'role': 'system', 'content': 'Answer with a number.'}, {'role': 'user', 'content': '2+3?'}], '5')
    """
    prepared = prepare_dataset(source, split, streaming=True, conversational=True, **dataset_options)
    column = ground_truth_column
    count = 0
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        for row in prepared:
            if column is None:
                column = next((c for c in GROUND_TRUTH_COLUMNS if c in row), None)
                if column is None:
                    raise DatasetError(
                        f"no ground truth column: the prepared data has {', '.join(row)}; none of "
                        f"{', '.join(GROUND_TRUTH_COLUMNS)}. Name one with ground_truth_column= (--ground-truth-column)"
                    )
            if column not in row:
                raise DatasetError(
                    f"ground_truth_column={column!r} is not a column of the prepared data: {', '.join(row)}"
                )
            truth = row[column]
            if isinstance(truth, list):  # a reference answer as chat messages
                truth = completion_text(truth)
            line = {"messages": as_messages(row["prompt"], "user"), "ground_truth": truth}
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
            count += 1
    if count == 0:
        raise DatasetError("the dataset has no rows to upload")
    return count


def push_dataset(
    source: Any,
    dataset_id: str,
    *,
    account: str | None = None,
    split: str = "train",
    ground_truth_column: str | None = None,
    display_name: str | None = None,
    save_to: str | os.PathLike[str] | None = None,
    client: FireworksClient | None = None,
    **dataset_options: Any,
) -> PushResult:
    """Convert ``source`` to Fireworks evaluation JSONL and upload it as dataset ``dataset_id`` of ``account``.

    ``account`` defaults to ``FIREWORKS_ACCOUNT_ID``; the key is ``FIREWORKS_API_KEY``
    (see :class:`~rewardsmith.integrations.fireworks.rest.FireworksClient`).
    ``dataset_options`` go to ``prepare_dataset`` (``converter``, ``config``,
    ``system_prompt``, ``max_samples``, ...). ``save_to`` keeps a copy of the
    file. A dataset that already exists is an error, unless it is still
    waiting for its data (an earlier push that stopped after creating it),
    which is then uploaded.

    It talks to the Fireworks API (the test suite runs it against a local
    stand-in of that API)::

        rows = [{"question": "2+3?", "answer": "#### 5"}, {"question": "1+1?", "answer": "#### 2"}]
        result = push_dataset(rows, "sums", account="acme", converter="gsm8k")
        result.name, result.examples, result.state  # ('accounts/acme/datasets/sums', 2, 'READY')
    """
    account = _account(account)
    _check_id(dataset_id)
    client = client or FireworksClient()
    with tempfile.TemporaryDirectory(prefix="rewardsmith-fireworks-") as folder:
        path = Path(save_to) if save_to is not None else Path(folder) / f"{dataset_id}.jsonl"
        count = write_fireworks_jsonl(
            source, path, split=split, ground_truth_column=ground_truth_column, **dataset_options
        )
        try:
            client.create_dataset(account, dataset_id, display_name=display_name or dataset_id, example_count=count)
        except FireworksError as exc:
            if exc.status != 409 or client.get_dataset(account, dataset_id).get("state") != "UPLOADING":
                raise
        client.upload(account, dataset_id, path)
        state = str(client.get_dataset(account, dataset_id).get("state", "UNKNOWN"))
    return PushResult(account, dataset_id, count, state, Path(save_to) if save_to is not None else None)


def fetch_dataset(
    spec: str, *, folder: str | os.PathLike[str] | None = None, client: FireworksClient | None = None
) -> Path:
    """Download Fireworks dataset ``ACCOUNT/ID`` (or ``ID``, with ``FIREWORKS_ACCOUNT_ID``); the local JSONL file.

    The file goes to ``folder`` (default: ``$REWARDSMITH_CACHE_DIR/fireworks/ACCOUNT/ID``,
    or ``~/.cache/rewardsmith/...``), fetched anew each time.

    It talks to the Fireworks API (the test suite runs it against a local
    stand-in of that API)::

        path = fetch_dataset("acme/sums")  # ~/.cache/rewardsmith/fireworks/acme/sums/sums.jsonl
        rewardsmith.evaluate("fireworks:acme/sums", "gsm8k_accuracy", "runs/sums", completions_column="solution")
    """
    account, _, dataset_id = spec.strip().rpartition("/")
    account = _account(account or None)
    _check_id(dataset_id)
    client = client or FireworksClient()
    if folder is None:
        cache = Path(os.environ.get("REWARDSMITH_CACHE_DIR") or Path.home() / ".cache" / "rewardsmith")
        folder = cache / "fireworks" / account / dataset_id
    target = Path(folder)
    for old in target.glob("*.jsonl") if target.is_dir() else ():
        old.unlink()
    paths = [p for p in client.download(account, dataset_id, target) if p.suffix == ".jsonl"]
    if len(paths) != 1:
        raise FireworksError(
            f"dataset {account}/{dataset_id} has {len(paths)} JSONL files; rewardsmith reads datasets of one file"
        )
    return paths[0]


def _account(account: str | None) -> str:
    account = (account or os.environ.get("FIREWORKS_ACCOUNT_ID", "")).strip()
    if not account:
        raise FireworksError("no Fireworks account: pass --account (account=) or set FIREWORKS_ACCOUNT_ID")
    _check_id(account, "account")
    return account


def _check_id(value: str, what: str = "dataset id") -> None:
    if not value or any(c in value for c in "/:?# \t\n"):
        raise FireworksError(f"{what} {value!r} is not a Fireworks id (letters, digits and hyphens, like 'gsm8k-test')")
