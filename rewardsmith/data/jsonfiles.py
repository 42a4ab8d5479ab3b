"""Finding what is wrong in a JSON or JSON Lines file, by line number.

``datasets`` reads JSON with Arrow, whose errors name neither the file's line
nor the problem clearly ("An error occurred while generating the dataset").
When a load fails, :func:`json_problem` reads the file again with Python's
``json`` module and reports the first bad line. It is only called after a
failure, so loading valid files costs nothing extra.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["is_blank_file", "json_problem"]

_PREVIEW = 60


def is_blank_file(path: Path, chunk: int = 1 << 16) -> bool:
    """Whether a file holds nothing but whitespace (stops at the first other byte)."""
    with path.open("rb") as f:
        while block := f.read(chunk):
            if block.strip():
                return False
    return True


def _preview(line: str) -> str:
    line = line.strip()
    return repr(line if len(line) <= _PREVIEW else line[: _PREVIEW - 3] + "...")


def _document_problem(path: Path) -> str | None:
    try:
        with path.open(encoding="utf-8") as f:
            json.load(f)
    except json.JSONDecodeError as exc:
        return f"line {exc.lineno}, column {exc.colno}: {exc.msg}"
    except UnicodeDecodeError as exc:
        return f"the file is not UTF-8 text ({exc.reason} at byte {exc.start})"
    return None


def json_problem(path: Path) -> str | None:
    """The first problem in a JSON (one document) or JSON Lines (one object a line) file, or ``None``.

    >>> import tempfile, pathlib
    >>> bad = pathlib.Path(tempfile.mkdtemp()) / "rows.jsonl"
    >>> _ = bad.write_text('{"q": "2+2?"}\\n\\n{"q": "3+3?",}\\n')
    >>> print(json_problem(bad))
    line 3: ... (column ...): '{"q": "3+3?",}'
    """
    with path.open("rb") as f:
        head = f.read(1 << 12).lstrip()
    if head.startswith(b"["):  # one JSON document, a list of rows
        return _document_problem(path)
    first, number = True, 0
    try:
        with path.open(encoding="utf-8") as f:
            for number, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    if first and path.suffix.lower() == ".json":  # maybe one document over several lines
                        return _document_problem(path)
                    return f"line {number}: {exc.msg} (column {exc.colno}): {_preview(line)}"
                if not isinstance(row, dict):
                    return f"line {number}: each line must be a JSON object, not {type(row).__name__}: {_preview(line)}"
                first = False
    except UnicodeDecodeError as exc:
        return f"the file is not UTF-8 text near line {number + 1}: {exc.reason}"
    return None
