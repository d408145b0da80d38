"""The report's blocks as Markdown: a blank line between blocks, GitHub tables, plots as images."""

from __future__ import annotations

from collections.abc import Sequence

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
    Table,
)


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def block(item: Block) -> str | None:
    """One block's Markdown; None for what a text file does without."""
    match item:
        case Heading(text, level):
            return "#" * level + " " + text
        case Paragraph(text) | Note(text):
            return text
        case Lead(text):
            return "> " + text
        case Notes(items):
            return "\n".join(f"- {text}" for text in items)
        case Table(header, rows):
            return table(header, rows)
        case Figure(caption, path):
            return f"![{caption}]({path})"
        case Contents():
            return None  # a text file is read top to bottom; its headings are its contents
        case Details(summary, inner):
            # GitHub folds it as the page does; the blank lines let the Markdown inside render.
            return f"<details><summary>{summary}</summary>\n\n{blocks(inner)}\n\n</details>"
    raise TypeError(f"no Markdown for {item!r}")


def blocks(items: Sequence[Block]) -> str:
    return "\n\n".join(text for text in map(block, items) if text is not None)


def document(doc: Document) -> str:
    items = [Heading(doc.title, 1), *(item for section in doc.sections for item in section.blocks)]
    return blocks(items) + "\n"
