"""Converters for code datasets: MBPP, HumanEval, APPS-style ``input_output`` (and CodeContests).

Each writes ``prompt`` and ``tests``: the row's tests as a JSON string in one
of the formats ``code_tests`` reads (:mod:`rewardsmith.rewards.code_formats`),
checked as they are written (a row whose tests cannot be read is an error
naming it; a row without tests gets ``tests`` = ``None``, which the reward
does not score).
"""

from __future__ import annotations

import ast
import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rewardsmith.core.errors import DatasetError
from rewardsmith.data.converters import Converter, cell_text, short_repr
from rewardsmith.rewards.code_formats import TestFormatError, check_tests, parse_python

__all__ = ["APPS", "MBPP", "SHOW_TESTS", "CodeContests", "HumanEval", "defined_names"]


def defined_names(code: str) -> list[str]:
    """The functions and classes a reference solution defines at its top level.

    >>> defined_names("import re\\ndef f(x):\\n    return x\\nclass C: pass")
    ['f', 'C']
    """
    try:
        tree = parse_python(code)
    except (SyntaxError, ValueError):
        return []
    return [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]


def _tests_json(data: dict[str, Any]) -> str:
    try:
        check_tests(data)
    except TestFormatError as exc:
        raise DatasetError(f"the row's tests cannot be used: {exc}") from None
    return json.dumps(data)


#: What the ``mbpp`` prompt shows of the graded asserts (see :class:`MBPP`).
SHOW_TESTS = ("example", "signature", "none", "all_for_eval")


def _signatures(code: Any, names: list[str]) -> list[str]:
    """The ``def`` lines of the reference solution's functions ``names`` (``def add(a, b):``)."""
    try:
        tree = parse_python(code) if isinstance(code, str) else None
    except (SyntaxError, ValueError):
        tree = None
    found = {
        n.name: f"def {n.name}({ast.unparse(n.args)}):"
        for n in (tree.body if tree else [])
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    return [found[name] for name in names if name in found]


@dataclass
class MBPP(Converter):
    """MBPP rows: the task and one example call to the prompt; every assert, the setup and entry points as `tests`.

    ``show_tests`` says what the prompt shows of the asserts ``code_tests``
    grades: ``"example"`` (the default, for training: one assert, as an example
    call, the first of those repeated least; the others stay hidden; when
    every assert is the same one, the signature instead), ``"signature"`` (the reference
    solution's ``def`` line only), ``"none"``, or ``"all_for_eval"``: MBPP's
    own prompt, "Your code should pass these tests:" and every assert, for
    evaluation only (under RL a lookup table of the shown calls passes every
    graded test). ``challenge=True`` adds ``challenge_test_list``. The
    functions under test are the reference solution's (``code``) that the
    asserts call.

    >>> row = {"text": "Add two numbers.", "code": "def add(a, b):\\n    return a + b",
    ...        "test_list": ["assert add(1, 2) == 3", "assert add(2, 2) == 4"], "test_setup_code": ""}
    >>> out = MBPP().convert(row)
    >>> print(out["prompt"])
    Add two numbers.
    For example, your code should pass this test:
    <BLANKLINE>
    assert add(1, 2) == 3
    >>> json.loads(out["tests"])["asserts"], json.loads(out["tests"])["entry_points"]
    (['assert add(1, 2) == 3', 'assert add(2, 2) == 4'], ['add'])
    >>> print(MBPP(show_tests="signature").convert(row)["prompt"])
    Add two numbers.
    Your code should define:
    <BLANKLINE>
    def add(a, b):
    """

    INPUT_SETTINGS = ("text_key", "tests_key")
    OUTPUT_COLUMNS = ("prompt", "tests")

    text_key: str = "text"
    tests_key: str = "test_list"
    setup_key: str = "test_setup_code"
    imports_key: str = "test_imports"
    code_key: str = "code"
    show_tests: str = "example"
    challenge: bool = False

    def __post_init__(self) -> None:
        if self.show_tests is False:
            self.show_tests = "none"
        if self.show_tests is True:
            raise DatasetError(
                "mbpp: show_tests=True is ambiguous: 'all_for_eval' shows every graded assert (MBPP's own prompt; "
                "for evaluation only: under RL a lookup table of the shown calls passes), 'example' shows one"
            )
        if self.show_tests not in SHOW_TESTS:
            raise DatasetError(f"mbpp: show_tests must be one of {SHOW_TESTS}, got {self.show_tests!r}")

    def convert(self, row: Mapping[str, Any]) -> dict[str, Any]:
        asserts = row.get(self.tests_key)
        if not isinstance(asserts, (list, tuple)) or not all(isinstance(a, str) for a in asserts):
            raise DatasetError(f"the {self.tests_key!r} column holds {short_repr(asserts)}, not a list of asserts")
        shown = list(asserts)
        asserts = list(asserts)
        if self.challenge:
            asserts += [a for a in row.get("challenge_test_list") or [] if isinstance(a, str)]
        setup = "\n".join(
            [*(i for i in row.get(self.imports_key) or [] if isinstance(i, str)), str(row.get(self.setup_key) or "")]
        ).strip()
        used = set()
        for text in asserts:
            try:
                used |= {n.id for n in ast.walk(parse_python(text)) if isinstance(n, ast.Name)}
            except (SyntaxError, ValueError):
                raise DatasetError(f"an assert is not valid Python: {short_repr(text)}") from None
        code = row.get(self.code_key)
        entry = [n for n in defined_names(code) if n in used] if isinstance(code, str) else []
        prompt = cell_text(row, self.text_key, "task") + self._shown(shown, code, entry)
        tests = {"format": "assert", "asserts": asserts, "setup": setup, "entry_points": entry}
        return {"prompt": prompt, "tests": _tests_json(tests) if asserts else None}

    def _shown(self, asserts: list[str], code: Any, entry: list[str]) -> str:
        """What the prompt adds after the task text."""
        if not asserts or self.show_tests == "none":
            return ""
        if self.show_tests == "all_for_eval":
            return "\nYour code should pass these tests:\n\n" + "\n".join(asserts)
        if self.show_tests == "signature":
            lines = _signatures(code, entry)
            return "\nYour code should define:\n\n" + "\n".join(lines) if lines else ""
        counts = Counter(" ".join(a.split()) for a in asserts)
        example = min(asserts, key=lambda a: counts[" ".join(a.split())])  # the first of the rarest
        if counts[" ".join(example.split())] == len(asserts):  # every test is this one: showing it shows them all
            lines = _signatures(code, entry)
            return "\nYour code should define:\n\n" + "\n".join(lines) if lines else ""
        return "\nFor example, your code should pass this test:\n\n" + example


@dataclass
class HumanEval(Converter):
    """HumanEval rows: the function stub (in a Python block, after ``instruction``) to the prompt; `tests` keeps
    the stub, the `check` test and the entry point (the program is the stub followed by the completion's code).

    >>> row = {"prompt": "def inc(x):\\n    '''x + 1'''\\n", "entry_point": "inc",
    ...        "test": "def check(candidate):\\n    assert candidate(1) == 2\\n"}
    >>> sorted(json.loads(HumanEval().convert(row)["tests"]))
    ['entry_point', 'format', 'prompt', 'test']
    """

    INPUT_SETTINGS = ("prompt_key", "test_key", "entry_point_key")
    OUTPUT_COLUMNS = ("prompt", "tests")

    prompt_key: str = "prompt"
    test_key: str = "test"
    entry_point_key: str = "entry_point"
    instruction: str = "Complete the following Python function. Answer with the whole function in a ```python block."

    def convert(self, row: Mapping[str, Any]) -> dict[str, Any]:
        stub = cell_text(row, self.prompt_key, "function stub")
        tests = {
            "format": "humaneval",
            "prompt": stub,
            "test": cell_text(row, self.test_key, "test"),
            "entry_point": cell_text(row, self.entry_point_key, "entry point"),
        }
        prompt = f"{self.instruction}\n\n```python\n{stub.rstrip()}\n```" if self.instruction else stub
        return {"prompt": prompt, "tests": _tests_json(tests)}


def _io(value: Any, where: str) -> dict[str, Any] | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise DatasetError(f"the {where!r} column is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise DatasetError(f"the {where!r} column holds {short_repr(value)}, not an object with inputs and outputs")
    return value


@dataclass
class APPS(Converter):
    """APPS-style rows: the question (and starter code) to the prompt; `input_output` as `tests`.

    ``input_output`` (JSON text or an object) has ``inputs`` and ``outputs``:
    standard input and output, or, with ``fn_name``, argument lists and return
    values (the call-based form). The prompt says which. A row without tests
    gets ``tests`` = ``None``.

    >>> tests = '{"inputs": ["1 2\\\\n"], "outputs": ["3\\\\n"]}'
    >>> out = APPS().convert({"question": "Print the sum.", "input_output": tests})
    >>> json.loads(out["tests"])["format"]
    'stdio'
    """

    INPUT_SETTINGS = ("question_key", "tests_key")
    OUTPUT_COLUMNS = ("prompt", "tests")

    question_key: str = "question"
    tests_key: str = "input_output"
    starter_key: str = "starter_code"
    stdio_hint: str = "Read the input from standard input and print the answer to standard output."
    call_hint: str = "Write the function {fn_name} (complete the starter code if there is one); it is called directly."

    def convert(self, row: Mapping[str, Any]) -> dict[str, Any]:
        question = cell_text(row, self.question_key, "question")
        data = _io(row.get(self.tests_key), self.tests_key)
        starter = row.get(self.starter_key)
        fn_name = data.get("fn_name") if data else None
        hint = self.call_hint.format(fn_name=fn_name) if fn_name else self.stdio_hint
        prompt = f"{question}\n\n{hint}" if hint else question
        if isinstance(starter, str) and starter.strip():
            prompt += f"\n\n```python\n{starter.rstrip()}\n```"
        if not data or not data.get("inputs"):
            return {"prompt": prompt, "tests": None}
        tests = {"format": "call" if fn_name else "stdio", **data}
        return {"prompt": prompt, "tests": _tests_json(tests)}


@dataclass
class CodeContests(Converter):
    """CodeContests rows: the description to the prompt; the public, private and generated tests as `tests` (I/O).

    >>> row = {"description": "Sum.", "public_tests": {"input": ["1 2\\n"], "output": ["3\\n"]}}
    >>> json.loads(CodeContests().convert(row)["tests"])["inputs"]
    ['1 2\\n']
    """

    INPUT_SETTINGS = ("description_key",)
    OUTPUT_COLUMNS = ("prompt", "tests")

    description_key: str = "description"
    test_keys: tuple[str, ...] = ("public_tests", "private_tests", "generated_tests")
    hint: str = "Read the input from standard input and print the answer to standard output."

    def convert(self, row: Mapping[str, Any]) -> dict[str, Any]:
        prompt = cell_text(row, self.description_key, "description")
        inputs: list[str] = []
        outputs: list[str] = []
        for key in self.test_keys:
            part = row.get(key) or {}
            if not isinstance(part, dict) or len(part.get("input") or []) != len(part.get("output") or []):
                raise DatasetError(
                    f"the {key!r} column holds {short_repr(part)}, not {{'input': [...], 'output': [...]}}"
                )
            inputs += list(part.get("input") or [])
            outputs += list(part.get("output") or [])
        tests = {"format": "stdio", "inputs": inputs, "outputs": outputs}
        return {
            "prompt": f"{prompt}\n\n{self.hint}" if self.hint else prompt,
            "tests": _tests_json(tests) if inputs else None,
        }
