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
    from rewardsmith.core.registry import describe_reward

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


@app.command()
def train(
    config: Annotated[Path, typer.Argument(help="The YAML training config.")],
    overrides: Annotated[
        list[str] | None, typer.Argument(help="Dotted overrides such as trainer.learning_rate=3e-3.")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Resolve and check everything and print the plan; load no model.")
    ] = False,
) -> None:
    """Train with GRPO from a config: rewards, dataset, model, TRL trainer settings."""
    from rewardsmith.train.recipe import run

    try:
        run(config, list(overrides or []), dry_run=dry_run, console=console)
    except RewardsmithError as exc:
        _fail(exc)


@app.command()
def demo(
    output_dir: Annotated[Path, typer.Option(help="Where the run saves the model, curve and summary.")] = Path(
        "runs/demo"
    ),
    max_steps: Annotated[int | None, typer.Option(help="Train for fewer steps than the demo config's.")] = None,
) -> None:
    """Train the offline tiny model on the bundled task and show the reward rising (no downloads)."""
    from rewardsmith.train.demo import run_demo

    try:
        run_demo(output_dir, max_steps, console=console)
    except RewardsmithError as exc:
        _fail(exc)


@rewards_app.command("demo")
def rewards_demo() -> None:
    """Score a bundled sample of completions with built-in rewards and show why each scored what it did."""
    from rewardsmith.demo import run_demo

    run_demo(console)


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)


if __name__ == "__main__":
    main()
