"""The ``rewardsmith`` command.

Commands stay thin: each parses its arguments, calls the library, and prints.
Errors that are the user's to fix (an unknown reward, a bad setting) print
one clear paragraph and exit with status 2, without a traceback.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from rewardsmith.core.errors import RewardConfigError, RewardsmithError
from rewardsmith.core.extras import require_extra

app = typer.Typer(
    name="rewardsmith",
    help="Reward functions for LLM reinforcement learning: list, inspect, train and evaluate with them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
rewards_app = typer.Typer(help="Browse the reward registry.", no_args_is_help=True)
app.add_typer(rewards_app, name="rewards")

console = Console()
err_console = Console(stderr=True)


def _fail(exc: Exception) -> None:
    err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
    raise typer.Exit(code=2)


def _warn(message: str) -> None:
    err_console.print(f"[yellow]warning:[/] {escape(message)}", highlight=False, soft_wrap=True)


def _parse_setting(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise RewardConfigError(f"settings are written key=value, got {text!r}")
    try:
        return key.strip(), json.loads(value)
    except json.JSONDecodeError:
        return key.strip(), value


@rewards_app.command("list")
def rewards_list() -> None:
    """List every registered reward with a one-line description."""
    from rewardsmith.core.registry import list_rewards

    table = Table(title="rewardsmith rewards", show_lines=False)
    table.add_column("name", style="bold cyan", no_wrap=True)
    table.add_column("description")
    for name, description in list_rewards().items():
        table.add_row(name, description)
    console.print(table)


@rewards_app.command("show")
def rewards_show(
    name: Annotated[str, typer.Argument(help="A registered name, 'pkg.module:fn' or './file.py:fn'.")],
    settings: Annotated[list[str] | None, typer.Argument(help="Settings as key=value (values parsed as JSON).")] = None,
) -> None:
    """Show a reward's description, settings with their values, and the columns it reads."""
    from rewardsmith.core.describe import describe_reward

    try:
        info = describe_reward(name, **dict(_parse_setting(s) for s in settings or []))
    except RewardsmithError as exc:
        _fail(exc)
        return
    console.print(f"[bold cyan]{info.name}[/]  ({info.kind})")
    if info.description:
        console.print(info.description, highlight=False)
    table = Table(show_header=True, box=None, pad_edge=False)
    table.add_column("setting", style="bold")
    table.add_column("value")
    for key, value in info.settings.items():
        table.add_row(key, repr(value))
    for key, value in info.engine.items():
        table.add_row(f"{key} [dim](engine)[/]", repr(value))
    console.print(table)
    console.print(f"required columns: {', '.join(info.required_columns) or 'none'}", highlight=False)
    console.print(f"optional columns: {', '.join(info.optional_columns) or 'none'}", highlight=False)
    if info.trajectory_inputs:
        console.print(f"rollout inputs: {', '.join(info.trajectory_inputs)}", highlight=False)


@app.command()
def train(
    config: Annotated[Path, typer.Argument(help="The YAML training config.")],
    overrides: Annotated[
        list[str] | None,
        typer.Argument(help="Overrides such as trainer.learning_rate=3e-3, or max_steps=2 for a training argument."),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Resolve and check everything and print the plan; load no model.")
    ] = False,
    check_endpoints: Annotated[
        bool,
        typer.Option("--check-endpoints", help="Also send one real request to every judge endpoint the rewards use."),
    ] = False,
) -> None:
    """Train with GRPO from a config: rewards, dataset, model, TRL trainer settings."""
    try:
        require_extra("train", "rewardsmith train")
        from rewardsmith.train.recipe import run

        run(config, list(overrides or []), dry_run=dry_run, console=console, check_endpoints=check_endpoints)
    except RewardsmithError as exc:
        _fail(exc)


# -- evaluation jobs and datasets ------------------------------------------------------------------------

datasets_app = typer.Typer(help="Send datasets to other services.", no_args_is_help=True)
app.add_typer(datasets_app, name="datasets")

_Text = Annotated[str | None, typer.Option()]
# Options several commands share, declared once.
_Dataset = Annotated[str | None, typer.Option(help="Hub name, local file, or fireworks:ACCOUNT/ID.")]
_DatasetConfig = Annotated[str | None, typer.Option(help="The Hub dataset's configuration (e.g. main).")]
_Converter = Annotated[str | None, typer.Option(help="gsm8k, math, countdown, generic, chat, fireworks, ...")]
_BaseUrl = Annotated[str | None, typer.Option(help="An OpenAI-compatible endpoint, up to /v1.")]
_Backend = Annotated[str | None, typer.Option(help="auto, openai, transformers or vllm.")]
_ApiKeyEnv = Annotated[str | None, typer.Option(help="Environment variable holding the endpoint's key.")]
_Imports = Annotated[
    list[str] | None,
    typer.Option("--import", help="A module (pkg.mod) or file (./my_rewards.py) to import first; repeatable."),
]


@app.command("eval")
def eval_command(
    config: Annotated[
        Path | None, typer.Argument(help="A YAML evaluation config; the options below override it.")
    ] = None,
    dataset: _Dataset = None,
    split: _Text = None,
    dataset_config: _DatasetConfig = None,
    converter: _Converter = None,
    system_prompt: _Text = None,
    max_samples: Annotated[int | None, typer.Option()] = None,
    rewards: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated reward names, or a YAML list of entries with settings and names: "
            "'[{name: brevity, kwargs: {max_chars: 100}, as: short}, think_format]'."
        ),
    ] = None,
    completions_column: Annotated[str | None, typer.Option(help="Score the completions in this column.")] = None,
    model: Annotated[str | None, typer.Option(help="Generate completions with this model.")] = None,
    base_url: _BaseUrl = None,
    backend: _Backend = None,
    api_key_env: _ApiKeyEnv = None,
    n: Annotated[int | None, typer.Option("--n", "-n", help="Samples per prompt.")] = None,
    temperature: Annotated[float | None, typer.Option()] = None,
    max_tokens: Annotated[int | None, typer.Option()] = None,
    max_concurrency: Annotated[int | None, typer.Option()] = None,
    seed: Annotated[int | None, typer.Option()] = None,
    output_dir: Annotated[str | None, typer.Option(help="Where results.jsonl, summary.json, report.html go.")] = None,
    batch_size: Annotated[int | None, typer.Option(help="Prompts per batch.")] = None,
    pass_threshold: Annotated[
        list[str] | None,
        typer.Option(help="Score a sample needs to pass (pass@k): VALUE for every reward, or NAME=VALUE; repeatable."),
    ] = None,
    max_error_rate: Annotated[
        float | None, typer.Option(help="Fail (exit 1) when a reward fails on more than this share of rows.")
    ] = None,
    overwrite: Annotated[bool, typer.Option(help="Delete earlier results in output-dir and start over.")] = False,
    progress: Annotated[bool | None, typer.Option("--progress/--no-progress", help="Show rows/s, time left.")] = None,
    imports: _Imports = None,
    engine: Annotated[str | None, typer.Option(help="Where batches are scored: local, or ray (Ray tasks).")] = None,
) -> None:
    """Score a dataset with rewards: a column of completions, or completions a model generates. Resumable."""
    data = {"source": dataset, "split": split, "config": dataset_config, "converter": converter}
    data.update(system_prompt=system_prompt, max_samples=max_samples)
    generation = {"model": model, "base_url": base_url, "backend": backend, "api_key_env": api_key_env, "n": n}
    generation.update(temperature=temperature, max_tokens=max_tokens, max_concurrency=max_concurrency, seed=seed)
    overrides: dict[str, Any] = {"completions_column": completions_column, "output_dir": output_dir}
    try:
        overrides["rewards"] = _rewards_option(rewards)
        overrides["pass_threshold"] = _pass_threshold_option(pass_threshold)
    except RewardsmithError as exc:
        _fail(exc)
    overrides["max_error_rate"] = max_error_rate
    overrides.update(batch_size=batch_size, overwrite=overwrite or None, progress=progress, imports=imports or None)
    overrides["engine"] = engine
    overrides["dataset"] = {k: v for k, v in data.items() if v is not None}
    overrides["generation"] = {k: v for k, v in generation.items() if v is not None}
    overrides = {k: v for k, v in overrides.items() if v not in (None, {})}
    _run_eval(config, overrides, completions_column, generation, batch_size)


def _run_eval(
    config: Path | None,
    overrides: dict[str, Any],
    completions_column: str | None,
    generation: dict[str, Any],
    batch_size: int | None,
) -> None:
    """Run the evaluation job and print its summary: exit 1 when a reward failed, 130 on Ctrl-C (rows done are kept)."""
    from rewardsmith.evaluation import evaluate_config

    try:
        _check_eval_options(completions_column, generation, batch_size)
        report = evaluate_config(config, overrides, on_warning=_warn)
    except RewardsmithError as exc:
        _fail(exc)
        return
    except KeyboardInterrupt:
        err_console.print("interrupted: the rows done so far are kept; run the same command again to continue")
        raise typer.Exit(code=130) from None
    _print_eval_summary(report)
    if report.failed:
        _print_eval_failures(report.failed)
        raise typer.Exit(code=1)


def _rewards_option(text: str | None) -> Any:
    """``--rewards``: names separated by commas, or a YAML list (or one mapping) of reward entries."""
    if text is None or not text.lstrip().startswith(("[", "{")):
        return text
    from rewardsmith.config import load_yaml

    value = load_yaml(text, "--rewards (a YAML list of reward entries)")
    return [value] if isinstance(value, dict) else value


def _pass_threshold_option(values: list[str] | None) -> Any:
    """``--pass-threshold``: one number for every reward, or ``NAME=VALUE`` per reward."""
    if not values:
        return None
    per_reward: dict[str, Any] = {}
    for text in values:
        name, sep, value = text.rpartition("=")
        try:
            number = float(value)
        except ValueError:
            raise RewardConfigError(f"--pass-threshold takes VALUE or NAME=VALUE with a number, got {text!r}") from None
        if not sep:
            if len(values) > 1:
                raise RewardConfigError("give --pass-threshold once as VALUE, or as NAME=VALUE for each reward")
            return number
        per_reward[name.strip()] = number
    return per_reward


def _print_eval_failures(failed: dict[str, dict[str, Any]]) -> None:
    for name, info in failed.items():
        limit = info.get("max_error_rate")
        why = "on every row" if limit is None else f"on {info['error_rate']:.1%} of rows (limit {limit:.1%})"
        err_console.print(
            f"[bold red]error:[/] reward {escape(name)!r} failed {why}, so this evaluation measured nothing for it. "
            f"First error: {escape(str(info.get('error')))}",
            highlight=False,
            soft_wrap=True,
        )
        if info.get("traceback"):
            err_console.print(escape(info["traceback"].rstrip()), highlight=False, soft_wrap=True)


def _check_eval_options(completions_column: str | None, generation: dict[str, Any], batch_size: int | None) -> None:
    """Options of ``rewardsmith eval`` that contradict each other or make no sense: one paragraph, exit 2."""
    from rewardsmith.evaluation.validate import MAX_BATCH_SIZE

    problems = []
    flags = [f"--{k.replace('_', '-')}" for k, v in generation.items() if v is not None]
    if completions_column is not None and flags:
        problems.append(
            f"--completions-column scores completions the data already has, while {', '.join(flags)} "
            f"{'is a setting' if len(flags) == 1 else 'are settings'} for generating them with --model: drop "
            f"{'it' if len(flags) == 1 else 'them'}, or drop --completions-column and give --model"
        )
    if batch_size is not None and not 1 <= batch_size <= MAX_BATCH_SIZE:
        problems.append(f"--batch-size must be from 1 to {MAX_BATCH_SIZE:,} prompts, got {batch_size:,}")
    if problems:
        raise RewardConfigError("; and ".join(problems) + ".")


def _print_eval_summary(report: Any) -> None:
    rewards = report.summary["rewards"]
    ks = sorted({k for r in rewards.values() for k in r.get("pass_at_k", {}) if k.startswith("pass@")})
    table = Table(title=f"{report.summary['rows']:,} rows", show_lines=False)
    passing = ("pass if ≥",) if ks else ()
    for column in ("reward", "mean", "std", "None rate", "error rate", *passing, *ks):
        table.add_column(column, justify="left" if column == "reward" else "right")

    def number(value: Any) -> str:
        return "-" if value is None else f"{value:.4f}"

    for name, r in rewards.items():
        cells = [number(r["mean"]), number(r["std"]), f"{r['none_rate']:.1%}", f"{r['error_rate']:.1%}"]
        if ks:
            cells.append(f"{r['pass_threshold']:g}" if r.get("pass_threshold") is not None else "-")
        table.add_row(name, *cells, *(number(r.get("pass_at_k", {}).get(k)) for k in ks))
    console.print(table)
    console.print(f"results: {report.results_path}\nsummary: {report.summary_path}\nreport:  {report.report_path}")


_Limit = Annotated[float | None, typer.Option(show_default=False)]
_CheckReward = Annotated[
    str | None,
    typer.Argument(
        help="A registered name, './file.py:fn', 'pkg.mod:fn' or a JSON entry; with --config, the name of one "
        "of its rewards (default: each of them)."
    ),
]
_CheckConfig = Annotated[
    Path | None,
    typer.Option("--config", help="A training or evaluation config: audit its rewards on its data and prompts."),
]
_CompletionsColumn = Annotated[str | None, typer.Option(help="Completions to score (one or a list per row).")]
_ProbeFormat = Annotated[
    list[str] | None,
    typer.Option(
        help="The answer format probes use, when the data does not show it: boxed, hashes, tags:ANSWER_TAG, "
        "tags:THINK_TAG,ANSWER_TAG, fence:python, or a template with {answer} (and {reasoning}); repeatable."
    ),
]


@app.command("check")
def check_command(
    reward: _CheckReward = None,
    settings: Annotated[list[str] | None, typer.Argument(help="Reward settings as key=value (JSON values).")] = None,
    config: _CheckConfig = None,
    dataset: _Dataset = "",
    split: Annotated[str | None, typer.Option(help="The split (default: test; the config's with --config).")] = None,
    dataset_config: _DatasetConfig = None,
    converter: _Converter = None,
    system_prompt: _Text = None,
    max_samples: Annotated[int | None, typer.Option(help="Check the first N rows.")] = None,
    gold_column: Annotated[str | None, typer.Option(help="Reference solutions (default: solution); 'none'.")] = None,
    answer_column: Annotated[str | None, typer.Option(help="Reference answers (default: the reward's).")] = None,
    completions_column: _CompletionsColumn = None,
    labels_column: Annotated[str | None, typer.Option(help="Right/wrong labels of those completions.")] = None,
    against: Annotated[str | None, typer.Option(help="A second reward; list where the two disagree.")] = None,
    families: Annotated[str | None, typer.Option(help="Probe families, comma-separated (default: all).")] = None,
    probe_format: _ProbeFormat = None,
    model: Annotated[str | None, typer.Option(help="Sample completions from this model (signal).")] = None,
    base_url: _BaseUrl = None,
    backend: _Backend = None,
    api_key_env: _ApiKeyEnv = None,
    n: Annotated[int, typer.Option("--n", "-n", help="Completions sampled per prompt.")] = 4,
    temperature: Annotated[float | None, typer.Option()] = None,
    max_tokens: Annotated[int | None, typer.Option()] = None,
    pass_threshold: Annotated[float | None, typer.Option(help="Score a labelled completion needs to pass.")] = None,
    timeout: Annotated[float, typer.Option(help="Seconds per sample, in a worker process (0: no limit).")] = 20.0,
    workers: Annotated[int, typer.Option(help="Worker processes scoring samples.")] = 1,
    output_dir: Annotated[Path | None, typer.Option(help="Where check.json and check.html go.")] = None,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Show rows done, time left.")] = True,
    imports: _Imports = None,
    max_share: _Limit = None,
    max_closeness: _Limit = None,
    min_gold: _Limit = None,
    max_error_rate: _Limit = None,
    max_seconds: _Limit = None,
    max_false_positive: _Limit = None,
    max_false_negative: _Limit = None,
    max_tied: _Limit = None,
    max_disagreement: _Limit = None,
    max_unjudged: _Limit = None,
) -> None:
    """Audit a reward on a dataset: gaming probes, reference solutions, labels, cost, signal. Exit 1 on findings."""
    arguments, generation = _check_arguments(locals())
    try:
        targets = _check_targets(reward, settings, config, dataset, imports, arguments)
    except RewardsmithError as exc:
        _fail(exc)
        return
    reports = [_run_check(spec, source, generation, args) for spec, source, args in targets]
    for report in reports:
        _print_check(report)
    if any(report.findings for report in reports):
        raise typer.Exit(code=1)


_CHECK_LIMITS = ("max_share", "max_closeness", "min_gold", "max_error_rate", "max_seconds", "max_false_positive")
_CHECK_LIMITS += ("max_false_negative", "max_tied", "max_disagreement", "max_unjudged")
_CHECK_PASSED = ("split", "answer_column", "completions_column", "labels_column", "against", "n", "pass_threshold")
_CHECK_PASSED += ("workers", "output_dir", "progress")


def _check_arguments(options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``check``'s options as :func:`rewardsmith.check.check`'s arguments, and the generation settings."""
    generation = {key: options[key] for key in ("model", "base_url", "backend", "api_key_env", "n", "temperature")}
    generation["max_tokens"] = options["max_tokens"]
    families, gold_column = options["families"], options["gold_column"]
    dataset_options = {"config": options["dataset_config"], "converter": options["converter"]}
    dataset_options.update(system_prompt=options["system_prompt"], max_samples=options["max_samples"])
    arguments: dict[str, Any] = {key: options[key] for key in _CHECK_PASSED}
    arguments.update(
        gold_column="" if gold_column == "none" else gold_column,
        families=None if families is None else [f.strip() for f in families.split(",") if f.strip()],
        probe_format=list(options["probe_format"] or []) or None,
        thresholds={key: options[key] for key in _CHECK_LIMITS if options[key] is not None},
        timeout=options["timeout"] or None,
        **{key: value for key, value in dataset_options.items() if value is not None},
    )
    return arguments, generation


def _check_targets(
    reward: str | None,
    settings: list[str] | None,
    config: Path | None,
    dataset: str,
    imports: list[str] | None,
    arguments: dict[str, Any],
) -> list[tuple[Any, Any, dict[str, Any]]]:
    """What ``rewardsmith check`` audits: (reward, dataset, check's arguments), one per reward of a ``--config``.

    The command line's options win over the config's dataset settings.
    """
    from rewardsmith.config import import_modules
    from rewardsmith.core.problems import ConfigProblems

    if config is not None:
        if settings:
            raise RewardConfigError("with --config the rewards' settings come from the config; drop the key=value ones")
        return _config_targets(config, reward, dataset, imports, arguments)
    problems = ConfigProblems("the check")
    import_modules(list(imports or []), problems)
    problems.raise_if_any()
    if reward is None:
        raise RewardConfigError("name the reward to check (think_format, ./file.py:fn, ...), or give --config FILE")
    if not dataset:
        raise RewardConfigError("rewardsmith check needs --dataset (a Hub name, a local file, or fireworks:...)")
    spec: Any = json.loads(reward) if reward.lstrip().startswith("{") else reward
    if settings:
        from rewardsmith.core.registry import get_reward

        spec = get_reward(spec, **dict(_parse_setting(s) for s in settings))
    return [(spec, dataset, {**arguments, "split": arguments["split"] or "test"})]


def _config_targets(
    config: Path, reward: str | None, dataset: str, imports: list[str] | None, arguments: dict[str, Any]
) -> list[tuple[Any, Any, dict[str, Any]]]:
    """Each reward a config trains (or evaluates) with, built as it builds them, on its data and prompts."""
    from rewardsmith.config import import_modules
    from rewardsmith.config.rewards import config_rewards
    from rewardsmith.train import training_tokenizer

    import_modules(list(imports or []))
    found = config_rewards(config, model_tokenizer=training_tokenizer)  # tokens counted as eval counts them
    data = dict(found.dataset or {})
    source = dataset or data.get("source")
    if source is None:
        raise RewardConfigError(f"{str(config)!r} names no dataset; give --dataset")
    made = found.rewards
    if reward is not None:
        made = [r for r in made if r.name == reward] or _no_such_reward(config, reward, made)
    data.pop("source", None)
    # prompts shaped as the config's training (or evaluation) shapes them: chat messages unless it says otherwise
    data.setdefault("conversational", True)
    out = []
    for one in made:
        args = {**data, **{k: v for k, v in arguments.items() if v is not None}}
        args["split"] = arguments["split"] or data.get("split") or "test"
        if len(made) > 1 and arguments.get("output_dir") is not None:
            args["output_dir"] = Path(arguments["output_dir"]) / one.name
        out.append((one, source, args))
    return out


def _no_such_reward(config: Path, reward: str, made: list[Any]) -> list[Any]:
    names = ", ".join(r.name for r in made)
    raise RewardConfigError(f"{str(config)!r} has no reward {reward!r}; its rewards are {names}")


def _run_check(spec: Any, dataset: Any, generation: dict[str, Any], arguments: dict[str, Any]) -> Any:
    """Resolve the sampler and run the audit; a user's mistake is one paragraph, exit 2."""
    from rewardsmith.check import check

    sampler = None
    try:
        if generation.get("model") is not None:
            require_extra("eval", "sampling completions for rewardsmith check")
            from rewardsmith.evaluation.backends import ModelSampler

            sampler = ModelSampler({k: v for k, v in generation.items() if v is not None})
        return check(spec, dataset, sample=sampler, **arguments)
    except RewardsmithError as exc:
        _fail(exc)
    except KeyboardInterrupt:
        err_console.print("interrupted: the rows done so far are summed up in check.json and check.html")
        raise typer.Exit(code=130) from None
    finally:
        if sampler is not None:
            sampler.close()


def _print_check(report: Any) -> None:
    from rewardsmith.check.terminal import print_summary

    print_summary(report.summary, console)
    if report.output_dir is not None:
        console.print(f"check.json: {report.json_path}\ncheck.html: {report.html_path}", highlight=False)


@datasets_app.command("push")
def datasets_push(
    source: Annotated[str, typer.Argument(help="Hub name or local file (.jsonl, .json, .parquet, .csv).")],
    dataset_id: Annotated[str, typer.Option(help="The id of the new dataset.")],
    to: Annotated[str, typer.Option(help="Where to: fireworks.")] = "fireworks",
    account: Annotated[str | None, typer.Option(help="Fireworks account id (default: FIREWORKS_ACCOUNT_ID).")] = None,
    split: Annotated[str, typer.Option()] = "train",
    dataset_config: _DatasetConfig = None,
    converter: Annotated[str, typer.Option(help="gsm8k, math, countdown, generic, chat, ...")] = "generic",
    system_prompt: _Text = None,
    max_samples: Annotated[int | None, typer.Option()] = None,
    ground_truth_column: Annotated[str | None, typer.Option(help="Column to send as ground_truth.")] = None,
    display_name: _Text = None,
    save: Annotated[Path | None, typer.Option(help="Also keep the uploaded JSONL here.")] = None,
) -> None:
    """Convert a dataset to Fireworks evaluation JSONL ({"messages", "ground_truth"}) and upload it."""
    from rewardsmith.integrations.fireworks import push_dataset

    if to != "fireworks":
        _fail(RewardConfigError(f"--to {to!r}: datasets can be pushed to fireworks"))
    try:
        result = push_dataset(
            source,
            dataset_id,
            account=account,
            split=split,
            config=dataset_config,
            converter=converter,
            system_prompt=system_prompt,
            max_samples=max_samples,
            ground_truth_column=ground_truth_column,
            display_name=display_name,
            save_to=save,
        )
    except RewardsmithError as exc:
        _fail(exc)
        return
    console.print(f"pushed {result.examples:,} examples to {result.name} (state {result.state})", highlight=False)


@app.command()
def serve(
    rewards: Annotated[str, typer.Argument(help="A config file with rewards: (and imports:), or names: a,b,c.")],
    host: Annotated[str, typer.Option(help="Address to listen on (0.0.0.0 for every interface).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    max_concurrency: Annotated[int, typer.Option(help="Batches scored at once; the rest wait.")] = 4,
    max_queue: Annotated[int, typer.Option(help="Batches allowed to wait before 503 + Retry-After.")] = 64,
    max_body_mb: Annotated[float, typer.Option(help="Largest request body, in MiB (413 above).")] = 64.0,
    token_env: Annotated[
        str | None, typer.Option(help="Require 'Authorization: Bearer <token>', the token read from this variable.")
    ] = None,
    label_column: Annotated[str, typer.Option(help="The column OpenRLHF's labels fill (/get_reward).")] = "answer",
    none_score: Annotated[float, typer.Option(help="What /get_reward sends when no reward applies.")] = 0.0,
    graceful_timeout: Annotated[float, typer.Option(help="Seconds to finish batches in flight on shutdown.")] = 60.0,
    max_samples: Annotated[int, typer.Option(help="Most samples in one request (413 above).")] = 8192,
    max_pending_mb: Annotated[float, typer.Option(help="Request bytes held at once, in MiB (503 above).")] = 256.0,
    body_timeout: Annotated[float, typer.Option(help="Seconds a request body may take to arrive (408).")] = 60.0,
    header_timeout: Annotated[float, typer.Option(help="Seconds request headers may take to arrive.")] = 10.0,
    max_connections: Annotated[int, typer.Option(help="Open connections at most (503 above).")] = 256,
    max_text_mb: Annotated[
        float, typer.Option(help="Longest string in a request (a completion, a message's text), in MiB (413 above).")
    ] = 1.0,
) -> None:
    """Serve rewards over HTTP: a batch API (/score), /health, and OpenRLHF's remote reward protocol (/get_reward)."""
    import os

    try:
        require_extra("serve", "rewardsmith serve")
        from rewardsmith.serve import RewardService, ServerSettings, run_server

        token = None
        if token_env is not None:
            token = os.environ.get(token_env)
            if not token:
                raise RewardConfigError(f"--token-env {token_env}: that environment variable is not set or empty")
        limits = (max_concurrency, max_samples, max_connections, max_body_mb, max_pending_mb, body_timeout)
        if min(limits) <= 0 or header_timeout <= 0 or max_text_mb <= 0 or max_queue < 0:
            raise RewardConfigError(
                "--max-concurrency, --max-samples, --max-connections, --max-body-mb, --max-pending-mb, "
                "--max-text-mb, --body-timeout and --header-timeout must be > 0, and --max-queue >= 0"
            )
        service = RewardService.from_spec(rewards)
        settings = ServerSettings(
            max_concurrency=max_concurrency,
            max_queue=max_queue,
            max_body_bytes=int(max_body_mb * 1024 * 1024),
            token=token,
            label_column=label_column,
            none_score=none_score,
            max_samples=max_samples,
            max_pending_bytes=int(max_pending_mb * 1024 * 1024),
            body_timeout=body_timeout,
            header_timeout=header_timeout,
            max_connections=max_connections,
            max_text_bytes=max(1, int(max_text_mb * 1024 * 1024)),
        )
    except RewardsmithError as exc:
        _fail(exc)
        return
    err_console.print(f"serving {', '.join(service.names)} on http://{host}:{port} (POST /score, /get_reward)")
    run_server(service, host, port, settings, graceful_timeout=graceful_timeout)


@app.command()
def demo(
    which: Annotated[
        str,
        typer.Argument(
            help="'format' (the tiny model learns an answer format), 'real' (a real pretrained model learns sums, "
            "with LoRA) or 'tools' (a tool-using environment)."
        ),
    ] = "format",
    output_dir: Annotated[Path | None, typer.Option(help="Where the run saves the model, curve and summary.")] = None,
    max_steps: Annotated[int | None, typer.Option(help="Train for fewer steps than the demo config's.")] = None,
    seed: Annotated[
        int | None,
        typer.Option(help="The training seed: data order and sampling ('tools' also builds its model from it)."),
    ] = None,
) -> None:
    """Train the offline tiny model and show the reward rising (no downloads); ``demo real`` trains a real
    pretrained model (SmolLM2-135M-Instruct, offline) with LoRA; ``demo tools`` uses TRL's tool loop."""
    try:
        require_extra("train", "rewardsmith demo (a training run)")
        if which == "tools":
            from rewardsmith.demo_tools import train_tools_demo

            given = {"max_steps": max_steps, "seed": seed}
            train_tools_demo(
                output_dir or Path("runs/demo_tools"),
                console=console,
                **{k: v for k, v in given.items() if v is not None},
            )
        elif which == "format":
            from rewardsmith.demo import train_demo

            train_demo(output_dir or Path("runs/demo"), max_steps, console=console, seed=seed)
        elif which == "real":
            from rewardsmith.demo import REAL_DEMO_CONFIG, train_demo

            train_demo(
                output_dir or Path("runs/demo_real"), max_steps, console=console, seed=seed, config=REAL_DEMO_CONFIG
            )
        else:
            raise RewardConfigError(f"unknown demo {which!r}; the demos are 'format' (the default), 'real' and 'tools'")
    except RewardsmithError as exc:
        _fail(exc)


sandbox_app = typer.Typer(help="The sandbox that runs programs for code rewards.", no_args_is_help=True)
app.add_typer(sandbox_app, name="sandbox")


@sandbox_app.command("doctor")
def sandbox_doctor(
    isolation: Annotated[str, typer.Option(help="auto, require (namespaces or nothing) or limits.")] = "auto",
    bwrap: Annotated[str | None, typer.Option(help="The bubblewrap executable (default: bwrap on PATH).")] = None,
    python: Annotated[str | None, typer.Option(help="The Python the sandbox runs (default: found).")] = None,
) -> None:
    """Say which isolation works here and why, and check live what a sandboxed program can reach."""
    from rewardsmith.sandbox.doctor import diagnose

    try:
        report = diagnose(isolation, bwrap, python)
    except RewardsmithError as exc:
        _fail(exc)
        return
    iso = report.isolation
    if iso is None:
        err_console.print(f"[bold red]no sandbox can run here:[/] {escape(report.error or '')}", soft_wrap=True)
        raise typer.Exit(code=1)
    mode = "namespaces (bubblewrap)" if iso.isolated else "limits only (no namespace isolation)"
    console.print(f"[bold]mode:[/] {mode}: {escape(iso.reason)}", soft_wrap=True)
    console.print(f"bubblewrap: {escape(str(iso.bwrap))} ({escape(str(iso.bwrap_version))}); python: {iso.python}")
    for problem in iso.problems:
        console.print(f"  [dim]tried: {escape(problem)}[/]", soft_wrap=True)
    table = Table(show_header=True)
    for column in ("check", "as it should be", "seen"):
        table.add_column(column)
    for check in report.checks:
        table.add_row(check.name, "[green]yes[/]" if check.ok else "[red]no[/]", escape(check.detail))
    console.print(table)
    if report.error:
        err_console.print(f"[bold red]error:[/] {escape(report.error)}", soft_wrap=True)
        raise typer.Exit(code=1)


@rewards_app.command("demo")
def rewards_demo() -> None:
    """Score a bundled sample of completions with built-in rewards and show why each scored what it did."""
    from rewardsmith.demo import score_sample

    score_sample(console)


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)


if __name__ == "__main__":
    main()
