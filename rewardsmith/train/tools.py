"""Tools and environments in ``rewardsmith train``: ``tools:`` and ``environment:``, checked before a model loads.

``tools:`` lists functions (``pkg.module:fn`` or ``./file.py:fn``) that TRL's
``GRPOTrainer`` exposes to the model; ``environment:`` is an environment
factory (a class or a function returning an instance), or a mapping from
names to factories, where each row's ``environment`` column picks one (TRL's
dict form). The dry run checks what TRL would otherwise find only after the
model has loaded, or in the middle of the first step:

* the installed transformers is one TRL's tool loop supports;
* the dataset is conversational (TRL's tool loop works on chat messages);
* every tool (and every public method of an environment) has the type hints
  and docstring TRL builds its JSON schema from;
* every environment has ``reset``;
* the model's chat template renders a tool-calling conversation, and TRL can
  parse the model's tool calls with it;
* with named environments, the data has an ``environment`` column whose
  values are all named, and each named environment is used;
* a reward that reads the ``environment`` input has an environment.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rewardsmith.config.imports import resolve_import_path
from rewardsmith.core.lookup import import_object
from rewardsmith.core.problems import ConfigError, ConfigProblems

__all__ = ["ToolSetup", "check_tool_setup", "resolve_tool_paths", "trainer_kwargs"]

#: The transformers releases TRL 1.16's tool loop needs: tools, and environments.
TOOLS_MIN_TRANSFORMERS = "5.0.0"
ENVIRONMENTS_MIN_TRANSFORMERS = "5.2.0"


@dataclass
class ToolSetup:
    """The resolved ``tools:`` and ``environment:`` of a config: what ``GRPOTrainer`` is given."""

    tools: list[Any] = field(default_factory=list)
    environment_factory: Any = None
    #: Environment names per factory (``None`` for a single factory), and their public methods (the tools they add).
    environment_tools: dict[str | None, list[str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def describe(self) -> list[tuple[str, str]]:
        """Rows for the dry-run plan."""
        rows = []
        if self.tools:
            rows.append(("tools", ", ".join(getattr(t, "__name__", repr(t)) for t in self.tools)))
        for name, methods in self.environment_tools.items():
            label = "environment" if name is None else f"environment {name}"
            rows.append((label, f"tools {', '.join(methods) or 'none'}"))
        return rows


def resolve_tool_paths(raw: dict[str, Any], base: Path) -> None:
    """Make the file paths in ``tools:`` and ``environment:`` absolute, from the config file's folder."""

    def fix(spec: Any) -> Any:
        if not isinstance(spec, str) or ".py:" not in spec:
            return spec
        file_part, _, attr = spec.rpartition(":")
        return f"{resolve_import_path(file_part, base)}:{attr}"

    if isinstance(raw.get("tools"), list):
        raw["tools"] = [fix(spec) for spec in raw["tools"]]
    environment = raw.get("environment")
    if isinstance(environment, dict):
        raw["environment"] = {name: fix(spec) for name, spec in environment.items()}
    elif isinstance(environment, str):
        raw["environment"] = fix(environment)


def _check_transformers(environments: bool) -> None:
    import importlib.util

    import transformers
    from packaging.version import Version

    version = Version(transformers.__version__)
    need = ENVIRONMENTS_MIN_TRANSFORMERS if environments else TOOLS_MIN_TRANSFORMERS
    if version < Version(need):
        what = "environment:" if environments else "tools:"
        raise ConfigError(
            f"{what} needs transformers >= {need} (TRL's tool loop), but {transformers.__version__} is installed; "
            f"pip install -U 'transformers>={need}'"
        )
    if version < Version("5.13.0") and importlib.util.find_spec("jmespath") is None:
        raise ConfigError(
            f"tools with transformers {transformers.__version__} (below 5.13) need jmespath to parse tool calls; "
            "pip install jmespath, or upgrade transformers"
        )


def _schema_problem(fn: Any, label: str) -> str | None:
    from transformers.utils import get_json_schema

    try:
        get_json_schema(fn)
    except Exception as exc:  # transformers raises several error types for missing hints and docstrings
        return (
            f"{label} cannot be offered to the model: {exc}. TRL builds each tool's JSON schema from its type hints "
            "and its Google-style docstring (a summary line and an Args: section naming every parameter)"
        )
    return None


def _resolve_tools(specs: list[Any], problems: ConfigProblems) -> list[Any]:
    tools = []
    for i, spec in enumerate(specs):
        with problems.check():
            tool = import_object(spec, what="tool", error=ConfigError) if isinstance(spec, str) else spec
            if not callable(tool):
                raise ConfigError(f"tools[{i}]: {spec!r} is not a function")
            problem = _schema_problem(tool, f"tools[{i}] ({getattr(tool, '__name__', spec)})")
            if problem:
                raise ConfigError(problem)
            tools.append(tool)
    return tools


def _environment_methods(factory: Any, label: str) -> list[str]:
    """Instantiate one environment (TRL does too) and check it: ``reset``, and tools TRL can describe."""
    try:
        instance = factory()
    except Exception as exc:
        raise ConfigError(f"{label}: calling the factory failed: {type(exc).__name__}: {exc}") from exc
    members = dict(inspect.getmembers(type(instance), predicate=inspect.isfunction))
    if "reset" not in members:
        raise ConfigError(
            f"{label}: {type(instance).__name__} has no reset() method; TRL calls reset() on each environment before "
            "every rollout (it may return text that is appended to the prompt)"
        )
    methods = [name for name in members if not name.startswith("_") and name not in ("reset", "get_reward")]
    for name in methods:
        problem = _schema_problem(getattr(instance, name), f"{label}: method {name}()")
        if problem:
            raise ConfigError(problem)
    return methods


def _resolve_environment(spec: Any, problems: ConfigProblems, setup: ToolSetup) -> None:
    named = spec if isinstance(spec, dict) else {None: spec}
    factories = {}
    for name, target in named.items():
        label = "environment" if name is None else f"environment.{name}"
        with problems.check():
            factory = import_object(target, what="environment factory", error=ConfigError)
            if not callable(factory):
                raise ConfigError(f"{label}: {target!r} is not a class or a function that returns an environment")
            setup.environment_tools[name] = _environment_methods(factory, label)
            factories[name] = factory
    if len(factories) == len(named):
        setup.environment_factory = factories if isinstance(spec, dict) else factories[None]


def _check_environment_column(dataset: Any, names: list[str], setup: ToolSetup) -> None:
    columns = list(getattr(dataset, "column_names", None) or [])
    if "environment" not in columns:
        raise ConfigError(
            f"environment: names {len(names)} environments ({', '.join(names)}), so each row picks one in an "
            f"'environment' column, which the dataset lacks (columns: {', '.join(columns) or 'none'})"
        )
    used = {str(value) for value in dataset["environment"]}
    unknown = sorted(used - set(names))
    if unknown:
        raise ConfigError(
            f"the dataset's 'environment' column names {', '.join(map(repr, unknown[:5]))}, which environment: does "
            f"not define (it defines {', '.join(names)})"
        )
    unused = [n for n in names if n not in used]
    if unused:
        setup.warnings.append(f"environment {', '.join(unused)} is defined but no row of the dataset uses it")


def _check_template(model_path: str, chat_template: str | None) -> None:
    from transformers import AutoTokenizer
    from trl.chat_template_utils import add_response_schema, supports_tool_calling

    tokenizer = AutoTokenizer.from_pretrained(model_path)
    if chat_template:
        tokenizer.chat_template = chat_template
    if not supports_tool_calling(tokenizer):
        raise ConfigError(
            f"the chat template of {model_path!r} cannot render a tool-calling conversation (assistant tool_calls and "
            "tool results); use a tool-calling model (Qwen2.5/Qwen3, Llama 3.1+) or set model.chat_template"
        )
    if getattr(tokenizer, "response_template", None) is None and getattr(tokenizer, "response_schema", None) is None:
        try:
            add_response_schema(tokenizer)
        except ValueError as exc:
            raise ConfigError(
                f"TRL cannot parse tool calls from {model_path!r}'s output: {exc}. Use a chat template TRL knows "
                "(Qwen2.5/Qwen3, Llama 3.1/3.2, GLM-4, gpt-oss, ...) or set a response template on the tokenizer"
            ) from exc


def check_tool_setup(
    config: Any, dataset: Any, model_path: str | None, rewards: list[Any], problems: ConfigProblems
) -> ToolSetup | None:
    """Resolve and check the config's ``tools:`` and ``environment:``; ``None`` when it has neither.

    Problems are recorded in ``problems``; nothing but the tokenizer is loaded.
    """
    wants_environment = [r.name for r in _leaves(rewards) if "environment" in r.injection.trajectory_inputs]
    if not config.tools and config.environment is None:
        if wants_environment:
            problems.add(
                f"reward {wants_environment[0]!r} reads each rollout's environment, but the config has no "
                "environment: (a factory, or a mapping of names to factories)"
            )
        return None
    setup = ToolSetup()
    with problems.check():
        _check_transformers(config.environment is not None)
    if not config.dataset.conversational:
        problems.add("tools and environments need conversational prompts; set dataset.conversational: true")
    setup.tools = _resolve_tools(list(config.tools), problems)
    if config.environment is not None:
        _resolve_environment(config.environment, problems, setup)
        if isinstance(config.environment, dict) and dataset is not None:
            with problems.check():
                _check_environment_column(dataset, list(config.environment), setup)
    if model_path is not None:
        with problems.check():
            _check_template(model_path, config.model.chat_template)
    return setup


def _leaves(rewards: list[Any]) -> list[Any]:
    from rewardsmith.data.columns import leaf_rewards

    return [leaf for top in rewards for leaf, _ in leaf_rewards(top)]


def trainer_kwargs(setup: ToolSetup | None) -> dict[str, Any]:
    """The ``GRPOTrainer`` keyword arguments for a tool setup (none without one)."""
    if setup is None:
        return {}
    kwargs: dict[str, Any] = {}
    if setup.tools:
        kwargs["tools"] = setup.tools
    if setup.environment_factory is not None:
        kwargs["environment_factory"] = setup.environment_factory
    return kwargs
