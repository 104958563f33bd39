"""Small inline SVG plots: no plotting library, no CDN, nothing to fetch when the report opens."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

FONT = 'font-family="system-ui, sans-serif" font-size="11"'
INK, ACCENT, MUTED = "#1f2937", "#2563eb", "#9ca3af"


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def _ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    return [lo + (hi - lo) * i / (n - 1) for i in range(n)]


def intervals(rows: Sequence[tuple[str, float, float | None, float | None]], title: str,
              domain: tuple[float, float] | None = None) -> str:
    """One row per cell: the estimate as a dot, its confidence interval as a bar."""
    return forest([(label, mean, lo, hi, None, None) for label, mean, lo, hi in rows], title, domain, zero=False)


def forest(rows: Sequence[tuple[str, float, float | None, float | None, float | None, float | None]], title: str,
           domain: tuple[float, float] | None = None, zero: bool = True, note: str = "") -> str:
    """A forest plot: one row per estimate, a dot, its interval as a thick bar and, where given, a wider interval
    (the multiplicity-adjusted one) as a thin line; with ``zero``, a dashed line at no difference; ``note`` under
    the title."""
    if not rows:
        return ""
    label_w, plot_w, row_h, top = 230, 380, 18, 34 + 14 * bool(note)
    values = [v for row in rows for v in row[1:] if v is not None] + ([0.0] if zero else [])
    lo_d, hi_d = domain or (min(values), max(values))
    if hi_d == lo_d:
        lo_d, hi_d = lo_d - 0.5, hi_d + 0.5
    height = top + row_h * len(rows) + 24

    def x(v: float) -> float:
        return label_w + (v - lo_d) / (hi_d - lo_d) * plot_w

    title_x = label_w if not note else 8
    parts = [f'<text x="{title_x}" y="14" {FONT} font-weight="600">{escape(title)}</text>']
    if note:
        parts.append(f'<text x="{title_x}" y="28" {FONT} fill="{MUTED}">{escape(note)}</text>')
    for t in _ticks(lo_d, hi_d):
        parts.append(f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{top - 8}" y2="{height - 22}" stroke="#e5e7eb"/>')
        parts.append(f'<text x="{x(t):.1f}" y="{height - 8}" {FONT} text-anchor="middle" fill="{MUTED}">{_fmt(t)}</text>')
    if zero:
        parts.append(f'<line x1="{x(0):.1f}" x2="{x(0):.1f}" y1="{top - 8}" y2="{height - 22}" stroke="{INK}" '
                     'stroke-dasharray="4 3"><title>no difference</title></line>')
    for i, (label, mean, lo, hi, wide_lo, wide_hi) in enumerate(rows):
        y = top + i * row_h + row_h / 2
        parts.append(f'<text x="{label_w - 8}" y="{y + 4:.1f}" {FONT} text-anchor="end">{escape(label)}</text>')
        if wide_lo is not None and wide_hi is not None:
            parts.append(f'<line x1="{x(wide_lo):.1f}" x2="{x(wide_hi):.1f}" y1="{y:.1f}" y2="{y:.1f}" '
                         f'stroke="{MUTED}" stroke-width="1"/>')
        if lo is not None and hi is not None:
            parts.append(f'<line x1="{x(lo):.1f}" x2="{x(hi):.1f}" y1="{y:.1f}" y2="{y:.1f}" stroke="{ACCENT}" stroke-width="2"/>')
        tip = f"{mean:.4g}" + (f" [{lo:.4g}, {hi:.4g}]" if lo is not None else "") + (
            f", adjusted [{wide_lo:.4g}, {wide_hi:.4g}]" if wide_lo is not None else "")
        parts.append(f'<circle cx="{x(mean):.1f}" cy="{y:.1f}" r="4" fill="{INK}"><title>{escape(label)}: '
                     f"{tip}</title></circle>")
    return _svg(label_w + plot_w + 30, height, parts)


def frontier(vertices: Sequence[Sequence[float]], deals: Sequence[tuple[float, float, str]],
             disagreement: Sequence[float], nash: Sequence[float] | None, best: Sequence[Sequence[float]],
             ranges: Sequence[Sequence[float]], labels: tuple[str, str], title: str) -> str:
    """Deals in utility space against the exact Pareto frontier, Nash point and best joint gain."""
    size, pad = 380, 46
    (x0, x1), (y0, y1) = ranges

    def px(u: float) -> float:
        return pad + (u - x0) / ((x1 - x0) or 1) * size

    def py(v: float) -> float:
        return pad + size - (v - y0) / ((y1 - y0) or 1) * size

    parts = [f'<text x="{pad}" y="16" {FONT} font-weight="600">{escape(title)}</text>',
             f'<rect x="{pad}" y="{pad}" width="{size}" height="{size}" fill="#f9fafb" stroke="#e5e7eb"/>']
    for t in _ticks(x0, x1):
        parts.append(f'<text x="{px(t):.1f}" y="{pad + size + 14}" {FONT} text-anchor="middle" fill="{MUTED}">{_fmt(t)}</text>')
    for t in _ticks(y0, y1):
        parts.append(f'<text x="{pad - 4}" y="{py(t) + 4:.1f}" {FONT} text-anchor="end" fill="{MUTED}">{_fmt(t)}</text>')
    parts.append(f'<text x="{pad + size / 2}" y="{pad + size + 32}" {FONT} text-anchor="middle">{escape(labels[0])} utility</text>')
    parts.append(f'<text x="12" y="{pad + size / 2}" {FONT} text-anchor="middle" '
                 f'transform="rotate(-90 12 {pad + size / 2})">{escape(labels[1])} utility</text>')
    line = " ".join(f"{px(a):.1f},{py(b):.1f}" for a, b in vertices)
    parts.append(f'<polyline points="{line}" fill="none" stroke="{INK}" stroke-width="2"><title>Pareto frontier</title></polyline>')
    if len(best) == 2:
        (a, b), (c, d) = best
        parts.append(f'<line x1="{px(a):.1f}" y1="{py(b):.1f}" x2="{px(c):.1f}" y2="{py(d):.1f}" stroke="#16a34a" '
                     'stroke-width="5" opacity="0.5"><title>best joint gain</title></line>')
    for a, b, tip in deals:
        parts.append(f'<circle cx="{px(a):.1f}" cy="{py(b):.1f}" r="4" fill="{ACCENT}" opacity="0.55"><title>{escape(tip)}</title></circle>')
    da, db = disagreement
    parts.append(f'<rect x="{px(da) - 4:.1f}" y="{py(db) - 4:.1f}" width="8" height="8" fill="#dc2626"><title>no agreement</title></rect>')
    if nash is not None:
        na, nb = nash
        parts.append(f'<path d="M{px(na):.1f},{py(nb) - 7:.1f} l6,7 l-6,7 l-6,-7 z" fill="#f59e0b" stroke="{INK}">'
                     f"<title>Nash bargaining solution ({na:.4g}, {nb:.4g})</title></path>")
    legend = [("#1f2937", "Pareto frontier"), ("#16a34a", "best joint gain"), (ACCENT, "deal"),
              ("#f59e0b", "Nash solution"), ("#dc2626", "no agreement")]
    for i, (colour, name) in enumerate(legend):
        y = pad + 14 + i * 15
        parts.append(f'<rect x="{pad + size + 12}" y="{y - 8}" width="9" height="9" fill="{colour}"/>'
                     f'<text x="{pad + size + 26}" y="{y}" {FONT}>{name}</text>')
    return _svg(pad + size + 130, pad + size + 44, parts)


def bars(counts: Sequence[tuple[int, int]], title: str, xlabel: str) -> str:
    """A histogram of small integers (e.g. rounds to agreement)."""
    if not counts:
        return ""
    pad, plot_h, bar_w = 40, 160, 22
    top = max(n for _, n in counts)
    keys = list(range(min(k for k, _ in counts), max(k for k, _ in counts) + 1))
    table = dict(counts)
    parts = [f'<text x="{pad}" y="16" {FONT} font-weight="600">{escape(title)}</text>']
    for i, k in enumerate(keys):
        n = table.get(k, 0)
        h = n / top * plot_h
        x = pad + i * (bar_w + 4)
        parts.append(f'<rect x="{x}" y="{30 + plot_h - h:.1f}" width="{bar_w}" height="{h:.1f}" fill="{ACCENT}">'
                     f"<title>{k}: {n}</title></rect>")
        parts.append(f'<text x="{x + bar_w / 2}" y="{30 + plot_h + 14}" {FONT} text-anchor="middle">{k}</text>')
        if n:
            parts.append(f'<text x="{x + bar_w / 2}" y="{30 + plot_h - h - 3:.1f}" {FONT} text-anchor="middle" fill="{MUTED}">{n}</text>')
    width = pad + len(keys) * (bar_w + 4) + 20
    parts.append(f'<text x="{pad}" y="{30 + plot_h + 32}" {FONT}>{escape(xlabel)}</text>')
    return _svg(max(width, 260), 30 + plot_h + 40, parts)


def _svg(width: float, height: float, parts: list[str]) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" role="img">' + "".join(parts) + "</svg>")
