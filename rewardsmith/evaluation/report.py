"""``report.html``: one self-contained page (no network: CSS, script and data inline) that opens offline.

The page shows the job, the summary table (sortable), per-task breakdowns,
generation figures, a histogram per reward (SVG drawn by the page's script
from the embedded data), and per reward the lowest- and highest-scoring
samples and the first failures, with their reasons. A box filters the samples.

Completions are hostile input: the page is built with
:mod:`rewardsmith.reports.pages` (everything from the data HTML-escaped, the
embedded JSON unable to close its ``<script>`` element), and the script only
ever sets ``textContent`` (never ``innerHTML``) from data.
"""

from __future__ import annotations

import itertools
from typing import Any

from rewardsmith.reports.pages import escape, html_page, number, percent, samples_table

__all__ = ["histogram_ticks", "render_report", "tick_label"]

_CSS = """
.hist svg{width:100%;height:170px}.hist rect{fill:#4f7cd6}.hist text{font-size:10px;fill:#5b6475}
"""

_SCRIPT = r"""
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const NS = 'http://www.w3.org/2000/svg';
  function el(tag, attrs, text){ const e = document.createElementNS(NS, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]); if (text !== undefined) e.textContent = text; return e; }
  function fmt(x){ return Math.abs(x) >= 100 || Number.isInteger(x) ? String(+x.toFixed(2)) : x.toPrecision(3); }
  for (const box of document.querySelectorAll('.hist')) {
    const h = data.histograms[box.dataset.reward]; if (!h) continue;
    let labels, counts;
    if (h.kind === 'values') { labels = h.values.map(v => fmt(v[0])); counts = h.values.map(v => v[1]); }
    else { counts = h.counts; labels = h.counts.map((_, i) => fmt(h.edges[i]) + '–' + fmt(h.edges[i + 1])); }
    const W = 360, H = 170, pad = 22, n = Math.max(counts.length, 1), top = Math.max(1, ...counts);
    const ticks = data.ticks[box.dataset.reward] || [];
    const svg = el('svg', {viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': 'histogram of ' + box.dataset.reward});
    const bw = (W - 2 * pad) / n;
    counts.forEach((c, i) => {
      const bh = (H - 2 * pad) * c / top, x = pad + i * bw, y = H - pad - bh;
      const r = el('rect', {x: x + 1, y: y, width: Math.max(bw - 2, 1), height: bh});
      r.appendChild(el('title', {}, labels[i] + ': ' + c)); svg.appendChild(r);
      const mid = {x: x + bw / 2, 'text-anchor': 'middle'};
      if (data.counts[box.dataset.reward] && c) svg.appendChild(el('text', {...mid, y: y - 3}, String(c)));
    });
    for (const [at, label] of ticks)
      svg.appendChild(el('text', {x: pad + at * (W - 2 * pad), 'text-anchor': 'middle', y: H - 6}, label));
    box.appendChild(svg);
  }
"""


#: The plot's drawing width (viewBox units) and the width of one label character at its font size.
PLOT_WIDTH = 360 - 2 * 22
CHAR_WIDTH = 6.5


def tick_label(x: float) -> str:
    """A score as an axis label: short (3 significant digits), whole numbers without decimals.

    >>> tick_label(0.5), tick_label(1.0), tick_label(0.123456), tick_label(250.0)
    ('0.5', '1', '0.123', '250')
    """
    if float(x).is_integer() or abs(x) >= 100:
        return f"{x:.2f}".rstrip("0").rstrip(".")
    return f"{x:.3g}"


def histogram_ticks(histogram: dict[str, Any]) -> list[tuple[float, str]]:
    """Axis labels as (position from 0 to 1 across the plot, text), spaced so that no two overlap.

    Exact values are labelled under their bars, bins at their edges; a label
    is kept only when it starts after the previous kept one ends (with a
    gap), so continuous rewards with many bins get every few edges.

    >>> ticks = histogram_ticks({"kind": "bins", "edges": [i / 20 for i in range(21)], "counts": [1] * 20})
    >>> [label for _, label in ticks]
    ['0', '0.1', '0.2', '0.3', '0.4', '0.5', '0.6', '0.7', '0.8', '0.9', '1']
    """
    if histogram.get("kind") == "values":
        n = max(len(histogram["values"]), 1)
        marks = [((i + 0.5) / n, tick_label(v)) for i, (v, _) in enumerate(histogram["values"])]
    else:
        edges = histogram["edges"]
        n = max(len(edges) - 1, 1)
        marks = [(i / n, tick_label(e)) for i, e in enumerate(edges)]
    for stride in range(1, len(marks) + 1):
        kept = marks[::stride]
        if _fits(kept):
            return kept
    return marks[:1]


def _fits(marks: list[tuple[float, str]]) -> bool:
    """Whether labels at these positions leave a gap between neighbours."""
    for (a, la), (b, lb) in itertools.pairwise(marks):
        if (b - a) * PLOT_WIDTH < (len(la) + len(lb)) / 2 * CHAR_WIDTH + CHAR_WIDTH:
            return False
    return True


def _counts_fit(histogram: dict[str, Any]) -> bool:
    """Whether every bar's count fits above it (else counts are left to the bars' tooltips)."""
    if histogram.get("kind") == "values":
        counts = [c for _, c in histogram["values"]]
    else:
        counts = histogram["counts"]
    width = PLOT_WIDTH / max(len(counts), 1)
    return all(len(str(c)) * CHAR_WIDTH <= width - 2 for c in counts)


def _summary_table(rewards: dict[str, Any], first: str) -> str:
    ks = sorted({k for r in rewards.values() for k in r.get("pass_at_k", {}) if k.startswith("pass@")})
    head = [first, "mean", "std", "min", "max", "scored", "None rate", "error rate", *ks]
    rows = []
    for name, r in rewards.items():
        cells = [
            escape(name),
            number(r["mean"]),
            number(r["std"]),
            number(r["min"]),
            number(r["max"]),
            number(r["scored"]),
        ]
        cells += [percent(r["none_rate"]), percent(r["error_rate"])]
        cells += [number(r.get("pass_at_k", {}).get(k)) for k in ks]
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    header = "".join(f"<th>{escape(h)}</th>" for h in head)
    return f'<table class="sortable"><thead><tr>{header}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _samples_table(title: str, samples: list[dict[str, Any]]) -> str:
    shown = [
        {
            "score": s["score"],
            "label": f"#{s['index']}.{s['sample']}",
            "prompt": s["prompt"],
            "completion": s.get("turns") or s["completion"],  # a trajectory turn by turn, with calls and results
            "notes": [("reason", s.get("reason")), ("reason err", s.get("error"))]
            + [("reason", line) for line in s.get("rewards", [])],
        }
        for s in samples
    ]
    return samples_table(title, shown)


def render_report(summary: dict[str, Any], samples: dict[str, Any], job: dict[str, Any]) -> str:
    """The HTML of ``report.html`` for a summary (``summary.json``), its samples and the job's description.

    >>> page = render_report({"rows": 1, "prompts": 1, "samples_per_prompt": 1, "complete": True, "rewards": {}},
    ...                      {}, {"dataset": "<b>x</b>"})
    >>> "&lt;b&gt;x&lt;/b&gt;" in page and "<b>x</b>" not in page
    True
    """
    rewards = summary.get("rewards", {})
    status = "complete" if summary.get("complete") else "partial"
    label = "complete" if status == "complete" else "partial: stopped before the end; rerun to continue"
    source = job.get("completions") or ""
    meta = (
        f"<p class='meta'>dataset <code>{escape(job.get('dataset', ''))}</code> · completions {escape(source)} · "
        f"{summary.get('rows', 0):,} rows from {summary.get('prompts', 0):,} prompts "
        f"({summary.get('samples_per_prompt', 1)} per prompt) · <span class='badge {status}'>{escape(label)}</span></p>"
    )
    parts = [f"<h1>rewardsmith evaluation</h1>{meta}", "<h2>Summary</h2>", _summary_table(rewards, "reward")]
    for task, info in summary.get("tasks", {}).items():
        parts.append(f"<h3>task {escape(task)} ({info['rows']:,} rows)</h3>")
        parts.append(_summary_table(info["rewards"], "reward"))
    generation = summary.get("generation")
    if generation:
        latency = generation["latency_s"]
        parts.append(
            "<h2>Generation</h2><p class='meta'>"
            f"{generation['samples']:,} samples · error rate {percent(generation['error_rate'])} · "
            f"cut at max_tokens {percent(generation['truncated_rate'])} · latency mean {number(latency['mean'])} s · "
            f"{generation['completion_tokens']:,} completion tokens</p>"
        )
    parts.append("<h2>Distributions</h2><noscript>The histograms are drawn by the page's script.</noscript>")
    cards = "".join(
        f"<div class='card'><h3>{escape(name)}</h3><div class='hist' data-reward='{escape(name)}'></div></div>"
        for name in rewards
    )
    parts.append(f"<div class='cards'>{cards}</div>")
    parts.append("<h2>Samples</h2><input id='filter' type='search' placeholder='filter samples by any text'>")
    for name, kept in samples.items():
        parts.append(f"<h3>{escape(name)}</h3>")
        parts.append(_samples_table(f"lowest {name}", kept.get("lowest", [])))
        parts.append(_samples_table(f"highest {name}", kept.get("highest", [])))
        parts.append(_samples_table(f"failures of {name}", kept.get("errors", [])))
    histograms = {name: r.get("histogram") for name, r in rewards.items()}
    data = {
        "histograms": histograms,
        "ticks": {name: histogram_ticks(h) for name, h in histograms.items() if h},
        "counts": {name: _counts_fit(h) for name, h in histograms.items() if h},
    }
    return html_page(
        f"rewardsmith evaluation: {job.get('dataset', '')}", "".join(parts), css=_CSS, data=data, script=_SCRIPT
    )
