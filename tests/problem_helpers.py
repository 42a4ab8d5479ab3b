"""Checking that a command reported every problem of a config in one message."""

from __future__ import annotations

from typing import Any


def assert_all_reported(result: Any, count: int, after: str, expected: list[str]) -> None:
    """``result`` (a CliRunner result) exited 2 with one error listing ``count`` problems, each text of ``expected``."""
    out = result.output
    assert result.exit_code == 2, out
    assert f"has {count} problems ({after})" in out, out
    for text in expected:
        assert text in out, out
    assert out.count("error:") == 1 and "Traceback" not in out
