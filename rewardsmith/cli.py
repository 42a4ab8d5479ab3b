"""The ``rewardsmith`` command.

Commands stay thin: each parses its arguments, calls the library, and prints.
Errors that are the user's to fix (an unknown reward, a bad setting) print
one clear paragraph and exit with status 2, without a traceback.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer
from rich.console import Console
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
    err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
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
def demo() -> None:
    """Run the embedded demo (no downloads)."""
    from rewardsmith.demo import run_demo

    try:
        run_demo(console)
    except RewardsmithError as exc:
        _fail(exc)


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)


if __name__ == "__main__":
    main()
