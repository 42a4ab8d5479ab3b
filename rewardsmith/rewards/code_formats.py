"""Test formats of code datasets, read from a row's ``tests`` value, and the suites that run them.

Four formats, each a JSON object (the converters in :mod:`rewardsmith.data.code`
write it as a JSON string, which any dataset can hold):

* ``{"format": "assert", "asserts": [...], "setup": "...", "entry_points": [...]}``:
  MBPP's ``test_list`` (``test_setup_code`` as ``setup``); ``entry_points``
  names the functions under test (those that may shadow a builtin);
* ``{"format": "humaneval", "prompt": "...", "test": "...", "entry_point": "..."}``:
  the program is ``prompt`` followed by the code, tested by ``check(candidate)``;
* ``{"format": "stdio", "inputs": [...], "outputs": [...]}``: standard input to
  expected standard output (APPS, CodeContests, LiveCodeBench);
* ``{"format": "call", "fn_name": "...", "inputs": [[...], ...], "outputs": [...]}``:
  APPS's call-based form: the function (or ``Solution().fn_name``) called
  with each list of arguments.

Also read as they come: APPS's ``input_output`` (``inputs``/``outputs``, with
``fn_name`` for the call-based form), and a plain list of assert statements
(MBPP's ``test_list``). Each assert test must hold an ``assert``: a test that
asserts nothing would pass any program that loads. Only an assert whose
condition involves the program is a test (:mod:`rewardsmith.rewards.code_asserts`):
``assert True, "..."``, asserts on constants or on the test's own locals still
run, as steps that prepare the tests, and are not counted.
"""

from __future__ import annotations

import ast
import builtins
import functools
import json
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rewardsmith.core.errors import RewardsmithError
from rewardsmith.rewards.code_asserts import asserts_on_program, program_names
from rewardsmith.sandbox.results import Suite, TestStep

__all__ = [
    "AssertTests",
    "CallTests",
    "HumanEvalTests",
    "StdioTests",
    "TestFormatError",
    "assert_suite",
    "call_suite",
    "check_tests",
    "count_tests",
    "humaneval_suite",
    "parse_python",
    "parse_tests",
]

_BUILTINS = frozenset(dir(builtins))


class TestFormatError(RewardsmithError, ValueError):
    """A row's tests cannot be read (the sample is not scored; the message says what is wrong)."""

    __test__ = False  # not a pytest test class


@dataclass(frozen=True)
class AssertTests:
    """Assert statements run against the program's functions (MBPP)."""

    asserts: tuple[str, ...]
    setup: str = ""
    entry_points: tuple[str, ...] = ()


@dataclass(frozen=True)
class HumanEvalTests:
    """``prompt`` + the code is the program; ``check(candidate)`` in ``test`` tests ``entry_point``."""

    prompt: str
    test: str
    entry_point: str


@dataclass(frozen=True)
class StdioTests:
    """Each input on standard input; the program's standard output must match the expected output."""

    inputs: tuple[str, ...]
    outputs: tuple[str, ...]


@dataclass(frozen=True)
class CallTests:
    """``fn_name`` called with each argument list; its return value must match the expected output."""

    fn_name: str
    inputs: tuple[tuple[Any, ...], ...]
    outputs: tuple[Any, ...]


Tests = AssertTests | HumanEvalTests | StdioTests | CallTests


def _strings(value: Any, what: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise TestFormatError(f"{what} must be a list of strings, got {type(value).__name__}")
    return tuple(value)


def _io_text(value: Any) -> str:
    """A stdio input or output: text, or a list of lines (as some APPS rows hold them)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(line.rstrip("\n") for line in value) + "\n"
    raise TestFormatError(f"a standard input or output must be text, got {type(value).__name__}")


def _arguments(value: Any) -> tuple[Any, ...]:
    """One call's arguments: a list, or LiveCodeBench's text of one JSON value per line."""
    if isinstance(value, str):
        try:
            return tuple(json.loads(line) for line in value.splitlines() if line.strip())
        except ValueError:
            raise TestFormatError(f"call arguments are neither a list nor JSON lines: {value[:80]!r}") from None
    if isinstance(value, (list, tuple)):
        return tuple(value)
    return (value,)


def _from_mapping(data: dict[str, Any]) -> Tests:
    kind = data.get("format")
    if kind == "assert":
        return AssertTests(
            _strings(data.get("asserts", []), "asserts"),
            str(data.get("setup") or ""),
            _strings(data.get("entry_points", []), "entry_points"),
        )
    if kind == "humaneval":
        stub, test, point = data.get("prompt"), data.get("test"), data.get("entry_point")
        if not isinstance(test, str) or not isinstance(point, str) or not isinstance(stub, str):
            raise TestFormatError("humaneval tests need 'prompt', 'test' and 'entry_point' as text")
        return HumanEvalTests(stub, test, point)
    if kind not in (None, "stdio", "call") or "inputs" not in data or "outputs" not in data:
        raise TestFormatError(f"unknown test format: keys {sorted(data)[:8]} (see docs/code.md for the formats)")
    inputs, outputs = data["inputs"], data["outputs"]
    if not isinstance(inputs, list) or not isinstance(outputs, list) or len(inputs) != len(outputs):
        raise TestFormatError("'inputs' and 'outputs' must be lists of the same length")
    fn_name = data.get("fn_name")
    if kind == "call" or (kind is None and isinstance(fn_name, str) and fn_name):
        if not isinstance(fn_name, str) or not fn_name.isidentifier():
            raise TestFormatError(f"call tests need 'fn_name', a function name; got {fn_name!r}")
        return CallTests(fn_name, tuple(_arguments(a) for a in inputs), tuple(outputs))
    return StdioTests(tuple(_io_text(i) for i in inputs), tuple(_io_text(o) for o in outputs))


@functools.lru_cache(maxsize=1024)
def _parse_text(text: str) -> Tests | None:
    stripped = text.strip()
    if not stripped:
        return None
    if stripped[0] in "{[":
        try:
            data = json.loads(stripped)
        except ValueError as exc:
            raise TestFormatError(f"the tests are not valid JSON: {exc}") from None
        return parse_tests(data)
    return AssertTests((text,))


def parse_tests(value: Any) -> Tests | None:
    """The tests of one row (see the module docs), or ``None`` when it has none.

    >>> parse_tests(["assert f(1) == 2"])
    AssertTests(asserts=('assert f(1) == 2',), setup='', entry_points=())
    >>> parse_tests('{"inputs": ["1 2\\\\n"], "outputs": ["3\\\\n"]}')
    StdioTests(inputs=('1 2\\n',), outputs=('3\\n',))
    >>> parse_tests({"inputs": [[1, 2]], "outputs": [3], "fn_name": "add"})
    CallTests(fn_name='add', inputs=((1, 2),), outputs=(3,))
    >>> parse_tests(None), parse_tests([]), parse_tests("")
    (None, None, None)
    """
    if value is None:
        return None
    if isinstance(value, str):
        return _parse_text(value)
    if isinstance(value, dict):
        return _from_mapping(value) if value else None
    if isinstance(value, (list, tuple)):
        return AssertTests(_strings(list(value), "the tests")) if value else None
    raise TestFormatError(f"tests must be JSON text, a dict or a list of asserts, got {type(value).__name__}")


def parse_python(code: str) -> ast.Module:
    """``ast.parse`` without the warnings a dataset's old code gives (invalid escapes in strings)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(code)


def _syntax(code: str, what: str) -> ast.Module:
    try:
        return parse_python(code)
    except (SyntaxError, ValueError, RecursionError) as exc:
        raise TestFormatError(f"the {what} is not valid Python: {exc}") from None


def _reads_name(tree: ast.AST, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in names for n in ast.walk(tree))


def _step(stmt: ast.stmt, test: bool) -> TestStep:
    """A statement as a suite step; ``assert a == b`` also as its two sides."""
    code = ast.unparse(stmt)
    if isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.Compare) and stmt.msg is None:
        compare = stmt.test
        if len(compare.ops) == 1 and isinstance(compare.ops[0], ast.Eq):
            return TestStep(code, ast.unparse(compare.left), ast.unparse(compare.comparators[0]), test)
    return TestStep(code, test=test)


def _names(trees: Sequence[ast.AST]) -> tuple[set[str], set[str]]:
    """Names the code reads, and names it binds itself (assignments, imports, definitions)."""
    read: set[str] = set()
    bound: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
            elif isinstance(node, ast.arg):
                bound.add(node.arg)
    return read, bound


def _builtin_entry(trees: Sequence[ast.Module]) -> str | None:
    """The function under test when it has a builtin's name (MBPP task 126 defines ``sum``).

    That is the function the first ``assert f(...) == ...`` calls, when the
    tests call no function that is not a builtin (otherwise that one is under
    test, and ``set(f(x))`` must use the real ``set``).
    """
    called = {n.func.id for t in trees for n in ast.walk(t) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    if not trees or called - _BUILTINS:
        return None
    for stmt in trees[0].body:
        if isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.Compare):
            left = stmt.test.left
            if isinstance(left, ast.Call) and isinstance(left.func, ast.Name):
                return left.func.id
    return None


def _runs_an_assert(tree: ast.AST) -> bool:
    """Whether running ``tree`` can execute an ``assert`` (one inside a function or class body need not run)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.Assert):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)) and _runs_an_assert(
            node
        ):
            return True
    return False


@functools.lru_cache(maxsize=1024)
def assert_suite(tests: AssertTests) -> Suite:
    """The suite of assert tests: each statement a test; the names the tests read from the program bound.

    A name the tests read that is a builtin is taken from the program only when
    it is an entry point (given, or found by :func:`_builtin_entry`), so a
    program cannot replace ``set`` or ``sorted`` in the tests' own expressions.

    >>> suite = assert_suite(AssertTests(("assert add(1, 2) == 3", "assert sorted(add([1], [0])) == [0, 1]")))
    >>> dict(suite.bind), suite.tests[0].left, suite.tests[0].right
    ({'add': 'add'}, 'add(1, 2)', '3')
    """
    setup_tree = _syntax(tests.setup, "test setup") if tests.setup.strip() else ast.Module([], [])
    trees = [_syntax(text, "test") for text in tests.asserts]
    for number, tree in enumerate(trees, 1):
        if not _runs_an_assert(tree):
            raise TestFormatError(
                f"test {number} asserts nothing (it would pass any program): {tests.asserts[number - 1][:80]!r}"
            )
    read, bound = _names([setup_tree, *trees])
    entry = set(tests.entry_points)
    if not entry and (builtin := _builtin_entry(trees)) is not None:
        entry.add(builtin)
    wanted = sorted(n for n in read - bound if n not in _BUILTINS or n in entry)
    reached = program_names([setup_tree, *trees], wanted)
    flags = [asserts_on_program(tree, reached) for tree in trees]
    if not any(flags):
        raise TestFormatError(
            f"no test involves the program (asserts on constants or the tests' own values pass any program): "
            f"{tests.asserts[0][:80]!r}"
        )
    steps = [
        _step(t.body[0], flag) if len(t.body) == 1 else TestStep(text, test=flag)
        for t, text, flag in zip(trees, tests.asserts, flags)
    ]
    return Suite(bind={name: name for name in wanted}, setup=tests.setup, tests=tuple(steps))


@functools.lru_cache(maxsize=1024)
def humaneval_suite(tests: HumanEvalTests) -> Suite:
    """The suite of a HumanEval task: the statements of ``check``'s body, each ``assert`` a test.

    The prompt and the test module run in the judge (the prompt's helpers, such
    as ``poly`` for ``find_zero``, are the prompt's, not the program's); only
    ``candidate``, also under the entry point's own name, is the program's function.
    A statement whose asserts do not involve it (``assert True, "..."``) runs and is not a test.

    >>> test = 'def check(candidate):\\n    assert True, "debugging"\\n    assert candidate(1) == 1\\n'
    >>> humaneval_suite(HumanEvalTests("def f(n):\\n    pass\\n", test, "f")).size
    1
    """
    tree = _syntax(tests.test, "test")
    prompt_tree = _syntax(tests.prompt, "prompt")
    check = next((s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == "check"), None)
    if check is None:
        raise TestFormatError("the HumanEval test defines no check(candidate) function")
    parameter = check.args.args[0].arg if check.args.args else "candidate"
    if not tests.entry_point.isidentifier():
        raise TestFormatError(f"the entry point {tests.entry_point!r} is not a function name")
    setup = f"{tests.prompt}\n\n{tests.test}\n\n{tests.entry_point} = {parameter}\n"
    reached = program_names([prompt_tree, tree], {parameter, tests.entry_point})
    flags = [asserts_on_program(stmt, reached) for stmt in check.body]
    steps = tuple(_step(stmt, flag) for stmt, flag in zip(check.body, flags))
    if not any(flags) or any(isinstance(n, (ast.Return, ast.Global, ast.Nonlocal)) for n in ast.walk(check)):
        if not any(_reads_name(stmt, reached) for stmt in check.body):
            raise TestFormatError(f"check({parameter}) never uses {parameter}: it tests nothing of the program")
        steps = (TestStep(f"check({parameter})"),)
    return Suite(bind={parameter: tests.entry_point}, setup=setup, tests=steps)


def check_tests(value: Any) -> Tests | None:
    """:func:`parse_tests`, and the suites built, so that every problem a row's tests have is raised now.

    >>> check_tests({"format": "assert", "asserts": ["print(1)"]})
    Traceback (most recent call last):
    ...
    rewardsmith.rewards.code_formats.TestFormatError: test 1 asserts nothing (it would pass any program): 'print(1)'
    """
    tests = parse_tests(value)
    if isinstance(tests, AssertTests):
        assert_suite(tests)
    elif isinstance(tests, HumanEvalTests):
        humaneval_suite(tests)
    return tests


def count_tests(tests: Tests) -> int:
    """How many tests a row has.

    >>> count_tests(StdioTests(("1",), ("1",))), count_tests(AssertTests(("assert f()", "assert g()")))
    (1, 2)
    """
    if isinstance(tests, AssertTests):
        return assert_suite(tests).size
    if isinstance(tests, HumanEvalTests):
        return humaneval_suite(tests).size
    return len(tests.inputs)


def call_suite(tests: CallTests) -> Suite:
    """The suite of call tests: ``fn_name`` (or ``Solution().fn_name``) called with each argument list."""
    return Suite(
        bind={"__target__": tests.fn_name, "__Solution__": "Solution"},
        calls=tests.inputs,
        call_name=tests.fn_name,
    )
