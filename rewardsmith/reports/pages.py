"""Self-contained HTML pages (the evaluation report, the reward audit): escaping, embedded data, the shared style.

Every page is one file that opens offline: its CSS, script and data are
inline. Text from datasets and completions is hostile input, so it is
HTML-escaped in the markup (:func:`escape`), the embedded JSON has ``<``,
``>`` and ``&`` escaped so that no text can close its ``<script>`` element
(:func:`script_json`), and page scripts only ever set ``textContent`` from data.

>>> page = html_page("demo <1>", "<p>hi</p>", data={"x": "</script>"})
>>> "<title>demo &lt;1&gt;</title>" in page, "</script>\\"" in page, "\\\\u003c/script\\\\u003e" in page
(True, False, True)
"""

from __future__ import annotations

import html
import json
from typing import Any

__all__ = ["BASE_CSS", "TABLE_SCRIPT", "escape", "html_page", "number", "percent", "samples_table", "script_json"]

#: The look shared by rewardsmith's pages: layout, headings, tables, cards, samples, the filter box.
BASE_CSS = """
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
.samples td,.samples th{text-align:left}.samples td.num{text-align:right;white-space:nowrap;width:64px}
.samples td:nth-child(2){width:42%}
pre{white-space:pre-wrap;word-break:break-word;margin:0;font:12px/1.4 ui-monospace,Menlo,Consolas,monospace;
max-height:220px;overflow:auto;background:#f8f9fb;padding:6px;border-radius:4px}
.reason{color:#5b6475;font-size:12px;margin-top:4px}.err{color:#a1261b}
#filter{padding:6px 10px;width:320px;border:1px solid #c9ced8;border-radius:6px;margin-bottom:10px}
"""

#: Sortable tables (``table.sortable``: click a header) and the sample filter (``#filter`` over ``tr.sample``).
TABLE_SCRIPT = r"""
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
"""


def escape(value: Any) -> str:
    """``value`` as text safe in HTML markup and attribute values.

    >>> escape('<b title="x">')
    '&lt;b title=&quot;x&quot;&gt;'
    """
    return html.escape(str(value), quote=True)


def number(value: Any) -> str:
    """A number for a table cell: ``–`` for ``None``, floats without trailing zeros.

    >>> number(None), number(0.5), number(1.0), number(3), number(2.5e7)
    ('–', '0.5', '1', '3', '2.5e+07')
    """
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.4f}".rstrip("0").rstrip(".") if abs(value) < 1e6 else f"{value:.3g}"
    return escape(value)


def percent(value: Any) -> str:
    """A share as a percentage for a table cell (``–`` for ``None``).

    >>> percent(0.1234), percent(None)
    ('12.3%', '–')
    """
    return "–" if value is None else f"{100 * value:.1f}%"


def script_json(value: Any) -> str:
    """``value`` as JSON that is safe inside a ``<script>`` element (``<``, ``>``, ``&`` escaped)."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def samples_table(title: str, samples: list[dict[str, Any]]) -> str:
    """A titled table of samples (``tr.sample``, which the filter box filters), empty for none.

    Each sample is a dict with ``score``, ``label`` (under the score), ``prompt``,
    ``completion`` and ``notes``: ``(css class, text)`` lines shown under the completion.

    >>> sample = {"score": 1.0, "label": "#0", "prompt": "<p>", "completion": "c", "notes": [("reason", "ok")]}
    >>> samples_table("t", [sample])
    "<h3>t</h3><table class='samples'>...<pre>&lt;p&gt;</pre>...<div class='reason'>ok</div></td></tr></tbody></table>"
    """
    if not samples:
        return ""
    rows = []
    for s in samples:
        notes = "".join(f"<div class='{escape(css)}'>{escape(text)}</div>" for css, text in s.get("notes", []) if text)
        rows.append(
            f"<tr class='sample'><td class='num'>{number(s.get('score'))}<br><small>{escape(s.get('label', ''))}"
            f"</small></td><td><pre>{escape(s.get('prompt', ''))}</pre></td>"
            f"<td><pre>{escape(s.get('completion', ''))}</pre>{notes}</td></tr>"
        )
    return (
        f"<h3>{escape(title)}</h3><table class='samples'><thead><tr><th>score</th><th>prompt</th>"
        f"<th>completion and reason</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def html_page(title: str, body: str, *, css: str = "", data: Any = None, script: str = "") -> str:
    """A whole page: ``body`` (markup, already escaped) in ``<main>``, with the shared style plus ``css``.

    ``data`` is embedded as JSON in ``<script id="report-data">``; ``script``
    runs after it, followed by :data:`TABLE_SCRIPT`, inside one function, and
    the page marks ``<body data-ready="true">`` once it ran to the end.
    """
    embedded = f"<script type='application/json' id='report-data'>{script_json(data)}</script>"
    code = f"(function(){{{script}{TABLE_SCRIPT}  document.body.dataset.ready = 'true';\n}})();"
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width,initial-scale=1'>"
        f"<title>{escape(title)}</title><style>{BASE_CSS}{css}</style></head>"
        f"<body><main>{body}</main>{embedded}<script>{code}</script></body></html>\n"
    )
