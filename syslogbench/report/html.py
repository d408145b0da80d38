"""The report's blocks as one static HTML page: CSS inline, plots by relative path, no script, no URL."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from pathlib import Path

from syslogbench.report.blocks import (
    Block,
    Contents,
    Details,
    Document,
    Figure,
    Heading,
    Lead,
    Note,
    Notes,
    Paragraph,
    Section,
    Table,
)

# The page never scrolls sideways: the body's padding is inside its max-width, a table wider than the
# column scrolls in its own box (a "stack" table becomes cards on a phone instead), and a plot (at most
# 1,320 px, report/drawing.py) is shown at its own size, or shrunk to the column on a narrower screen.
# Text cells are left-aligned, figures right-aligned (class "num") so their digits line up.
CSS = """
*, *::before, *::after { box-sizing: border-box; }
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1em auto; max-width: 1380px;
       padding: 0 1em; color: #222; line-height: 1.45; overflow-wrap: anywhere; }
h1, h2, h3 { line-height: 1.2; }
h1 { margin: .3em 0; font-size: 1.6em; }
h2 { border-bottom: 2px solid #ddd; padding-bottom: .2em; margin-top: 2em; }
nav { font-size: .95em; padding: .3em 0; border-bottom: 1px solid #ddd; }
nav details { display: inline; }
nav summary { display: inline; cursor: pointer; color: #0645ad; }
table { border-collapse: collapse; margin: .5em 0 1em; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: .2em .4em; text-align: left; overflow-wrap: normal; }
td.num { text-align: right; white-space: nowrap; }
th { background: #f0f0f0; white-space: normal; vertical-align: bottom; min-width: 4em; }
td:first-child { white-space: nowrap; }
tr.erratic td { background: #fff3cd; }
.scroll { overflow-x: auto; max-width: 100%; }
.note { font-size: 0.9em; color: #444; max-width: 70em; }
.lead { margin: .35em 0; padding: .3em .6em; border-left: 4px solid #1f77b4; background: #f5f9fc; }
details { margin: .5em 0; }
details > summary { cursor: pointer; color: #0645ad; }
figure { margin: 1em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #ddd; }
figcaption { font-size: 0.9em; color: #444; }
code { background: #f4f4f4; padding: 0 .2em; }
@media (max-width: 700px) {
  body { padding: 0 .5em; }
  table.stack, table.stack tbody, table.stack tr, table.stack td { display: block; width: 100%; }
  table.stack thead { display: none; }
  table.stack tr { border: 1px solid #ccc; margin-bottom: .6em; }
  table.stack td { border: none; border-bottom: 1px solid #eee; text-align: left; white-space: normal; }
  table.stack td::before { content: attr(data-label) ": "; font-weight: 600; }
}
"""


LINK = re.compile(r"\[([^\]]+)\]\((#[A-Za-z0-9_.:-]+)\)")  # [text](#anchor): a link within the page
NUMBER = re.compile(r"^[-+~<>≥≤]?[\d,.]+(\s?(%|x|×|ms|s|msg/s|msgs/s|MiB|GiB|MB))?(\s?\([^)]*\))?$")


def inline(text: str) -> str:
    """Escaped text with Markdown's `code`, **bold**, *emphasis* and [links](#anchor) turned into tags."""
    escaped = LINK.sub(r'<a href="\2">\1</a>', html.escape(text, quote=False))
    parts = escaped.split("`")
    out = "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))
    parts = out.split("**")
    out = "".join(f"<strong>{p}</strong>" if i % 2 else p for i, p in enumerate(parts))
    parts = out.split("*")
    return "".join(f"<em>{p}</em>" if i % 2 else p for i, p in enumerate(parts))


def plain(text: str) -> str:
    """Text for a place that takes no tags, such as the page's title: the marks dropped, escaped."""
    return html.escape(text.replace("`", ""))


def cell(text: str, label: str, stacked: bool) -> str:
    """One cell: right-aligned when it holds a figure; in a stacked table, labelled with its column."""
    attrs = ' class="num"' if NUMBER.match(text.strip()) else ""
    if stacked:
        attrs += f' data-label="{html.escape(label)}"'
    return f"<td{attrs}>{inline(text)}</td>"


def table(
    header: Sequence[str], rows: Sequence[Sequence[str]], classes: Sequence[str] = (), css_class: str = ""
) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    stacked = css_class == "stack"
    body = []
    for i, row in enumerate(rows):
        css = classes[i] if i < len(classes) else ""
        attr = f' class="{css}"' if css else ""
        cells = "".join(cell(c, header[j] if j < len(header) else "", stacked) for j, c in enumerate(row))
        body.append(f"<tr{attr}>{cells}</tr>")
    table_attr = f' class="{html.escape(css_class)}"' if css_class else ""
    return (
        f'<div class="scroll"><table{table_attr}><thead><tr>'
        + head
        + "</tr></thead><tbody>"
        + "".join(body)
        + "</tbody></table></div>"
    )


def figure(caption: str, path: str) -> str:
    svg = str(Path(path).with_suffix(".svg"))
    return (
        f'<figure><a href="{html.escape(svg)}"><img src="{html.escape(path)}" alt="{html.escape(caption)}">'
        f"</a><figcaption>{html.escape(caption)} (click for SVG)</figcaption></figure>"
    )


def links(entries: Sequence[tuple[str, str]]) -> str:
    return " &middot; ".join(
        f'<a href="#{html.escape(anchor)}">{html.escape(label)}</a>' for label, anchor in entries
    )


def contents(item: Contents) -> str:
    """The navigation bar: the main links, then the folded ones behind their own summary."""
    more = (
        f" &middot; <details><summary>{html.escape(item.folded_title)}</summary>: {links(item.folded)}</details>"
        if item.folded
        else ""
    )
    return f"<nav><strong>{html.escape(item.title)}:</strong> {links(item.entries)}{more}</nav>"


def block(item: Block) -> str:
    match item:
        case Heading(text, level):
            return f"<h{level}>{inline(text)}</h{level}>"
        case Paragraph(text):
            return f"<p>{inline(text)}</p>"
        case Note(text):
            return f'<p class="note">{inline(text)}</p>'
        case Notes(items):
            return '<ul class="note">' + "".join(f"<li>{inline(text)}</li>" for text in items) + "</ul>"
        case Table(header, rows, classes, css_class):
            return table(header, rows, classes, css_class)
        case Figure(caption, path):
            return figure(caption, path)
        case Contents():
            return contents(item)
        case Lead(text):
            return f'<p class="lead">{inline(text)}</p>'
        case Details(summary, inner):
            return (
                f"<details><summary>{inline(summary)}</summary>" + "".join(map(block, inner)) + "</details>"
            )
    raise TypeError(f"no HTML for {item!r}")


def section(part: Section) -> list[str]:
    lines = [block(item) for item in part.blocks]
    if part.anchor is None:
        return lines
    return [f'<section id="{html.escape(part.anchor)}">', *lines, "</section>"]


def document(doc: Document) -> str:
    """One static page; the title is plain text, in the tab as on the page."""
    title = plain(doc.title)
    body = [f"<h1>{title}</h1>", *(line for part in doc.sections for line in section(part))]
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{title}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )
