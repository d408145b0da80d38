"""The report's blocks as one static HTML page: CSS inline, plots by relative path, no script, no URL."""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

from syslogbench.report.blocks import (
    Block,
    Contents,
    Document,
    Figure,
    Heading,
    Note,
    Notes,
    Paragraph,
    Section,
    Table,
)

# The page never scrolls sideways: the body's padding is inside its max-width, a table wider than the
# column scrolls in its own box, and a plot (at most 1,320 px, report/plots.py) is shown at its own size.
CSS = """
*, *::before, *::after { box-sizing: border-box; }
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1em auto; max-width: 1380px;
       padding: 0 1em; color: #222; line-height: 1.45; overflow-wrap: anywhere; }
h1, h2, h3 { line-height: 1.2; }
h1 { margin: .3em 0; }
h2 { border-bottom: 2px solid #ddd; padding-bottom: .2em; margin-top: 2em; }
table { border-collapse: collapse; margin: .5em 0 1em; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: .2em .4em; text-align: right; overflow-wrap: normal; }
th { background: #f0f0f0; white-space: normal; vertical-align: bottom; min-width: 4em; }
td:first-child, th:first-child { text-align: left; }
td:first-child { white-space: nowrap; }
tr.erratic td { background: #fff3cd; }
.scroll { overflow-x: auto; max-width: 100%; }
.note { font-size: 0.9em; color: #444; max-width: 70em; }
figure { margin: 1em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #ddd; }
figcaption { font-size: 0.9em; color: #444; }
code { background: #f4f4f4; padding: 0 .2em; }
"""


def inline(text: str) -> str:
    """Escaped text with Markdown's `code`, **bold** and *emphasis* turned into tags."""
    parts = html.escape(text).split("`")
    out = "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))
    parts = out.split("**")
    out = "".join(f"<strong>{p}</strong>" if i % 2 else p for i, p in enumerate(parts))
    parts = out.split("*")
    return "".join(f"<em>{p}</em>" if i % 2 else p for i, p in enumerate(parts))


def plain(text: str) -> str:
    """Text for a place that takes no tags, such as the page's title: the marks dropped, escaped."""
    return html.escape(text.replace("`", ""))


def table(header: Sequence[str], rows: Sequence[Sequence[str]], classes: Sequence[str] = ()) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = []
    for i, row in enumerate(rows):
        css = classes[i] if i < len(classes) else ""
        attr = f' class="{css}"' if css else ""
        body.append(f"<tr{attr}>" + "".join(f"<td>{inline(c)}</td>" for c in row) + "</tr>")
    return (
        '<div class="scroll"><table><thead><tr>'
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


def contents(title: str, entries: Sequence[tuple[str, str]]) -> str:
    links = " &middot; ".join(
        f'<a href="#{html.escape(anchor)}">{html.escape(label)}</a>' for label, anchor in entries
    )
    return f"<p>{html.escape(title)}: {links}</p>"


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
        case Table(header, rows, classes):
            return table(header, rows, classes)
        case Figure(caption, path):
            return figure(caption, path)
        case Contents(title, entries):
            return contents(title, entries)
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
        f"<title>{title}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )
