"""The README stays short and leads with the two commands; every relative link in README and docs/ resolves."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
README_MAX_LINES = 200
COMMANDS_WITHIN = 40

# [text](target) and ![alt](target); the target ends at the first space or closing parenthesis.
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")


def prose(text: str) -> str:
    """The text without fenced code blocks, where brackets are code, not links."""
    kept, inside = [], False
    for line in text.splitlines():
        if FENCE.match(line.strip()):
            inside = not inside
            continue
        if not inside:
            kept.append(line)
    return "\n".join(kept)


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    headings = re.findall(r"^#{1,6}\s+(.+)$", prose(page.read_text()), re.M)
    return {anchor(h) for h in headings}


def relative_links(page: Path) -> list[str]:
    targets = LINK.findall(prose(page.read_text()))
    return [t for t in targets if not re.match(r"^[a-z][a-z0-9+.-]*:", t)]


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in relative_links(page):
        path_part, _, fragment = target.partition("#")
        dest = (page.parent / path_part).resolve() if path_part else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            broken.append(f"{target}: no heading #{fragment} in {dest.name}")
    return broken


def test_readme_is_at_most_200_lines():
    lines = len(README.read_text().splitlines())
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines, at most {README_MAX_LINES}"


@pytest.mark.parametrize("command", ["make run", "make test"])
def test_readme_gives_the_two_commands_first(command):
    head = README.read_text().splitlines()[:COMMANDS_WITHIN]
    assert any(command in line for line in head), (
        f"`{command}` is not in README.md's first {COMMANDS_WITHIN} lines"
    )


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page):
    assert relative_links(page), f"{page.name} links nowhere: the check would be empty"
    assert broken_links(page) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_text_speaks_of_the_project_not_of_who_did_the_work(page):
    hits = [
        n for n, line in enumerate(page.read_text().splitlines(), 1) if re.search(r"\bhelpers?\b", line, re.I)
    ]
    assert hits == [], f"{page.name} says 'helper' on lines {hits}"


def test_the_link_check_finds_a_broken_link(tmp_path):
    (tmp_path / "there.md").write_text("# A heading\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](there.md#a-heading) [gone](missing.md) [bad anchor](there.md#nope) [web](https://example.org)\n"
        "```\n[in code](not-a-link.md)\n```\n"
    )
    assert broken_links(page) == ["missing.md: no such file", "there.md#nope: no heading #nope in there.md"]
