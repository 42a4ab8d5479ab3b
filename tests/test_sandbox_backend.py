"""The sandbox on its own: running programs under limits, the limits-only fallback, ``isolation="require"``,
spare sandboxes, and ``rewardsmith sandbox doctor`` in both modes."""

from __future__ import annotations

import logging
import os
import threading

import pytest
from sandbox_helpers import requires_namespaces, requires_sandbox, sandboxes_below_me, settle, with_marker
from typer.testing import CliRunner

from rewardsmith import get_reward
from rewardsmith.cli import app
from rewardsmith.sandbox import (
    Limits,
    LocalBackend,
    Program,
    SandboxError,
    SandboxUnavailableError,
    ToolchainMissingError,
    forget_detection,
)
from rewardsmith.sandbox.doctor import diagnose
from rewardsmith.sandbox.launch import close_sandboxes

pytestmark = [requires_sandbox, pytest.mark.xdist_group("sandbox")]

LIMITS = Limits(timeout=5)


@pytest.fixture(params=["namespaces", "namespaces, a sandbox per program", "limits"])
def backend(request):
    if request.param.startswith("namespaces"):
        if not LocalBackend().isolation_info().isolated:
            pytest.skip("bubblewrap cannot create namespaces here")
        return LocalBackend(isolation="require", prestart=False, reuse=request.param == "namespaces")
    return LocalBackend(isolation="limits", prestart=False)


def test_a_program_runs_on_each_input_in_order(backend):
    program = Program("import sys\nprint(sys.stdin.read().upper(), end='')")
    run = backend.run(program, ["a", "bb", ""], LIMITS)
    assert [r.stdout for r in run.runs] == ["A", "BB", ""] and all(r.ok for r in run.runs)


def test_stop_ends_the_runs_early(backend):
    seen = []
    run = backend.run(Program("print(input())"), ["1", "2", "3"], LIMITS, stop=lambda i, r: seen.append(i) or i == 1)
    assert seen == [0, 1] and [r.status for r in run.runs] == ["ok", "ok", "not_run"]


def test_limits_hold(backend):
    cases = {
        "open('big', 'wb').write(b'x' * (8 << 20))": ("exit", "File too large"),
        "[open(f'f{i}', 'w') for i in range(400)]": ("exit", "Too many open files"),
        "while True:\n    pass": ("timeout", ""),
        "bytearray(3 << 30)": ("exit", "MemoryError"),
    }
    limits = Limits(timeout=2, file_size_mb=1, open_files=64)
    for source, (status, message) in cases.items():
        run = backend.run(Program(source), [""], limits).runs[0]
        assert run.status == status and message in run.stderr, (source, run)


def test_cpu_time_is_capped_apart_from_wall_time(backend):
    run = backend.run(Program("while True:\n    pass"), [""], Limits(timeout=20, cpu_seconds=1)).runs[0]
    assert run.status == "signal" and run.seconds < 20, run  # the CPU limit, not the wall-clock timeout


def test_the_environment_is_empty_but_for_the_basics(backend, monkeypatch):
    monkeypatch.setenv("RS_BACKEND_SECRET", "hunter2")
    run = backend.run(Program("import os\nprint(sorted(os.environ))"), [""], LIMITS).runs[0]
    assert "RS_BACKEND_SECRET" not in run.stdout and "PATH" in run.stdout


def test_a_daemon_is_killed_with_its_run(backend):
    marker = f"rsdaemon{os.getpid()}"
    program = (
        "import os\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        f"        os.execv('/bin/sleep', ['{marker}', '600'])\n"
        "    os._exit(0)\n"
        "print('started')\n"
    )
    assert backend.run(Program(program), [""], LIMITS).runs[0].stdout == "started\n"
    assert not settle(lambda: with_marker(marker))
    assert not settle(sandboxes_below_me)


def test_the_process_limit_holds(backend):
    if os.geteuid() != 0 and not backend.isolation_info().isolated:
        pytest.skip("limits only, as this user: the process limit counts every process of the user")
    program = (
        "import os, time\nn = 0\ntry:\n    while n < 500:\n        if os.fork() == 0:\n"
        "            time.sleep(5)\n            os._exit(0)\n        n += 1\nexcept OSError:\n    pass\nprint(n)"
    )
    run = backend.run(Program(program), [""], Limits(timeout=10, processes=20)).runs[0]
    assert run.ok and int(run.stdout) < 25


def test_compiled_languages_compile_once_and_report_errors(backend):
    run = backend.run(Program("int main() { return 3; }", "cpp"), ["", ""], LIMITS)
    assert run.compile is not None and run.compile.ok and [r.exit_code for r in run.runs] == [3, 3]
    broken = backend.run(Program("int main() { return }", "cpp"), [""], LIMITS)
    assert not broken.compiled and "error" in broken.compile.stderr and broken.runs[0].status == "not_run"


def test_a_missing_toolchain_is_named():
    with pytest.raises(ToolchainMissingError, match="/nowhere/node"):
        LocalBackend(tools={"javascript": "/nowhere/node"}).run(Program("1", "javascript"), [""], LIMITS)


def test_falling_back_warns_once_and_still_runs(caplog):
    forget_detection()
    try:
        backend = LocalBackend(bwrap="/bin/false", prestart=False)  # a bubblewrap that always fails
        with caplog.at_level(logging.WARNING, logger="rewardsmith"):
            first = backend.run(Program("print(6 * 7)"), [""], LIMITS)
            second = backend.run(Program("print(6 * 7)"), [""], LIMITS)
        assert backend.isolation_info().mode == "limits"
        assert first.runs[0].stdout == second.runs[0].stdout == "42\n"
        warnings = [r for r in caplog.records if "SANDBOX WARNING" in r.getMessage()]
        assert len(warnings) == 1 and "isolation='require'" in warnings[0].getMessage()
    finally:
        forget_detection()


def test_require_refuses_when_namespaces_are_unavailable():
    forget_detection()
    try:
        with pytest.raises(SandboxUnavailableError, match="isolation='require'"):
            LocalBackend(isolation="require", bwrap="/bin/false").run(Program("print(1)"), [""], LIMITS)
        with pytest.raises(SandboxUnavailableError):  # a config error: caught when the reward is made
            get_reward("code_tests", isolation="require", backend_settings={"bwrap": "/bin/false"})
    finally:
        forget_detection()


def test_an_interpreter_that_cannot_run_is_an_error():
    with pytest.raises(SandboxError, match="no Python interpreter"):
        LocalBackend(python="/nonexistent/python3").isolation_info()


@requires_namespaces
def test_spare_sandboxes_are_ready_and_stop_on_request():
    backend = LocalBackend(prestart=True, reuse=False)
    assert backend.run(Program("print(1)"), [""], LIMITS).runs[0].stdout == "1\n"
    assert list(sandboxes_below_me(spares=True).values()).count("bwrap") >= 1  # the spare, waiting
    assert backend.run(Program("print(2)"), [""], LIMITS).runs[0].stdout == "2\n"  # a spare did it
    close_sandboxes()
    assert not settle(sandboxes_below_me)


@requires_namespaces
def test_doctor_in_namespaces():
    result = CliRunner().invoke(app, ["sandbox", "doctor"])
    assert result.exit_code == 0, result.output
    assert "mode: namespaces (bubblewrap)" in result.output and "interfaces seen: lo" in result.output
    report = diagnose()
    assert report.isolation.isolated and report.checks and all(check.ok for check in report.checks), report.checks
    assert {c.name: c for c in report.checks}["sandbox per program"].detail.startswith("new namespaces for each")


def test_doctor_in_limits_only_mode():
    result = CliRunner().invoke(app, ["sandbox", "doctor", "--isolation", "limits"])
    assert result.exit_code == 0, result.output
    assert "mode: limits only" in result.output and "language python" in result.output
    checks = {check.name: check for check in diagnose("limits").checks}
    assert checks["language python"].ok and checks["environment"].ok and checks["memory limit"].ok
    assert checks["sandbox per program"].detail.startswith("limits only")
    assert not checks["other processes"].ok  # the host's processes are in sight: the doctor says so


def test_doctor_when_namespaces_are_required_but_unavailable():
    forget_detection()
    try:
        result = CliRunner().invoke(app, ["sandbox", "doctor", "--isolation", "require", "--bwrap", "/bin/false"])
        assert result.exit_code == 1 and "isolation='require'" in result.output
    finally:
        forget_detection()


def test_programs_run_from_threads_that_come_and_go():
    backend = LocalBackend(prestart=True)
    out: list[str] = []
    for _ in range(3):  # a sandbox dies with the thread that started it: spares must not be shared across threads
        thread = threading.Thread(
            target=lambda: out.append(backend.run(Program("print(1)"), [""], LIMITS).runs[0].stdout)
        )
        thread.start()
        thread.join()
    assert out == ["1\n"] * 3
    assert backend.run(Program("print(2)"), [""], LIMITS).runs[0].stdout == "2\n"


def test_a_spare_that_died_waiting_is_replaced():
    backend = LocalBackend(prestart=1, reuse=False)
    assert backend.run(Program("print(1)"), [""], LIMITS).runs[0].stdout == "1\n"
    spares = sandboxes_below_me(spares=True)
    assert spares
    for pid in spares:
        os.kill(pid, 9)
    assert backend.run(Program("print(2)"), [""], LIMITS).runs[0].stdout == "2\n"
