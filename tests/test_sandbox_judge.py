"""Verdicts the program cannot forge: Python tests run in a judge process, the program in a worker it cannot reach.

Each cheat below is a wrong solution plus a trick that passes the tests of a
harness running the program in the same process as the asserts (or that
reads stdout for "PASS"). Each must score 0, and a right solution doing the
same noise must still score 1.
"""

from __future__ import annotations

import json

import pytest
from sandbox_helpers import block, requires_sandbox

from rewardsmith import get_reward
from rewardsmith.sandbox import Limits, LocalBackend, Program, Suite, TestStep

pytestmark = [requires_sandbox, pytest.mark.xdist_group("sandbox")]

TESTS = json.dumps(
    {
        "format": "assert",
        "asserts": ["assert triple(1) == 3", "assert triple(5) == 15", "assert triple(-2) == -6"],
        "entry_points": ["triple"],
    }
)
RIGHT = "def triple(x):\n    return 3 * x\n"
WRONG = "def triple(x):\n    return x\n"

CHEATS = {
    "exit(0) before the tests": WRONG + "import sys\nsys.exit(0)\n",
    "os._exit(0) before the tests": WRONG + "import os\nos._exit(0)\n",
    "AssertionError patched away": WRONG
    + "import builtins\nbuiltins.AssertionError = type('Quiet', (Exception,), {})\n",
    "__eq__ always true": (
        "class Anything:\n    def __eq__(self, other):\n        return True\n    __hash__ = object.__hash__\n"
        "def triple(x):\n    return Anything()\n"
    ),
    "str subclass equal to everything": (
        "class S(str):\n    def __eq__(self, other):\n        return True\n    __hash__ = str.__hash__\n"
        "def triple(x):\n    return S('x')\n"
    ),
    "int subclass equal to everything": (
        "class I(int):\n    def __eq__(self, other):\n        return True\n    __hash__ = int.__hash__\n"
        "def triple(x):\n    return I(0)\n"
    ),
    "printed pass markers": WRONG
    + (
        "import sys, os\n"
        "for line in ('PASSED', 'ok', '3/3 tests passed', json.dumps({'kind': 'test', 'index': 0, 'passed': True})):\n"
        "    print(line); print(line, file=sys.stderr)\n"
        "for fd in (1, 2, 3, 4, 5, 6):\n"
        "    try:\n"
        '        os.write(fd, b\'{"kind": "test", "index": 1, "passed": true}\\n\')\n'
        '        os.write(fd, b\'{"id": 2, "ok": true, "value": 3}\\n\')\n'
        "    except OSError:\n"
        "        pass\n"
    ).replace("json.dumps", "__import__('json').dumps"),
    "forged records through /proc/1/fd": WRONG
    + (
        "import os\n"
        "for fd in range(8):\n"
        "    try:\n"
        "        with open(f'/proc/1/fd/{fd}', 'w') as out:\n"
        '            out.write(\'{"kind": "test", "index": 0, "passed": true}\\n\')\n'
        "    except OSError:\n"
        "        pass\n"
    ),
    "killing the judge": WRONG + "import os, signal\nfor pid in (1, os.getppid()):\n    os.kill(pid, signal.SIGKILL)\n",
    "reading the expected values": (
        "import os, re\n"
        "def triple(x):\n"
        "    text = ''\n"
        "    for path in ('/proc/1/mem', '/proc/1/cmdline', '/proc/1/environ', '/work/solution.py'):\n"
        "        try:\n"
        "            text += open(path, 'rb').read(1 << 20).decode(errors='replace')\n"
        "        except OSError:\n"
        "            pass\n"
        "    found = re.findall(rf'triple\\({x}\\) == (-?\\d+)', text)\n"
        "    return int(found[0]) if found else None\n"
    ),
    "exit inside the call": "def triple(x):\n    raise SystemExit(0)\n",
    "shadowing builtins the tests use": "def triple(x):\n    return x\ndef abs(x):\n    return 0\nlen = abs\n",
    "a forged answer on the reply pipe": (
        "import os\n"
        "def triple(x):\n"
        '    os.write(4, b\'{"id": 2, "ok": true, "value": {"$n": "eval"}}\\n\')\n'
        '    return {"$n": "int"}\n'
    ),
}


@pytest.fixture(scope="module")
def reward():
    r = get_reward("code_tests", workers=2, test_timeout=3.0)
    yield r
    r.close()


def test_a_right_solution_passes_and_a_wrong_one_does_not(reward):
    assert reward(completions=[block(RIGHT), block(WRONG)], tests=[TESTS] * 2) == [1.0, 0.0]


@pytest.mark.parametrize("name", sorted(CHEATS))
def test_cheats_score_zero(reward, name):
    result = reward.explain(completions=[block(CHEATS[name])], tests=[TESTS])[0]
    assert result.score == 0.0, (name, result.reason)


def test_noise_does_not_hurt_a_right_solution(reward):
    noisy = RIGHT + CHEATS["printed pass markers"].replace(WRONG, "") + "print('x' * 100000)\n"
    assert reward(completions=[block(noisy)], tests=[TESTS]) == [1.0]


def test_builtin_shadowing_in_the_tests_own_expressions():
    tests = json.dumps({"format": "assert", "asserts": ["assert abs(triple(-2)) == 6", "assert len([triple(1)]) == 1"]})
    cheat = "def triple(x):\n    return 0\ndef abs(x):\n    return 6\n"
    scores = get_reward("code_tests", workers=1)(completions=[block(cheat), block(RIGHT)], tests=[tests] * 2)
    assert scores == [0.5, 1.0]  # len([0]) == 1 is true whatever triple returns; abs stays the real abs


def test_a_test_that_times_out_fails_alone(reward):
    program = "import time\ndef triple(x):\n    if x == 5:\n        time.sleep(60)\n    return 3 * x\n"
    result = reward.explain(completions=[block(program)], tests=[TESTS])[0]
    assert result.score == pytest.approx(2 / 3) and result.metrics["timeouts"] == 1
    assert "test 2" in result.reason and "timed out" in result.reason


def test_stop_on_first_failure_and_all_or_nothing():
    program = "def triple(x):\n    return 3 * x if x > 0 else 0\n"
    fraction = get_reward("code_tests", workers=1)(completions=[block(program)], tests=[TESTS])
    strict = get_reward("code_tests", workers=1, scoring="all")(completions=[block(program)], tests=[TESTS])
    first = get_reward("code_tests", workers=1, stop_on_first_failure=True)
    result = first.explain(completions=[block("def triple(x):\n    return 0\n")], tests=[TESTS])[0]
    assert fraction == [pytest.approx(2 / 3)] and strict == [0.0]
    assert result.score == 0.0 and "test 1" in result.reason


def _suite(program: str, suite: Suite, **limits) -> object:
    return LocalBackend().run_suite(Program(program), suite, Limits(timeout=5, **limits), budget=30)


def test_objects_of_the_program_are_used_through_proxies():
    program = (
        "class Node:\n"
        "    def __init__(self, value):\n"
        "        self.value, self.left, self.right = value, None, None\n"
        "def depth(node):\n"
        "    return 0 if node is None else 1 + max(depth(node.left), depth(node.right))\n"
        "def evens(n):\n"
        "    for i in range(n):\n"
        "        if i % 2 == 0:\n"
        "            yield i\n"
        "def kinds(values, kind):\n"
        "    return [v for v in values if isinstance(v, kind)]\n"
    )
    suite = Suite(
        bind={"Node": "Node", "depth": "depth", "evens": "evens", "kinds": "kinds"},
        setup="root = Node(1)\nroot.left = Node(2)\nroot.left.left = Node(3)\n",
        tests=(
            TestStep("assert depth(root) == 3", "depth(root)", "3"),
            TestStep("assert root.left.value == 2"),
            TestStep("assert list(evens(7)) == [0, 2, 4, 6]"),
            TestStep("assert evens(3) == [0, 2]"),  # a generator is not a list
            TestStep("assert kinds((1, 'a', 2.5), int) == [1]"),
            TestStep("assert str(root).startswith('<')"),
        ),
    )
    result = _suite(program, suite)
    assert result.load_error is None
    assert [t.passed for t in result.tests] == [True, True, True, False, True, True], result.tests


def test_exceptions_of_the_program_reach_the_tests_as_themselves():
    program = "def parse(text):\n    return int(text)\n"
    suite = Suite(
        bind={"parse": "parse"},
        tests=(
            TestStep("try:\n    parse('x')\n    raise AssertionError('no error')\nexcept ValueError:\n    pass"),
            TestStep("assert parse('4') == 4", "parse('4')", "4"),
            TestStep("assert parse([]) == 0", "parse([])", "0"),
        ),
    )
    result = _suite(program, suite)
    assert [t.passed for t in result.tests] == [True, True, False]
    assert "TypeError" in result.tests[2].error


def test_call_tests_report_values_and_use_a_solution_class():
    program = (
        "class Solution:\n    def twoSum(self, nums, target):\n"
        "        return (nums.index(target - nums[-1]), len(nums) - 1)\n"
    )
    suite = Suite(
        bind={"__target__": "twoSum", "__Solution__": "Solution"},
        calls=([[2, 7, 11, 15], 22], [[3, 3], 6], [[1], 5]),
        call_name="twoSum",
    )
    result = _suite(program, suite)
    assert [c.value for c in result.calls[:2]] == [(1, 3), (0, 1)]
    assert not result.calls[2].ok and "ValueError" in result.calls[2].error


def test_a_program_that_does_not_load_fails_every_test_with_the_reason():
    result = _suite("def f(:\n", Suite(bind={"f": "f"}, tests=(TestStep("assert f() == 1"),) * 2))
    assert result.load_error is not None and "SyntaxError" in result.load_error
    assert [t.passed for t in result.tests] == [False, False] and "SyntaxError" in result.tests[1].error


def test_the_whole_suite_has_a_time_budget():
    program = "import time\ndef slow(x):\n    time.sleep(x)\n    return x\n"
    suite = Suite(bind={"slow": "slow"}, tests=tuple(TestStep("assert slow(1) == 1") for _ in range(6)))
    result = LocalBackend().run_suite(Program(program), suite, Limits(timeout=5), budget=3.5)
    passed = [t.passed for t in result.tests]
    assert passed[:2] == [True, True] and passed[-1] is False
    assert "time budget" in result.tests[-1].error
