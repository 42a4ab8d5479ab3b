"""The package's size counts hold: no new function over 60 lines, and no more duplicated 6-line shapes.

Counted, never timed, with the measures of ``benchmarks/spine_counts.py``: the functions in ``rewardsmith/``
longer than 60 lines are only the known ones (each with its reason in ``docs/architecture.md``), and
``duplicates --repo rewardsmith`` lists at most ``MOST_DUPLICATE_PAIRS`` pairs (skipped where that tool is not
installed).
"""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _spine_counts():
    spec = importlib.util.spec_from_file_location("spine_counts", ROOT / "benchmarks" / "spine_counts.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


spine_counts = _spine_counts()


def test_only_the_known_functions_are_over_60_lines():
    found = {name: lines for lines, _, name in spine_counts.long_functions()}
    new = sorted(set(found) - spine_counts.KNOWN_LONG)
    assert not new, f"over 60 lines: {new}; split them into helpers, or give the reason in docs/architecture.md"
    assert len(found) <= len(spine_counts.KNOWN_LONG)


def test_every_known_long_function_has_its_reason_in_the_architecture_page():
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    missing = [name for name in sorted(spine_counts.KNOWN_LONG) if f"`{name}`" not in page]
    assert not missing, missing


def test_the_long_function_count_sees_a_long_function(tmp_path, monkeypatch):
    body = "\n".join(f"    x{i} = {i}" for i in range(61))
    (tmp_path / "long.py").write_text(f"def long():\n{body}\n\n\ndef short():\n    return 1\n", encoding="utf-8")
    monkeypatch.setattr(spine_counts, "PACKAGE", tmp_path)
    monkeypatch.setattr(spine_counts, "ROOT", tmp_path)
    assert spine_counts.long_functions() == [(62, 61, "long.py:long")]


@pytest.mark.skipif(shutil.which("duplicates") is None, reason="the duplicates tool is not installed")
def test_no_more_duplicated_shapes_than_the_recorded_figure():
    summary = spine_counts.duplicate_pairs()
    if summary.startswith("no duplicates"):
        return
    count = re.match(r"(\d+) pairs", summary)
    assert count is not None, summary
    assert int(count.group(1)) <= spine_counts.MOST_DUPLICATE_PAIRS, (
        f"{summary}; run `duplicates --repo rewardsmith --most 40` and give the shared code one place"
    )
