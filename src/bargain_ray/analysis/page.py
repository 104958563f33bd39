"""What every page of the project shares (the report and the live view): the style, escaping for HTML and for a
script, tables of frames, private blocks.

Every value placed in a page goes through ``escape`` (text and attribute values) or ``script_value`` (a value
inside a ``<script>``), so no text from a model, a folder name or a query string can close an element.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

import polars as pl

CSS = """
body{font-family:system-ui,sans-serif;margin:24px;color:#1f2937;max-width:1320px}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #e5e7eb}
h3{font-size:15px;margin:18px 0 6px} h4{font-size:13px;margin:12px 0 4px}
.meta{color:#6b7280;font-size:13px}
.wrap{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-size:12px;margin:6px 0}
th,td{border:1px solid #e5e7eb;padding:3px 7px;text-align:right;white-space:nowrap}
th{background:#f3f4f6} td.l,th.l{text-align:left}
.plots{display:flex;flex-wrap:wrap;gap:18px;align-items:flex-start}
.plots figure{margin:0;border:1px solid #e5e7eb;padding:8px;background:#fff}
details.game{border:1px solid #e5e7eb;margin:6px 0;padding:4px 10px}
details.game>summary{cursor:pointer;font-size:13px}
.turn{border-left:3px solid #93c5fd;margin:10px 0;padding:2px 10px}
.turn h4{margin:2px 0;font-size:13px} .cid{color:#6b7280;font-size:11px;font-family:monospace}
pre{background:#f9fafb;padding:6px;font-size:12px;white-space:pre-wrap;margin:4px 0}
.private{border:2px dashed #a855f7;background:#faf5ff;padding:4px 8px;margin:6px 0}
.private .tag{color:#7e22ce;font-weight:700;font-size:11px;letter-spacing:.04em}
.undelivered{color:#6b7280;font-style:italic}
.invalid{border-left:3px solid #f59e0b;background:#fffbeb;padding:2px 8px;margin:4px 0;font-size:12px}
.technical{border:2px solid #dc2626;background:#fef2f2;color:#991b1b;padding:4px 8px;margin:6px 0;font-weight:600}
.status-TECHNICAL_ERROR{color:#dc2626;font-weight:700} .status-AGREEMENT{color:#15803d}
.status-FORMAT_FAILURE{color:#b45309}
nav.toc{font-size:13px;max-width:900px} nav.toc a{color:#2563eb} nav.toc ol ol{font-size:12px}
.legend{font-size:13px} .legend dt{font-weight:600;display:inline} .legend dd{display:inline;margin:0 14px 0 4px}
.filters{font-size:13px;margin:8px 0} .filters select{margin-right:12px}
.ours{background:#fef3c7;color:#92400e;font-weight:700;font-size:11px;padding:0 4px;border-radius:3px}
.sim{color:#b45309;font-weight:600}
.deal{font-size:12px;color:#374151}
table.provenance td,table.provenance th{white-space:normal;text-align:left;vertical-align:top;max-width:460px}
table.provenance tr.ours{font-weight:400;font-size:12px;color:inherit} table.provenance tr.ours td{background:#fef3c7}
table.provenance tr.ours td:nth-last-child(2){color:#92400e;font-weight:700}
"""

_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _visible(m: re.Match[str]) -> str:
    code = ord(m.group())
    return chr(0x2400 + code) if code < 0x20 else "\u2421" if code == 0x7F else "\ufffd"


def escape(text: str) -> str:
    """HTML-escaped text (quotes included, so it is safe in an attribute too) with control characters made
    visible (our choice): C0 controls but tab and newline as their Unicode control pictures (NUL as U+2400, ESC
    as U+241B), DEL as U+2421, C1 as U+FFFD, so no raw control byte from a model's reply reaches the page."""
    return _CONTROLS.sub(_visible, html.escape(text))


def script_value(value: Any) -> str:
    """A value as a JavaScript literal inside ``<script>``: JSON with ``<``, ``>``, ``&`` and the line
    separators escaped, so no string can close the script (``</script>``) or open a comment (``<!--``)."""
    text = json.dumps(value)
    for ch, code in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(ch, code)
    return text


def number(v: Any) -> str:
    """A cell as the page shows it: yes/no, four significant digits, text escaped."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.4g}"
    return escape(str(v))


def table(frame: pl.DataFrame, left: int = 0, empty: str = "none") -> str:
    """A frame as an HTML table; the first ``left`` columns are left-aligned labels. ``empty`` says why a
    table has no rows."""
    if frame.height == 0:
        return f'<p class="meta">({escape(empty)})</p>'
    head = "".join(f'<th class="{"l" if i < left else ""}">{escape(c)}</th>' for i, c in enumerate(frame.columns))
    body = "".join(
        "<tr>" + "".join(f'<td class="{"l" if i < left else ""}">{number(v)}</td>' for i, v in enumerate(row)) + "</tr>"
        for row in frame.iter_rows()
    )
    return f'<div class="wrap"><table><tr>{head}</tr>{body}</table></div>'


def cell_label(row: dict[str, Any], by: list[str]) -> str:  # free-form: a table row as polars gives it
    return " · ".join(("a" if c == "assignment" else "") + str(row[c]) for c in by if row.get(c) is not None)


def varying(frame: pl.DataFrame, by: list[str]) -> list[str]:
    """The grouping columns that take more than one value (labels need only these)."""
    return [c for c in by if frame[c].n_unique() > 1] or by


def source_tag(source: str | None) -> str:
    """Where a text's wording comes from; ours (no seed gives it) is marked so a reader sees it."""
    if source is None:
        return ""
    return ' <span class="ours">OURS, not a seed\'s</span>' if source == "ours" else f" <span class=meta>({escape(source)})</span>"


def private_block(title: str, body: str, folded: bool = False, source: str | None = None) -> str:
    """A text only one side saw, marked ``PRIVATE`` (folded for long briefs)."""
    tag = f'<span class="tag">PRIVATE · {escape(title)}</span>{source_tag(source)}'
    if folded:
        return f'<details class="private"><summary>{tag}</summary><pre>{escape(body)}</pre></details>'
    return f'<div class="private">{tag}<pre>{escape(body)}</pre></div>'
