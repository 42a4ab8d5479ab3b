"""The terminal summary of an audit: the probe families, the other checks in one line each, the findings."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rewardsmith.check.checks import checks_that_ran

__all__ = ["print_summary"]


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}" if value in (0, 1) else f"{value:.1%}"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"


def _short(text: str, limit: int = 70) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _probe_table(probes: dict[str, Any]) -> Any:
    """The gaming probes as a ``rich`` table: one row per family, its worst example."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="gaming probes", show_lines=False)
    for column in ("family", "probes", "mean", "≥ ref", "verdict", "worst example (score: reason)"):
        table.add_column(column, justify="left" if column in ("family", "verdict") or "worst" in column else "right")
    for family, info in probes.items():
        worst = info.get("worst") or {}
        verdict = "[red]finding[/]" if info["finding"] else "ok" if info["share_at_reference"] is not None else "-"
        told = _short(f"{worst.get('variant', '')} {worst.get('reason', '')}")
        example = f"{_num(worst.get('score'))}: {escape(told)}"
        table.add_row(family, str(info["probes"]), _num(info["mean"]), _pct(info["share_at_reference"]), verdict,
                      example if worst else "")  # fmt: skip
    return table


def _result_lines(summary: dict[str, Any]) -> list[str]:
    """One line per check that ran besides the probes: gold, labels, the second reward, signal, cost."""
    return [_LINES[name](section) for name, section in checks_that_ran(summary, _LINES)]


def _gold_line(gold: dict[str, Any]) -> str:
    if gold.get("same_score") is not None:
        return (f"gold: every score was {_num(gold['same_score'])}, the {gold['rows']:,} reference solutions' too: "
                "the references scored the lowest value seen")  # fmt: skip
    return (f"gold: {_pct(gold['share_at_maximum'])} of {gold['rows']:,} reference solutions score the maximum "
            f"({len(gold['misses'])} misses)")  # fmt: skip


def _labels_line(labels: dict[str, Any]) -> str:
    return (f"labels: accuracy {_pct(labels['accuracy'])}, {labels['false_positives']} false positives, "
            f"{labels['false_negatives']} false negatives of {labels['samples']:,}")  # fmt: skip


def _against_line(other: dict[str, Any]) -> str:
    return (f"against {other['other']}: {other['disagreements']:,} disagreements of {other['compared']:,} "
            f"({_pct(other['rate'])})")  # fmt: skip


def _signal_line(signal: dict[str, Any]) -> str:
    return (f"signal: {_pct(signal['tied_share'])} of {signal['groups']:,} prompts tie, mean spread "
            f"{_num(signal['mean_spread'])}")  # fmt: skip


def _cost_line(cost: dict[str, Any]) -> str:
    return (f"cost: {cost['samples']:,} samples, p50 {_num(cost['p50_s'])} s, p95 {_num(cost['p95_s'])} s, "
            f"max {_num(cost['max_s'])} s, {cost['timeouts']} timeouts, {cost['errors']} errors, None rate "
            f"{_pct(cost['none_rate'])}")  # fmt: skip


#: The line of each check besides the probes, in the order they are printed.
_LINES: dict[str, Callable[[dict[str, Any]], str]] = {
    "gold": _gold_line,
    "labels": _labels_line,
    "against": _against_line,
    "signal": _signal_line,
    "cost": _cost_line,
}


def _reference(setup: dict[str, Any]) -> str:
    column, how = setup.get("answer_column"), setup.get("answer_column_how")
    if column is None:
        return "none"
    return f"{column} ({how})" if how else str(column)


def print_summary(summary: dict[str, Any], console: Any) -> None:
    """Print an audit's summary (the contents of ``check.json``) on a ``rich`` console."""
    from rich.markup import escape

    setup = summary["setup"]
    reference = summary.get("reference", {})
    console.print(
        f"[bold]rewardsmith check[/] {escape(setup['reward'])}: {setup['rows_checked']:,} of {setup['rows']:,} rows "
        f"of {escape(str(setup['dataset']))}; reference answers {escape(_reference(setup))}, reference "
        f"solutions {escape(str(setup['gold_column']))}; formats {escape(', '.join(setup['formats']))}",
        highlight=False,
        soft_wrap=True,
    )
    console.print(
        f"the reward {'rewards' if reference.get('format') else 'gives no credit to'} the format itself and "
        f"{'checks' if reference.get('content') else 'does not check'} the answer",
        highlight=False,
    )
    probes = summary.get("probes", {})
    if probes:
        console.print(_probe_table(probes))
    for family, why in summary.get("not_run", {}).items():
        console.print(f"not run: {escape(family)}: {escape(why)}", highlight=False, soft_wrap=True)
    for line in _result_lines(summary) + list(summary.get("notes", [])):
        console.print(escape(line), highlight=False, soft_wrap=True)
    findings = summary.get("findings", [])
    if not summary.get("complete", True):
        console.print("[yellow]partial:[/] stopped before the end; the numbers cover the rows done", highlight=False)
    if findings:
        console.print(f"[bold red]{len(findings)} findings[/]", highlight=False)
        for f in findings:
            console.print(f"  [red]✗[/] {escape(f['message'])} (threshold {_num(f['threshold'])})", highlight=False,
                          soft_wrap=True)  # fmt: skip
    else:
        console.print("[bold green]no findings[/]: no check passed its threshold", highlight=False)
