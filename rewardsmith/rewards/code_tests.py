"""``code_tests``: run the program in a completion against the row's tests, in a sandbox; the share that pass.

The program is the last fenced block of the requested language (``extract``
says otherwise); a completion without one scores 0. It runs in a fresh
sandbox per completion (:mod:`rewardsmith.sandbox`: bubblewrap where it works,
else resource limits only, after a warning), against the row's tests in any
of the formats of :mod:`rewardsmith.rewards.code_formats` (MBPP asserts,
HumanEval ``check``, standard input/output, APPS call-based). The verdicts come
from outside the program's reach: expected outputs never enter the sandbox
for I/O and call tests, and Python asserts run in a judge process the program
cannot touch (so ``sys.exit(0)``, patched asserts, an always-true ``__eq__``
or a printed "PASSED" do not pass anything).

Samples run on ``workers`` worker processes of the reward engine (default:
one per CPU), each starting sandboxes, with results in input order.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.injection import Column, Input
from rewardsmith.core.registry import register_reward
from rewardsmith.core.result import RewardResult
from rewardsmith.core.reward import Reward
from rewardsmith.rewards.code_checks import Verdict, check_program
from rewardsmith.rewards.code_fences import EXTRACT_CHOICES, extract_code
from rewardsmith.rewards.code_formats import StdioTests, TestFormatError, count_tests
from rewardsmith.rewards.code_rows import row_tests, unfenced_program
from rewardsmith.sandbox.backend import Backend
from rewardsmith.sandbox.isolation import ISOLATION_CHOICES
from rewardsmith.sandbox.languages import language
from rewardsmith.sandbox.limits import Limits
from rewardsmith.sandbox.results import Program

__all__ = ["CodeTests", "usable_cpus"]

SCORING_CHOICES = ("fraction", "all")


def usable_cpus() -> int:
    """The CPUs this process may run on (the default number of workers)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _positive(name: str, value: Any, reward: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise RewardConfigError(f"reward {reward!r}: {name} must be a positive number, got {value!r}")


@register_reward("code_tests")
@dataclass
class CodeTests(Reward):
    """The share of the row's tests that the completion's program passes, run in a sandbox.

    Settings: ``language`` (``python``, ``cpp``, ``javascript``, or ``auto``:
    the language of the block; I/O tests only); ``extract`` (``last`` block,
    ``first``, ``all`` joined, or ``raw``: the whole completion); ``scoring``
    (``fraction`` of tests passed, or ``all``: 1 only when every test passes);
    ``stop_on_first_failure``; ``test_timeout`` (seconds per test),
    ``compile_timeout``, ``max_seconds`` (the whole sample); ``memory_mb``,
    ``max_output_bytes``; ``float_tolerance`` (for decimal numbers in outputs);
    ``max_code_chars``; ``backend`` (``local``, ``limits``, ``sandboxfusion``) with
    ``backend_settings`` (e.g. ``{"url": ...}``); ``isolation`` (``auto``,
    ``require``, ``limits``: the local backend's); ``tests_column``.

    Columns: ``tests`` (what the ``mbpp``, ``humaneval``, ``apps`` and
    ``codecontests`` converters write), or else a dataset's own layout, read
    whole: APPS's ``input_output``, MBPP's ``test_list`` (with
    ``test_setup_code`` and ``test_imports``), HumanEval's ``test`` (with
    ``entry_point``, the prompt being the stub). A completion with no fence at
    all is the program when it is one whole module defining the functions the
    tests call (:mod:`rewardsmith.rewards.code_rows`). Range: [0, 1]; ``None``
    when the row has no tests (and when the tests cannot be read or the
    sandbox itself fails).

    >>> r = CodeTests(workers=1)
    >>> tests = '{"format": "assert", "asserts": ["assert add(1, 2) == 3", "assert add(2, 2) == 4"]}'
    >>> good = "```python\\ndef add(a, b):\\n    return a + b\\n```"
    >>> cheat = "```python\\nimport sys\\ndef add(a, b):\\n    return 3\\nsys.exit(0)\\n```"
    >>> r(completions=[good, cheat, "no code"], tests=[tests] * 3)
    [1.0, 0.0, 0.0]
    """

    default_name = "code_tests"
    score_range = (0.0, 1.0)

    language: str = "python"
    extract: str = "last"
    scoring: str = "fraction"
    stop_on_first_failure: bool = False
    test_timeout: float = 5.0
    compile_timeout: float = 30.0
    max_seconds: float = 60.0
    memory_mb: int = 1024
    max_output_bytes: int = 4_000_000
    float_tolerance: float = 1e-6
    max_code_chars: int = 100_000
    backend: str = "local"
    backend_settings: Mapping[str, Any] = field(default_factory=dict)
    isolation: str = "auto"
    tests_column: str = "tests"
    workers: int = field(default_factory=usable_cpus, kw_only=True)

    def __post_init__(self) -> None:
        super().__post_init__()
        name = self.name
        if self.language != "auto":
            language(self.language)
        for setting, value, choices in (
            ("extract", self.extract, EXTRACT_CHOICES),
            ("scoring", self.scoring, SCORING_CHOICES),
            ("isolation", self.isolation, ISOLATION_CHOICES),
        ):
            if value not in choices:
                raise RewardConfigError(f"reward {name!r}: {setting} must be one of {choices}, got {value!r}")
        for setting in ("test_timeout", "compile_timeout", "max_seconds", "memory_mb", "max_output_bytes"):
            _positive(setting, getattr(self, setting), name)
        if not isinstance(self.float_tolerance, (int, float)) or self.float_tolerance < 0:
            raise RewardConfigError(f"reward {name!r}: float_tolerance must be a number >= 0")
        self.sandbox()  # an unknown backend or bad settings fail here, before any training
        if self.backend == "local" and self.isolation == "require":
            self.sandbox().isolation_info()  # type: ignore[attr-defined]  # refuses now when namespaces are unavailable

    def sandbox(self) -> Backend:
        """The backend programs run on."""
        from rewardsmith.sandbox.backends import get_backend

        settings = dict(self.backend_settings)
        if self.backend == "local":
            settings.setdefault("isolation", self.isolation)
        return get_backend(self.backend, **settings)

    def limits(self) -> Limits:
        """The limits of one run of a program (one test)."""
        return Limits(timeout=self.test_timeout, memory_mb=self.memory_mb, output_bytes=self.max_output_bytes)

    def inputs(self) -> dict[str, Input]:
        return {
            "tests": Column(self.tests_column, "input_output", "test_list", "test"),
            "entry_point": Column("entry_point", required=False),
            "test_setup_code": Column("test_setup_code", required=False),
            "test_imports": Column("test_imports", required=False),
        }

    def score(
        self,
        completion: str,
        tests: Any,
        prompt: str = "",
        entry_point: Any = None,
        test_setup_code: Any = None,
        test_imports: Any = None,
    ) -> RewardResult:
        parsed = row_tests(tests, prompt, entry_point, test_setup_code, test_imports)
        if parsed is None:
            return RewardResult(None, "this row has no tests")
        wanted = self.language if isinstance(parsed, StdioTests) else "python"
        if self.language not in (wanted, "auto"):
            raise TestFormatError(f"this row has Python tests, and the reward's language is {self.language!r}")
        found = extract_code(completion or "", wanted, self.extract)
        if (
            found is None
            and wanted == "python"
            and (whole := unfenced_program(completion or "", parsed, self.max_code_chars))
        ):
            found = (whole, "python")
        if found is None:
            what = "fenced code block" if wanted == "auto" else f"```{language(wanted).name} block"
            return RewardResult(0.0, f"no {what} in the completion", {"passed": 0, "total": count_tests(parsed)})
        code, lang = found
        if len(code) > self.max_code_chars:
            return RewardResult(0.0, f"{len(code)} characters of code, more than max_code_chars={self.max_code_chars}")
        verdict = check_program(
            self.sandbox(),
            Program(code, lang),
            parsed,
            self.limits(),
            float_tolerance=self.float_tolerance,
            stop_on_first_failure=self.stop_on_first_failure,
            compile_timeout=self.compile_timeout,
            max_seconds=self.max_seconds,
        )
        return self._verdict_result(verdict)

    def _verdict_result(self, verdict: Verdict) -> RewardResult:
        total, passed = verdict.total, verdict.count
        if total == 0:
            return RewardResult(None, "this row has no tests")
        share = passed / total
        value = share if self.scoring == "fraction" else float(passed == total)
        reason = f"{passed}/{total} tests passed"
        if verdict.failure:
            reason += f"; {verdict.failure}"
        tail = verdict.stderr.strip()[-300:]
        if tail and passed < total:
            reason += f"; stderr: ...{tail}"
        metrics = {
            "passed": passed,
            "total": total,
            "timeouts": verdict.timeouts,
            "compile_error": int(verdict.compile_error),
        }
        return RewardResult(value, reason, metrics)
