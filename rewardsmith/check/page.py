"""``check.html``: an audit as one self-contained page, in the style of the evaluation report.

The page shows the findings first, then a bar per probe family (the share of
rows on which it scores like the reference, against the threshold, drawn by
the page's script from the embedded data), the families' table with each
one's worst example and its variants, and the gold, labels, signal, second
opinion and cost sections that apply. Probe completions are hostile text: the
page is built with :mod:`rewardsmith.reports.pages` (escaped markup, embedded
JSON that cannot close its element) and its script only sets ``textContent``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rewardsmith.check.checks import checks_that_ran
from rewardsmith.reports.pages import escape, html_page, number, percent, samples_table

__all__ = ["render_check_page"]

_CSS = """
.fail{background:#fbe0dd;color:#a1261b}.ok{color:#17692f}.bad{color:#a1261b;font-weight:600}.na{color:#8a93a3}
.bars svg{width:100%}.bars rect.bar{fill:#4f7cd6}.bars rect.hit{fill:#d4574a}.bars text{font-size:12px;fill:#1d2330}
.bars line{stroke:#a1261b;stroke-dasharray:4 3}details{margin:4px 0}summary{cursor:pointer;color:#3b5bab}
.left td,.left th{text-align:left}.left td.num,.left th.num{text-align:right}pre{text-align:left}
.families td:last-child,.families th:last-child{text-align:left;width:46%}
"""

_SCRIPT = r"""
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const NS = 'http://www.w3.org/2000/svg';
  function el(tag, attrs, text){ const e = document.createElementNS(NS, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]); if (text !== undefined) e.textContent = text; return e; }
  const box = document.getElementById('bars');
  if (box && data.bars.length) {
    const W = 900, row = 24, left = 150, right = 60, H = data.bars.length * row + 30, span = W - left - right;
    const svg = el('svg', {viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': 'share of rows at the reference'});
    data.bars.forEach((b, i) => {
      const y = 10 + i * row, v = b.share === null ? 0 : b.share;
      svg.appendChild(el('text', {x: left - 8, y: y + 15, 'text-anchor': 'end'}, b.family));
      const r = el('rect', {x: left, y: y + 3, width: Math.max(v * span, 1), height: row - 8,
                            class: b.finding ? 'bar hit' : 'bar'});
      r.appendChild(el('title', {}, b.family + ': ' + (b.share === null ? 'not judged' : (100 * v).toFixed(1) + '%')));
      svg.appendChild(r);
      const label = b.share === null ? 'n/a' : (100 * v).toFixed(0) + '%';
      svg.appendChild(el('text', {x: left + Math.max(v * span, 1) + 6, y: y + 15}, label));
    });
    if (data.threshold !== null) {
      const x = left + data.threshold * span;
      svg.appendChild(el('line', {x1: x, x2: x, y1: 4, y2: H - 18}));
      svg.appendChild(el('text', {x: x + 4, y: H - 4}, 'threshold ' + (100 * data.threshold).toFixed(0) + '%'));
    }
    box.appendChild(svg);
  }
"""


def _table(head: list[str], rows: list[list[str]], css: str = "sortable") -> str:
    header = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table class='{css}'><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>"


def _examples(title: str, examples: list[dict[str, Any]]) -> str:
    shown = []
    for ex in examples:
        where = " · ".join(str(x) for x in (ex.get("family"), ex.get("variant")) if x)
        notes = [("reason", f"{where}: {ex.get('reason', '')}" if where else ex.get("reason", ""))]
        if "other_score" in ex:
            notes.append(("reason", f"other reward: {number(ex['other_score'])} · {ex.get('other_reason', '')}"))
        if ex.get("failure"):
            notes.append(("reason err", f"failure: {ex['failure']}"))
        label = f"row {ex.get('row')}"
        shown.append({"score": ex.get("score"), "label": label, "prompt": ex.get("prompt", ""),
                      "completion": ex.get("completion", ""), "notes": notes})  # fmt: skip
    return samples_table(title, shown)


def _verdict(info: dict[str, Any]) -> str:
    if info["finding"]:
        return "<span class='bad'>finding</span>"
    if info["share_at_reference"] is None:
        return "<span class='na'>not judged</span>"
    return "<span class='ok'>ok</span>"


def _families(probes: dict[str, Any]) -> str:
    rows = []
    for family, info in probes.items():
        worst = info.get("worst") or {}
        reason = f": {escape(worst['reason'])}" if worst.get("reason") else ""
        shown = (
            f"<pre>{escape(worst.get('completion', ''))}</pre><div class='reason'>{escape(worst.get('variant', ''))}"
            f" · score {number(worst.get('score'))} (reference {number(worst.get('reference_score'))}){reason}</div>"
            if worst
            else ""
        )
        variants = _table(
            ["variant", "for", "applies", "rows", "mean", "≥ reference", "closeness", "max s"],
            [
                [escape(name), escape(v["judged"]), "yes" if v["applies"] else "no", number(v["judged_rows"]),
                 number(v["mean"]), percent(v["share"]), percent(v["closeness"]), number(v["max_seconds"])]
                for name, v in info["variants"].items()
            ],
            "variants",
        )  # fmt: skip
        rows.append(
            [
                f"<b>{escape(family)}</b><br><small>{escape(info['description'])}</small>",
                number(info["probes"]),
                number(info["mean"]),
                percent(info["share_at_reference"]),
                percent(info["closeness"]),
                _verdict(info),
                f"<div class='text'>{shown}<details><summary>variants</summary>{variants}</details></div>",
            ]
        )
    head = ["family", "probes", "mean", "≥ reference", "closeness", "verdict", "worst example"]
    return _table(head, rows, "sortable families")


def _sections(s: dict[str, Any]) -> list[str]:
    """The section of each check that ran besides the probes: gold, labels, signal, the second reward, cost."""
    return [part for name, section in checks_that_ran(s, _SECTIONS) for part in _SECTIONS[name](section)]


def _gold_section(gold: dict[str, Any]) -> list[str]:
    if gold.get("same_score") is not None:
        return [
            f"<h2>Reference solutions</h2><p class='meta'>every score was {number(gold['same_score'])}, the "
            f"{gold['rows']:,} reference solutions' too: the references scored the lowest value seen</p>"
        ]
    return [
        f"<h2>Reference solutions</h2><p class='meta'>{percent(gold['share_at_maximum'])} of {gold['rows']:,} "
        f"score the maximum {number(gold['maximum'])}; {gold['not_scored']} not scored</p>",
        _examples("reference solutions below the maximum", gold["misses"][:50]),
    ]


def _labels_section(labels: dict[str, Any]) -> list[str]:
    return [
        f"<h2>Labels</h2><p class='meta'>{labels['samples']:,} labelled completions · accuracy "
        f"{percent(labels['accuracy'])} · false positives {labels['false_positives']} "
        f"({percent(labels['false_positive_rate'])}) · false negatives {labels['false_negatives']} "
        f"({percent(labels['false_negative_rate'])}) · pass at {number(labels['pass_level'])}</p>",
        _examples("false positives: labelled wrong, passed", labels["false_positive_examples"]),
        _examples("false negatives: labelled right, failed", labels["false_negative_examples"]),
    ]


def _signal_section(signal: dict[str, Any]) -> list[str]:
    return [
        f"<h2>Signal</h2><p class='meta'>{signal['groups']:,} prompts with several completions · all tied "
        f"{percent(signal['tied_share'])} · mean spread within a prompt {number(signal['mean_spread'])} · "
        f"std {number(signal['std'])}</p>"
    ]


def _against_section(other: dict[str, Any]) -> list[str]:
    return [
        f"<h2>Second opinion: {escape(other['other'])}</h2><p class='meta'>disagree on {other['disagreements']:,}"
        f" of {other['compared']:,} samples ({percent(other['rate'])})</p>",
        _examples("disagreements", other["examples"]),
    ]


def _cost_section(cost: dict[str, Any]) -> list[str]:
    slow = [cost[k] for k in ("slowest", "first_error", "first_timeout") if cost.get(k)]
    return [
        f"<h2>Cost</h2><p class='meta'>{cost['samples']:,} samples · latency p50 {number(cost['p50_s'])} s · "
        f"p95 {number(cost['p95_s'])} s · max {number(cost['max_s'])} s · timeouts {cost['timeouts']} · "
        f"errors {cost['errors']} ({percent(cost['error_rate'])}) · None rate {percent(cost['none_rate'])}</p>",
        _examples("slowest sample, first error, first timeout", slow),
    ]


#: The section of each check besides the probes, in the order the page shows them.
_SECTIONS: dict[str, Callable[[dict[str, Any]], list[str]]] = {
    "gold": _gold_section,
    "labels": _labels_section,
    "signal": _signal_section,
    "against": _against_section,
    "cost": _cost_section,
}


def render_check_page(summary: dict[str, Any]) -> str:
    """The HTML of ``check.html`` for an audit's summary (the contents of ``check.json``).

    >>> page = render_check_page({"setup": {"reward": "<b>r</b>", "rows": 1}, "findings": [], "probes": {},
    ...                           "reference": {}, "complete": True})
    >>> "&lt;b&gt;r&lt;/b&gt;" in page and "<b>r</b>" not in page
    True
    """
    setup = summary.get("setup", {})
    findings = summary.get("findings", [])
    status, label = ("complete", "passed") if not findings else ("fail", f"{len(findings)} findings")
    if not summary.get("complete", True):
        status, label = "partial", f"partial: stopped early · {label}"
    reference = summary.get("reference", {})
    how = (
        f" ({escape(setup['answer_column_how'])})"
        if setup.get("answer_column") and setup.get("answer_column_how")
        else ""
    )
    meta = (
        f"<p class='meta'>dataset <code>{escape(setup.get('dataset', ''))}</code> · "
        f"{setup.get('rows_checked', 0):,} of {setup.get('rows', 0):,} rows · reference answers "
        f"<code>{escape(setup.get('answer_column') or 'none')}</code>{how} · reference solutions "
        f"<code>{escape(setup.get('gold_column') or 'none')}</code> · formats "
        f"{escape(', '.join(setup.get('formats', [])))}"
        f" · <span class='badge {status}'>{escape(label)}</span></p>"
    )
    rewards = "rewards the format itself" if reference.get("format") else "gives the format no credit of its own"
    checks = "checks the answer" if reference.get("content") else "does not check the answer"
    parts = [f"<h1>rewardsmith check: {escape(setup.get('reward', ''))}</h1>{meta}"]
    parts.append(f"<p class='meta'>From its scores, this reward {rewards} and {checks}.</p>")
    parts.append("<h2>Findings</h2>")
    if findings:
        rows = [
            [escape(f["check"]), escape(f["message"]), number(f.get("value")), number(f.get("threshold"))]
            for f in findings
        ]
        parts.append(_table(["check", "what", "value", "threshold"], rows, "sortable left"))
    else:
        parts.append("<p class='ok'>No check passed its threshold.</p>")
    probes = summary.get("probes", {})
    if probes:
        parts.append("<h2>Gaming probes</h2><p class='meta'>share of rows on which each family scores as high as "
                     "the reference</p><div class='card bars' id='bars'></div>")  # fmt: skip
        parts.append("<h3>Families</h3>" + _families(probes))
    not_run = summary.get("not_run", {})
    if not_run:
        rows = [[escape(family), escape(why)] for family, why in not_run.items()]
        parts.append("<h3>Families that did not run</h3>" + _table(["family", "why"], rows, "left"))
    parts += _sections(summary)
    parts.append("<h2>Filter</h2><input id='filter' type='search' placeholder='filter examples by any text'>")
    bars = [
        {"family": name, "share": info["share_at_reference"], "finding": info["finding"]}
        for name, info in probes.items()
    ]
    threshold = summary.get("thresholds", {}).get("max_share")
    data = {"bars": bars, "threshold": threshold}
    return html_page(
        f"rewardsmith check: {setup.get('reward', '')}", "".join(parts), css=_CSS, data=data, script=_SCRIPT
    )
