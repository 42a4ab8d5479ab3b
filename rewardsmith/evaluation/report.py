"""``report.html``: one self-contained page (no network: CSS, script and data inline) that opens offline.

The page shows the job, the summary table (sortable), per-task breakdowns,
generation figures, a histogram per reward (SVG drawn by the page's script
from the embedded data), and per reward the lowest- and highest-scoring
samples and the first failures, with their reasons. A box filters the samples.

Completions are hostile input: everything from the data is HTML-escaped in
the markup, the embedded JSON has ``<``, ``>`` and ``&`` escaped so no text
can close its ``<script>`` element, and the script only ever sets
``textContent`` (never ``innerHTML``) from data.
"""

from __future__ import annotations

import html
import json
from typing import Any

__all__ = ["render_report"]

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
main{max-width:1180px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 10px}h3{font-size:15px;margin:18px 0 8px}
.meta{color:#5b6475;margin:0 0 16px}.meta code{background:#eceff3;padding:1px 5px;border-radius:4px}
.badge{display:inline-block;padding:2px 8px;border-radius:10px;font-size:12px;font-weight:600}
.complete{background:#dff3e4;color:#17692f}.partial{background:#fdecd2;color:#8a4b00}
table{border-collapse:collapse;background:#fff;width:100%;box-shadow:0 1px 2px #0001;border-radius:6px;overflow:hidden}
th,td{padding:6px 10px;border-bottom:1px solid #e7e9ee;text-align:right;vertical-align:top}
th{background:#eef1f5;cursor:pointer;user-select:none;font-weight:600}th:first-child,td:first-child{text-align:left}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(360px,1fr));gap:14px}
.card{background:#fff;border-radius:8px;padding:12px 14px;box-shadow:0 1px 2px #0001}
.hist svg{width:100%;height:170px}.hist rect{fill:#4f7cd6}.hist text{font-size:10px;fill:#5b6475}
.samples td,.samples th{text-align:left}.samples td.num{text-align:right;white-space:nowrap;width:64px}
.samples td:nth-child(2){width:42%}
pre{white-space:pre-wrap;word-break:break-word;margin:0;font:12px/1.4 ui-monospace,Menlo,Consolas,monospace;
max-height:220px;overflow:auto;background:#f8f9fb;padding:6px;border-radius:4px}
.reason{color:#5b6475;font-size:12px;margin-top:4px}.err{color:#a1261b}
#filter{padding:6px 10px;width:320px;border:1px solid #c9ced8;border-radius:6px;margin-bottom:10px}
"""

_SCRIPT = r"""
(function(){
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const NS = 'http://www.w3.org/2000/svg';
  function el(tag, attrs, text){ const e = document.createElementNS(NS, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]); if (text !== undefined) e.textContent = text; return e; }
  function fmt(x){ return Math.abs(x) >= 100 || Number.isInteger(x) ? String(+x.toFixed(2)) : x.toPrecision(3); }
  for (const box of document.querySelectorAll('.hist')) {
    const h = data.histograms[box.dataset.reward]; if (!h) continue;
    let labels, counts;
    if (h.kind === 'values') { labels = h.values.map(v => fmt(v[0])); counts = h.values.map(v => v[1]); }
    else { counts = h.counts; labels = h.counts.map((_, i) => fmt(h.edges[i])); }
    const W = 360, H = 170, pad = 22, n = Math.max(counts.length, 1), top = Math.max(1, ...counts);
    const svg = el('svg', {viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': 'histogram of ' + box.dataset.reward});
    const bw = (W - 2 * pad) / n;
    counts.forEach((c, i) => {
      const bh = (H - 2 * pad) * c / top, x = pad + i * bw, y = H - pad - bh;
      const r = el('rect', {x: x + 1, y: y, width: Math.max(bw - 2, 1), height: bh});
      r.appendChild(el('title', {}, labels[i] + ': ' + c)); svg.appendChild(r);
      const mid = {x: x + bw / 2, 'text-anchor': 'middle'};
      if (n <= 12 || i % Math.ceil(n / 10) === 0) svg.appendChild(el('text', {...mid, y: H - 6}, labels[i]));
      if (n <= 12 && c) svg.appendChild(el('text', {...mid, y: y - 3}, String(c)));
    });
    box.appendChild(svg);
  }
  for (const table of document.querySelectorAll('table.sortable')) {
    table.querySelectorAll('th').forEach((th, col) => th.addEventListener('click', () => {
      const body = table.tBodies[0], rows = Array.from(body.rows), dir = th.dataset.dir === 'asc' ? -1 : 1;
      th.dataset.dir = dir === 1 ? 'asc' : 'desc';
      const key = r => { const t = r.cells[col].textContent.trim(); const v = parseFloat(t); return isNaN(v) ? t : v; };
      rows.sort((a, b) => (key(a) > key(b) ? 1 : key(a) < key(b) ? -1 : 0) * dir).forEach(r => body.appendChild(r));
    }));
  }
  const filter = document.getElementById('filter');
  if (filter) filter.addEventListener('input', () => {
    const q = filter.value.toLowerCase();
    document.querySelectorAll('tr.sample').forEach(r => { r.hidden = q && !r.textContent.toLowerCase().includes(q); });
  });
  document.body.dataset.ready = 'true';
})();
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _num(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.4f}".rstrip("0").rstrip(".") if abs(value) < 1e6 else f"{value:.3g}"
    return _e(value)


def _pct(value: Any) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def _script_json(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def _summary_table(rewards: dict[str, Any], first: str) -> str:
    ks = sorted({k for r in rewards.values() for k in r.get("pass_at_k", {}) if k.startswith("pass@")})
    head = [first, "mean", "std", "min", "max", "scored", "None rate", "error rate", *ks]
    rows = []
    for name, r in rewards.items():
        cells = [_e(name), _num(r["mean"]), _num(r["std"]), _num(r["min"]), _num(r["max"]), _num(r["scored"])]
        cells += [_pct(r["none_rate"]), _pct(r["error_rate"])]
        cells += [_num(r.get("pass_at_k", {}).get(k)) for k in ks]
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    header = "".join(f"<th>{_e(h)}</th>" for h in head)
    return f'<table class="sortable"><thead><tr>{header}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _sample_rows(samples: list[dict[str, Any]]) -> str:
    out = []
    for s in samples:
        note = f'<div class="reason err">{_e(s["error"])}</div>' if s.get("error") else ""
        reason = f'<div class="reason">{_e(s["reason"])}</div>' if s.get("reason") else ""
        out.append(
            f'<tr class="sample"><td class="num">{_num(s["score"])}<br><small>#{s["index"]}.{s["sample"]}</small></td>'
            f"<td><pre>{_e(s['prompt'])}</pre></td><td><pre>{_e(s['completion'])}</pre>{reason}{note}</td></tr>"
        )
    return "".join(out)


def _samples_table(title: str, samples: list[dict[str, Any]]) -> str:
    if not samples:
        return ""
    return (
        f"<h3>{_e(title)}</h3><table class='samples'><thead><tr><th>score</th><th>prompt</th>"
        f"<th>completion and reason</th></tr></thead><tbody>{_sample_rows(samples)}</tbody></table>"
    )


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
        f"<p class='meta'>dataset <code>{_e(job.get('dataset', ''))}</code> · completions {_e(source)} · "
        f"{summary.get('rows', 0):,} rows from {summary.get('prompts', 0):,} prompts "
        f"({summary.get('samples_per_prompt', 1)} per prompt) · <span class='badge {status}'>{_e(label)}</span></p>"
    )
    parts = [f"<h1>rewardsmith evaluation</h1>{meta}", "<h2>Summary</h2>", _summary_table(rewards, "reward")]
    for task, info in summary.get("tasks", {}).items():
        parts.append(f"<h3>task {_e(task)} ({info['rows']:,} rows)</h3>")
        parts.append(_summary_table(info["rewards"], "reward"))
    generation = summary.get("generation")
    if generation:
        latency = generation["latency_s"]
        parts.append(
            "<h2>Generation</h2><p class='meta'>"
            f"{generation['samples']:,} samples · error rate {_pct(generation['error_rate'])} · "
            f"cut at max_tokens {_pct(generation['truncated_rate'])} · latency mean {_num(latency['mean'])} s · "
            f"{generation['completion_tokens']:,} completion tokens</p>"
        )
    parts.append("<h2>Distributions</h2><noscript>The histograms are drawn by the page's script.</noscript>")
    cards = "".join(
        f"<div class='card'><h3>{_e(name)}</h3><div class='hist' data-reward='{_e(name)}'></div></div>"
        for name in rewards
    )
    parts.append(f"<div class='cards'>{cards}</div>")
    parts.append("<h2>Samples</h2><input id='filter' type='search' placeholder='filter samples by any text'>")
    for name, kept in samples.items():
        parts.append(f"<h3>{_e(name)}</h3>")
        parts.append(_samples_table(f"lowest {name}", kept.get("lowest", [])))
        parts.append(_samples_table(f"highest {name}", kept.get("highest", [])))
        parts.append(_samples_table(f"failures of {name}", kept.get("errors", [])))
    data = {"histograms": {name: r.get("histogram") for name, r in rewards.items()}}
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width,initial-scale=1'>"
        f"<title>rewardsmith evaluation: {_e(job.get('dataset', ''))}</title><style>{_CSS}</style></head>"
        f"<body><main>{''.join(parts)}</main>"
        f"<script type='application/json' id='report-data'>{_script_json(data)}</script>"
        f"<script>{_SCRIPT}</script></body></html>\n"
    )
