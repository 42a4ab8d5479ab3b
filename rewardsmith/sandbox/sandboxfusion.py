"""A remote backend: a SandboxFusion server's ``POST /run_code`` (the executor verl and others use).

Each run is one request: ``{"code", "language", "stdin", "compile_timeout",
"run_timeout", "memory_limit_MB", "files"}`` (files base64-encoded); the
answer's ``status`` is ``Success``, ``Failed`` or ``SandboxError``, with
``compile_result`` and ``run_result`` (``status``: ``Finished``, ``Error``,
``TimeLimitExceeded``; ``return_code``, ``stdout``, ``stderr``,
``execution_time``). A ``SandboxError``, an ``Error`` run, or a server that
cannot be reached after the retries is a
:class:`~rewardsmith.sandbox.limits.SandboxError` (the sample is not scored);
anything the program does is a result.

A suite of Python tests runs as one Python program: the sandbox's own runner
and judge (:mod:`rewardsmith.sandbox.inside`), with the job on ``stdin``, so the
program still runs in a worker process apart from the tests, and the
verdicts are what the judge printed. How well the program is kept away from
the judge's process there depends on that server's sandbox.

Requests go through rewardsmith's HTTP client (:mod:`rewardsmith.http`):
retries with back-off on timeouts, connection errors, ``429`` and ``5xx``.
"""

from __future__ import annotations

import base64
import contextlib
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rewardsmith.core.async_reward import run_sync
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.http import EndpointRequestError, HTTPSender, RetryPolicy, proxy_for, send_with_retries
from rewardsmith.sandbox.backend import Backend, Stop
from rewardsmith.sandbox.code import runner_source
from rewardsmith.sandbox.inside.wire import dumps
from rewardsmith.sandbox.jobs import suite_job
from rewardsmith.sandbox.languages import language
from rewardsmith.sandbox.limits import Limits, SandboxError
from rewardsmith.sandbox.results import (
    Execution,
    Program,
    RunResult,
    Suite,
    SuiteResult,
    records_from_text,
    suite_from_records,
)

__all__ = ["SandboxFusionBackend", "remote_suite_program"]

_LANGUAGES = {"python": "python", "cpp": "cpp", "javascript": "nodejs"}


@functools.cache
def remote_suite_program() -> str:
    """The Python program that runs a suite on a remote executor (the job comes on its ``stdin``).

    >>> compile(remote_suite_program(), "remote", "exec") is not None
    True
    """
    return (
        f"_SOURCE = {runner_source()!r}\n"
        "import marshal, sys\n"
        "BLOB = marshal.dumps(compile(_SOURCE, '<rewardsmith sandbox runner>', 'exec'))\n"
        "sys.argv[1:] = ['suite']\n"
        "exec(marshal.loads(BLOB))\n"
    )


def _files(files: Mapping[str, str]) -> dict[str, str]:
    return {name: base64.b64encode(text.encode("utf-8")).decode("ascii") for name, text in files.items()}


def _result(part: Any, what: str) -> RunResult:
    """A ``compile_result``/``run_result`` object as a :class:`RunResult`."""
    if not isinstance(part, dict):
        raise SandboxError(f"the SandboxFusion answer has no {what}")
    status = part.get("status")
    if status == "Error":
        raise SandboxError(f"SandboxFusion could not run the {what}: {str(part.get('stderr') or '')[-300:]}")
    code = part.get("return_code")
    seconds = float(part.get("execution_time") or 0.0)
    out = RunResult(
        "timeout" if status == "TimeLimitExceeded" else ("ok" if code == 0 else "exit"),
        exit_code=code if isinstance(code, int) else None,
        stdout=str(part.get("stdout") or ""),
        stderr=str(part.get("stderr") or "")[-4000:],
        seconds=seconds,
    )
    if out.status == "exit" and isinstance(code, int) and code < 0:
        out.status, out.signal, out.exit_code = "signal", -code, None
    return out


@dataclass(frozen=True)
class SandboxFusionBackend(Backend):
    """Programs run by a SandboxFusion server at ``url`` (see the module docs).

    >>> SandboxFusionBackend(url="http://127.0.0.1:8080").endpoint
    'http://127.0.0.1:8080/run_code'
    """

    url: str = ""
    request_timeout: float = 120.0
    max_retries: int = 4

    def __post_init__(self) -> None:
        if not isinstance(self.url, str) or not self.url.startswith(("http://", "https://")):
            raise RewardConfigError(f"the sandboxfusion backend needs url='http(s)://host:port', got {self.url!r}")

    @property
    def endpoint(self) -> str:
        """The ``run_code`` URL."""
        base = self.url.rstrip("/")
        return base if base.endswith("/run_code") else base + "/run_code"

    def describe(self) -> str:
        return f"sandboxfusion at {self.endpoint}"

    async def _send_async(self, body: dict[str, Any], timeout: float) -> dict[str, Any]:
        sender = HTTPSender({}, proxy_for(self.endpoint))

        def read(response: Any, attempts: int) -> dict[str, Any]:
            payload = response.json()
            if not isinstance(payload, dict) or "status" not in payload:
                raise ValueError("the answer is not a run_code result")
            return payload

        try:
            return await send_with_retries(
                lambda: contextlib.nullcontext(sender),
                lambda s: s.post(self.endpoint, body, timeout),
                read,
                policy=RetryPolicy(max_retries=self.max_retries),
                timeout=timeout,
                endpoint=f"the SandboxFusion server at {self.endpoint}",
            )
        finally:
            await sender.aclose()

    def post(self, body: dict[str, Any], timeout: float) -> dict[str, Any]:
        """One ``run_code`` request; its JSON answer (:class:`SandboxError` when the server fails for good)."""
        try:
            answer = run_sync(self._send_async(body, min(self.request_timeout, timeout)))
        except EndpointRequestError as exc:
            raise SandboxError(str(exc)) from exc
        if answer.get("status") == "SandboxError":
            raise SandboxError(f"SandboxFusion: {str(answer.get('message') or 'sandbox error')[:500]}")
        return answer

    def run(
        self,
        program: Program,
        inputs: Sequence[str],
        limits: Limits,
        *,
        compile_timeout: float = 60.0,
        stop: Stop | None = None,
    ) -> Execution:
        lang = language(program.language)
        compiled = lang.compile is not None
        body = {
            "code": program.source,
            "language": _LANGUAGES[lang.name],
            "compile_timeout": compile_timeout,
            "run_timeout": limits.timeout,
            "memory_limit_MB": limits.memory_mb,
            "files": _files(program.files),
        }
        runs = [RunResult("not_run") for _ in inputs]
        execution = Execution(runs, RunResult("ok") if compiled else None)
        for index, text in enumerate(inputs):
            answer = self.post({**body, "stdin": text}, compile_timeout + limits.timeout + 30)
            if compiled and answer.get("compile_result") is not None:
                execution.compile = _result(answer["compile_result"], "compile step")
                if not execution.compile.ok:
                    return execution
            runs[index] = _result(answer.get("run_result"), "program")
            if stop is not None and stop(index, runs[index]):
                break
        return execution

    def run_suite(
        self, program: Program, suite: Suite, limits: Limits, *, load_timeout: float = 10.0, budget: float = 60.0
    ) -> SuiteResult:
        suite_part = suite_job(program, suite, limits, load_timeout, budget)
        job = {"cwd": ".", "files": dict(program.files), "suite": suite_part}
        body = {
            "code": remote_suite_program(),
            "language": "python",
            "stdin": dumps(job),
            "run_timeout": load_timeout + budget + 10,
            "memory_limit_MB": -1,  # the program's own limit is set by the judge, per worker
        }
        answer = self.post(body, load_timeout + budget + 40)
        run = answer.get("run_result")
        records = records_from_text(str(run.get("stdout") or "")) if isinstance(run, dict) else []
        if not any(record.get("kind") == "done" for record in records):
            stderr = str(run.get("stderr") or "")[-300:] if isinstance(run, dict) else ""
            if not any(record.get("kind") == "load" for record in records):
                raise SandboxError(f"the test judge did not run on the SandboxFusion server: {stderr}")
        return suite_from_records(records, suite, "not run")
