"""The SandboxFusion backend against a real HTTP server on 127.0.0.1 that speaks ``/run_code`` and runs the code."""

from __future__ import annotations

import base64
import json

import pytest
from sandbox_helpers import block, requires_sandbox, stdio
from sandboxfusion_server import FakeSandboxFusion

from rewardsmith import get_reward
from rewardsmith.sandbox import Limits, Program, SandboxError, SandboxFusionBackend, Suite, TestStep, get_backend

pytestmark = [requires_sandbox, pytest.mark.xdist_group("sandbox")]


@pytest.fixture
def server():
    with FakeSandboxFusion() as running:
        yield running


def test_requests_carry_what_run_code_takes(server):
    backend = get_backend("sandboxfusion", url=server.root, max_retries=0)
    program = Program("print(open('data.txt').read() + input())", files={"data.txt": "x="})
    run = backend.run(program, ["1", "2"], Limits(timeout=7, memory_mb=256))
    assert [r.stdout for r in run.runs] == ["x=1\n", "x=2\n"] and all(r.ok for r in run.runs)
    body = server.requests[0]
    assert body["language"] == "python" and body["stdin"] == "1" and body["run_timeout"] == 7
    assert body["memory_limit_MB"] == 256 and base64.b64decode(body["files"]["data.txt"]) == b"x="
    assert set(body) == {"code", "language", "stdin", "compile_timeout", "run_timeout", "memory_limit_MB", "files"}


def test_compiled_languages_and_timeouts(server):
    backend = SandboxFusionBackend(url=server.root + "/run_code")
    run = backend.run(Program('#include <cstdio>\nint main(){ std::puts("hi"); }', "cpp"), [""], Limits(timeout=10))
    assert run.compiled and run.runs[0].stdout == "hi\n" and server.requests[0]["language"] == "cpp"
    broken = backend.run(Program("int main() { return }", "cpp"), [""], Limits(timeout=10))
    assert not broken.compiled and broken.runs[0].status == "not_run"
    slow = backend.run(Program("while True:\n    pass"), [""], Limits(timeout=1)).runs[0]
    assert slow.status == "timeout"


def test_server_errors_are_retried_then_sandbox_errors(server):
    backend = SandboxFusionBackend(url=server.root, max_retries=2)
    server.script.append((503, {"detail": "busy"}))
    assert backend.run(Program("print(5)"), [""], Limits()).runs[0].stdout == "5\n"
    server.script.append((200, {"status": "SandboxError", "message": "runner crashed", "run_result": None}))
    with pytest.raises(SandboxError, match="runner crashed"):
        backend.run(Program("print(5)"), [""], Limits())


def test_python_suites_run_through_the_judge_on_the_server(server):
    backend = SandboxFusionBackend(url=server.root)
    suite = Suite(bind={"double": "double"}, tests=(TestStep("assert double(2) == 4", "double(2)", "4"),) * 2)
    right = backend.run_suite(Program("def double(x):\n    return 2 * x\n"), suite, Limits(timeout=5), budget=20)
    cheat = backend.run_suite(Program("import sys\ndef double(x):\n    return 0\nsys.exit(0)\n"), suite, Limits())
    assert [t.passed for t in right.tests] == [True, True]
    assert [t.passed for t in cheat.tests] == [False, False]
    assert json.loads(server.requests[0]["stdin"])["suite"]["bind"] == {"double": "double"}


def test_code_tests_on_the_remote_backend(server):
    reward = get_reward("code_tests", workers=2, backend="sandboxfusion", backend_settings={"url": server.root})
    tests = [stdio("3\n", "1 2"), json.dumps(["assert add(1, 2) == 3"]), stdio("3\n", "1 2")]
    completions = [block("print(sum(map(int, input().split())))"), block("def add(a, b):\n    return a + b"), "none"]
    assert reward(completions=completions, tests=tests) == [1.0, 1.0, 0.0]
    reward.close()


def test_an_unreachable_server_leaves_the_sample_unscored():
    reward = get_reward(
        "code_tests",
        workers=1,
        backend="sandboxfusion",
        backend_settings={"url": "http://127.0.0.1:9", "max_retries": 0},
    )
    result = reward.explain(completions=[block("print(1)")], tests=[stdio("1")])[0]
    assert result.score is None and "SandboxFusion" in result.reason and reward.stats["errors"] == 1


def test_the_url_is_checked_when_the_backend_is_made():
    with pytest.raises(Exception, match="url"):
        get_reward("code_tests", backend="sandboxfusion")
