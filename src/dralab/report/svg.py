"""Turning a matplotlib figure into an SVG fragment that can sit inline in an HTML page.

matplotlib is imported inside the functions only, so importing ``dralab.report``
stays cheap for callers (the CLI) that may never draw.
"""

from __future__ import annotations

import html
import io
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["figure_to_svg", "plot_style"]

_STYLE: dict[str, Any] = {
    "font.size": 9.0,
    "axes.titlesize": 10.0,
    "axes.labelsize": 9.0,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "axes.axisbelow": True,
    "grid.color": "#dddddd",
    "grid.linewidth": 0.6,
    "legend.fontsize": 8.5,
    "legend.frameon": False,
    # Text stays text: smaller, selectable, and no glyph <defs> whose ids would
    # collide between the several SVGs of one page.
    "svg.fonttype": "none",
    # Images (the heat maps) inline as data: URIs: the page must open offline.
    "svg.image_inline": True,
}

# Everything matplotlib writes that names a file date or tool version; None omits it.
_NO_METADATA: dict[str, Any] = {"Date": None, "Creator": None, "Format": None, "Type": None}


@contextmanager
def plot_style(plot_id: str) -> Iterator[None]:
    """The report's matplotlib settings for drawing and saving the plot ``plot_id``.

    ``svg.hashsalt`` is fixed per plot so that the generated clip-path and
    marker ids are the same on every run (byte-identical reports).
    """
    import matplotlib as mpl

    # dict[Any, Any]: matplotlib types rc keys as a Literal of every known name.
    params: dict[Any, Any] = {**_STYLE, "svg.hashsalt": f"dralab-{plot_id}"}
    with mpl.rc_context(params):
        yield


_ID_ATTR = re.compile(r'\bid="([^"]+)"')
_ID_REF = re.compile(r'(url\(#|xlink:href="#|href="#)([^")]+)')


def figure_to_svg(fig: Figure, plot_id: str, title: str) -> str:
    """``fig`` as an ``<svg>`` element for inline use, ``id="svg-{plot_id}"``.

    Contract: no XML prolog or DOCTYPE; every id inside is prefixed with
    ``{plot_id}-`` so several SVGs can share one HTML document; the first
    child is a ``<title>`` (the accessible name) and the root has
    ``role="img"``; the root has no fixed width/height, so CSS sizes it from
    its viewBox. Deterministic for a deterministic figure. Call it inside
    ``plot_style(plot_id)``.
    """
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata=_NO_METADATA)
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    text = _ID_ATTR.sub(lambda m: f'id="{plot_id}-{m.group(1)}"', text)
    text = _ID_REF.sub(lambda m: f"{m.group(1)}{plot_id}-{m.group(2)}", text)
    svg_id = f"svg-{plot_id}"
    # matplotlib's own stylesheet is a bare `*{...}` rule; scope it to this SVG.
    text = text.replace("<style type=\"text/css\">*{", f"<style type=\"text/css\">#{svg_id} *{{", 1)
    head_end = text.index(">") + 1
    head = text[:head_end]
    head = re.sub(r'\s(width|height)="[^"]*"', "", head)
    head = head[:-1] + f' id="{svg_id}" role="img" aria-labelledby="{svg_id}-title">'
    return (f'{head}\n <title id="{svg_id}-title">{html.escape(title)}</title>'
            f"{text[head_end:].rstrip()}")
