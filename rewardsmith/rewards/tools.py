"""Rewards on a rollout's tool use: ``tool_schema``, ``tool_success``, ``tool_efficiency``, ``environment_reward``.

Each reads the completion as a :class:`~rewardsmith.core.trajectory.Trajectory`
(TRL's conversational completions after its tool loop, OpenAI ``tool_calls``,
or ``<tool_call>`` blocks in text), so the shape a rollout comes in does not
matter. ``tool_call_match`` (calls against expected ones) is in
:mod:`rewardsmith.rewards.tool_match`.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from rewardsmith.core.engine import OnError, Scored, score_safely
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.injection import Column, Input, Value
from rewardsmith.core.inputs import Batch
from rewardsmith.core.lookup import import_object
from rewardsmith.core.registry import register_reward
from rewardsmith.core.result import RewardResult, to_score
from rewardsmith.core.reward import Reward
from rewardsmith.core.trajectory import ToolCall, Trajectory, call_counts
from rewardsmith.rewards.group_length import GroupRelative
from rewardsmith.rewards.json_formats import schema_validator

__all__ = [
    "EnvironmentReward",
    "ToolEfficiency",
    "ToolSchema",
    "ToolSuccess",
    "ToolsSetting",
    "call_problem",
    "failure_reason",
    "schema_checks",
    "tool_schemas",
]


def _function_schema(tool: Any) -> dict[str, Any]:
    """One tool as ``{"name", "parameters"}``: from a Python function (as TRL builds it) or a JSON schema."""
    if isinstance(tool, str):
        tool = import_object(tool, what="tool")
    if callable(tool):
        from transformers.utils import get_json_schema

        try:
            tool = get_json_schema(tool)
        except Exception as exc:  # transformers raises its own errors for missing hints or docstrings
            name = getattr(tool, "__name__", repr(tool))
            raise RewardConfigError(
                f"cannot build the JSON schema of tool {name!r}: {exc}. A tool needs type hints on every parameter "
                "and a Google-style docstring with an Args: section (what TRL requires too)"
            ) from exc
    if isinstance(tool, dict) and isinstance(tool.get("function"), dict):
        tool = tool["function"]
    if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
        raise RewardConfigError(f"a tool is a function, an import path or a JSON schema with a name; got {tool!r}")
    parameters = tool.get("parameters") or {"type": "object", "properties": {}}
    return {"name": tool["name"], "parameters": parameters}


def tool_schemas(tools: Any) -> dict[str, dict[str, Any]]:
    """The JSON schema of each tool's arguments, by name (arguments it does not list are errors unless it allows them).

    >>> def add(a: int, b: int) -> int:
    ...     '''Add two numbers.
    ...
    ...     Args:
    ...         a: the first
    ...         b: the second
    ...     '''
    ...     return a + b
    >>> tool_schemas([add])["add"]["required"]
    ['a', 'b']
    """
    if isinstance(tools, str):
        tools = json.loads(tools) if tools.lstrip().startswith(("[", "{")) else [tools]
    if isinstance(tools, dict) or callable(tools):
        tools = [tools]
    out: dict[str, dict[str, Any]] = {}
    for tool in tools or []:
        schema = _function_schema(tool)
        parameters = dict(schema["parameters"])
        if "properties" in parameters:  # listed arguments only, unless the schema allows others
            parameters.setdefault("additionalProperties", False)
        out[schema["name"]] = parameters
    return out


@lru_cache(maxsize=64)
def _validators(key: str) -> dict[str, Any]:
    return {name: schema_validator(schema) for name, schema in json.loads(key).items()}


@dataclass
class ToolsSetting:
    """The ``tools`` setting (functions, import paths or JSON schemas), else the row's ``tools_column``, as the
    ``row_tools`` input of a reward that checks calls against the tools' schemas (mixed into the reward)."""

    tools: Any = None
    tools_column: str = "tools"

    def __post_init__(self) -> None:
        super().__post_init__()  # type: ignore[misc]
        if self.tools is not None:
            self.__dict__["_key"] = json.dumps(tool_schemas(self.tools), sort_keys=True)

    def inputs(self) -> dict[str, Input]:
        if self.tools is not None:
            return {"row_tools": Value(self.__dict__["_key"])}
        return {"row_tools": Column(self.tools_column)}


def schema_checks(row_tools: Any, fixed: bool = False) -> dict[str, Any] | RewardResult:
    """The validators of a row's tools by name, or an unscored result when the tool list is unusable.

    ``fixed``: ``row_tools`` is the key a ``tools`` setting made (the schemas as sorted JSON).

    >>> checks = schema_checks([{"name": "add", "parameters": {"type": "object"}}])
    >>> sorted(checks), schema_checks([{"no": "name"}]).reason[:15]
    (['add'], 'unusable tools:')
    """
    try:
        return _validators(row_tools if fixed else json.dumps(tool_schemas(row_tools), sort_keys=True))
    except Exception as exc:  # an unusable tool list makes the row unscorable, not the calls wrong
        return RewardResult(None, f"unusable tools: {str(exc).splitlines()[0][:120]}")


def call_problem(call: ToolCall, checks: dict[str, Any]) -> str | None:
    """What is wrong with a call against the tools' validators (:func:`schema_checks`), or ``None``.

    >>> from rewardsmith.core.trajectory import read_call
    >>> checks = schema_checks([{"name": "add", "parameters": {"type": "object", "properties": {
    ...     "a": {"type": "integer"}}}}])
    >>> call_problem(read_call({"name": "rm", "arguments": {}}), checks)
    "unknown tool 'rm'"
    >>> call_problem(read_call({"name": "add", "arguments": {"a": "one"}}), checks)
    "add: 'one' is not of type 'integer'"
    """
    if call.malformed:
        return f"malformed call ({call.malformed})"
    if call.name not in checks:
        return f"unknown tool {call.name!r}"
    try:
        error = next(iter(checks[call.name].iter_errors(call.arguments)), None)
    except RecursionError:
        return f"{call.name}: arguments nested too deeply"
    return None if error is None else f"{call.name}: {error.message[:100]}"


@register_reward("tool_schema")
@dataclass
class ToolSchema(ToolsSetting, Reward):
    """Every call names a tool that exists, with arguments that validate against that tool's JSON schema.

    Tools are the ``tools`` setting (Python functions or their import paths,
    whose schema is built from the signature and docstring as TRL builds it,
    or JSON schemas), else the row's ``tools_column``. Extra arguments are
    errors unless a schema allows them. The score is 1 when every call is
    valid, else 0: padding a rollout with more valid calls earns nothing (a
    share of valid calls would rise with each junk call). The reason counts
    the valid calls and names the first bad one. A rollout with no calls
    scores ``None`` (nothing to check; pair it with a reward that wants calls).

    Columns: ``tools`` (configurable; not needed with the ``tools`` setting). Range: [0, 1] or None.

    >>> tools = [{"name": "add", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}},
    ...                                          "required": ["a"]}}]
    >>> r = ToolSchema(tools=tools)
    >>> r(completions=['<tool_call>{"name": "add", "arguments": {"a": 1}}</tool_call>',
    ...                '<tool_call>{"name": "add", "arguments": {"a": "one"}}</tool_call>'
    ...                '<tool_call>{"name": "rm", "arguments": {}}</tool_call>', "no calls"])
    [1.0, 0.0, None]
    """

    default_name = "tool_schema"
    score_range = (0.0, 1.0)
    on_error: OnError = field(default="zero", kw_only=True)

    def score(self, trajectory: Trajectory, row_tools: Any) -> RewardResult:
        if not trajectory.calls:
            return RewardResult(None, "no tool calls to check")
        if row_tools is None:
            return RewardResult(None, "no tools for this row")
        checks = schema_checks(row_tools, self.tools is not None)
        if isinstance(checks, RewardResult):
            return checks
        problems = [call_problem(call, checks) for call in trajectory.calls]
        bad = [p for p in problems if p is not None]
        value = 0.0 if bad else 1.0
        reason = f"{len(problems) - len(bad)} of {len(problems)} call(s) valid"
        return RewardResult(
            value, reason + (f"; {bad[0]}" + (f" (+{len(bad) - 1} more)" if len(bad) > 1 else "") if bad else "")
        )


def failure_reason(call: ToolCall) -> str:
    """Why a call that is not ``ok`` failed: malformed, an error back, or it never ran.

    >>> from rewardsmith.core.trajectory import read_call
    >>> failure_reason(read_call({"name": "add", "arguments": {}}))
    'add never ran (no result came back, or it came after the final answer)'
    """
    if call.malformed:
        return f"malformed ({call.malformed})"
    if call.error is not None:
        return f"{call.name} failed: {call.error[:80]}"
    return f"{call.name} never ran (no result came back, or it came after the final answer)"


@register_reward("tool_success")
@dataclass
class ToolSuccess(Reward):
    """Every call of the rollout returned without an error: 1, else 0.

    Malformed calls, calls whose tool reported an error (TRL writes
    ``{'error': ...}`` as the tool message; ``{"error": null, ...}`` is no
    error) and calls that never ran (made with or after the final answer, so
    no result came back) fail. One failure is enough: a share of successful
    calls would let a failed rollout padded with junk calls that succeed score
    near 1. The reason counts the successful calls. A rollout with no calls
    scores ``None``.

    Columns: none. Range: [0, 1] or None.

    >>> ok = [{"role": "assistant", "tool_calls": [{"function": {"name": "add", "arguments": {"a": 1}}}]},
    ...       {"role": "tool", "name": "add", "content": "2"}, {"role": "assistant", "content": "2"}]
    >>> failed = ok[:1] + [{"role": "tool", "name": "add", "content": "{'error': 'bad input'}"}] + ok[2:]
    >>> ToolSuccess()(completions=[ok, failed, "no calls"])
    [1.0, 0.0, None]
    """

    default_name = "tool_success"
    score_range = (0.0, 1.0)
    on_error: OnError = field(default="zero", kw_only=True)

    def score(self, trajectory: Trajectory) -> RewardResult:
        (share,) = _success_shares([trajectory])
        if share is None:
            return RewardResult(None, "no tool calls")
        made = trajectory.call_count
        reason = f"{made - trajectory.failed_calls} of {made} call(s) succeeded"
        if trajectory.failed_calls:
            reason = f"{reason}; {failure_reason(next(c for c in trajectory.calls if not c.ok))}"
        return RewardResult(share, reason)

    def run_batch(self, batch: Batch, *, explain: bool = False) -> Scored:
        """Plain scores of a batch scored in this process come from the trajectories' counts (no call is built,
        no reason written); ``explain`` and worker processes go through :meth:`score`."""
        if explain or not self.runs_inline or type(self).score is not ToolSuccess.score or not len(batch):
            return super().run_batch(batch, explain=explain)
        shares = score_safely(lambda b: _success_shares(b.trajectories), batch, on_error=self.on_error, name=self.name)
        return self.finish(batch, shares)


def _success_shares(trajectories: list[Trajectory]) -> list[float | None]:
    """1 for each rollout whose calls all succeeded, 0 when one failed (``None``: no calls)."""
    made, failed = call_counts(trajectories)
    return [(0.0 if f else 1.0) if m else None for m, f in zip(made, failed)]


@register_reward("tool_efficiency")
@dataclass
class ToolEfficiency(GroupRelative):
    """Fewer tool calls and turns than the prompt's other rollouts is better, only when correct.

    The cost of a rollout is its calls plus its assistant turns. Within the
    prompt's group (like ``group_length``): ``0.5 - (cost - min) / (max -
    min)`` for a correct rollout, ``min(0, ...)`` of it for a wrong one (never
    a bonus for not trying), 0 when all costs are equal. Correctness comes
    from ``correct_column`` or from another reward (``correctness=...``); at
    or above ``threshold`` is correct; unknown correctness gives ``None``.

    Columns: ``correct`` (configurable), or those of the ``correctness`` reward. Range: [-0.5, 0.5].

    >>> call = '<tool_call>{"name": "add", "arguments": {}}</tool_call>'
    >>> ToolEfficiency()(prompts=["p"] * 3, completions=[call, call * 3, call * 2], correct=[True, True, False])
    [0.5, -0.5, 0.0]
    """

    default_name = "tool_efficiency"
    score_range = (-0.5, 0.5)
    cost_unit = "calls+turns"

    def costs(self, batch: Batch) -> list[Any]:
        return [t.call_count + t.turns for t in batch.trajectories]


def _resolve(state: Any) -> Callable[[Any], Any] | None:
    if state is None or callable(state):
        return state
    if isinstance(state, str):
        return import_object(state, what="environment state function")
    raise RewardConfigError(f"state must be a function of the environment or its import path, got {state!r}")


@register_reward("environment_reward")
@dataclass
class EnvironmentReward(Reward):
    """The rollout's environment scores it: its ``get_reward()`` (or another ``method``), or ``state(environment)``.

    The environment is the instance TRL passes as ``environments`` (one per
    rollout, from ``environment_factory``). As a rewardsmith reward it is
    weighted, logged, fuzzed and audited like the others. Rows without an
    environment, or whose environment lacks the method, score ``None``.

    Columns: none (reads the ``environment`` input). Range: what the environment returns.

    >>> class Counter:
    ...     def __init__(self): self.hits = 0
    ...     def get_reward(self): return float(self.hits >= 2)
    >>> envs = [Counter(), Counter()]
    >>> envs[0].hits = 3
    >>> EnvironmentReward()(completions=["a", "b"], environments=envs)
    [1.0, 0.0]
    >>> EnvironmentReward(state=lambda env: env.hits / 10)(completions=["a", "b"], environments=envs)
    [0.3, 0.0]
    """

    default_name = "environment_reward"
    method: str = "get_reward"
    state: Any = None

    def __post_init__(self) -> None:
        super().__post_init__()
        self.__dict__["_state"] = _resolve(self.state)

    def score(self, environment: Any) -> RewardResult:
        if environment is None:
            return RewardResult(None, "no environment for this rollout")
        state = self.__dict__.get("_state")
        if state is not None:
            value = state(environment)
        else:
            method = getattr(environment, self.method, None)
            if not callable(method):
                return RewardResult(None, f"{type(environment).__name__} has no {self.method}()")
            value = method()
        if inspect.isawaitable(value):
            from rewardsmith.core.async_reward import run_sync

            value = run_sync(value)
        if isinstance(value, RewardResult):
            return value
        return RewardResult(to_score(value, self.name), f"{type(environment).__name__}.{self.method}()")
