"""The report's building blocks: what a section holds, decided once, rendered to Markdown and to HTML.

Text in a block may carry Markdown's inline marks, `code`, **bold** and *emphasis*; the Markdown keeps
them and the HTML turns them into tags. Nothing here knows either output.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Heading:
    text: str
    level: int


@dataclass(frozen=True)
class Paragraph:
    text: str


@dataclass(frozen=True)
class Note:
    """A remark beside the figures: how to read them, what is missing, where they come from."""

    text: str


@dataclass(frozen=True)
class Notes:
    """A bulleted list of remarks."""

    items: Sequence[str]


@dataclass(frozen=True)
class Table:
    header: Sequence[str]
    rows: Sequence[Sequence[str]]
    # One class per row ("" for none) so a page can mark a row, e.g. an erratic profile.
    row_classes: Sequence[str] = ()
    # "stack": on a phone each row becomes a card of "header: value" lines, so the table never scrolls sideways.
    css_class: str = ""


@dataclass(frozen=True)
class Figure:
    """A plot, by its PNG's path relative to the report; an SVG of the same name sits beside it."""

    caption: str
    path: str


@dataclass(frozen=True)
class Contents:
    """Links to the anchored sections, as (label, anchor): a page's navigation, which a text file does without.
    folded: more links, behind folded_title, shown on demand (e.g. one per scenario)."""

    title: str
    entries: Sequence[tuple[str, str]]
    folded_title: str = ""
    folded: Sequence[tuple[str, str]] = ()


@dataclass(frozen=True)
class Lead:
    """One of the first screen's answers, set apart from the text around it."""

    text: str


@dataclass(frozen=True)
class Details:
    """Blocks a reader opens on demand (raw trial tables, the plots of single runs): folded on the page."""

    summary: str
    blocks: Sequence[Block]


Block = Heading | Paragraph | Note | Notes | Table | Figure | Contents | Lead | Details


@dataclass(frozen=True)
class Section:
    blocks: Sequence[Block]
    anchor: str | None = None  # a section others link to, e.g. one scenario's


@dataclass(frozen=True)
class Document:
    title: str
    sections: Sequence[Section] = field(default_factory=list)
