#!/usr/bin/env python3
"""Length and sentence statistics of markdown docs (issue 61): lines, sentences, median words
per sentence and the share of sentences over 40 words. What it skips: fenced code blocks,
tables (lines starting with `|`), headings, HTML comments and blank lines; inline code spans
count as one word each; list markers are dropped. A sentence ends at `.`, `!` or `?` followed by
a space or the end of a paragraph (so `e.g.` and `3.5` end none: the next character is not a
space, or a lower-case letter follows)."""
import re
import statistics
import sys


def prose(text):
    """The document's prose, paragraph by paragraph."""
    paragraphs, current, fenced = [], [], False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            fenced = not fenced
            continue
        if fenced or stripped.startswith("|") or stripped.startswith("#") or stripped.startswith("<!--"):
            if current:
                paragraphs.append(" ".join(current))
                current = []
            continue
        if not stripped:
            if current:
                paragraphs.append(" ".join(current))
                current = []
            continue
        current.append(re.sub(r"^([-*+]|\d+\.)\s+", "", stripped))
    if current:
        paragraphs.append(" ".join(current))
    return paragraphs


def sentences(paragraph):
    text = re.sub(r"`[^`]*`", "CODE", paragraph)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z(`\"*0-9])", text)
    return [p for p in parts if re.search(r"\w", p)]


def stats(path):
    text = open(path, encoding="utf-8").read()
    words = [len(s.split()) for p in prose(text) for s in sentences(p)]
    over = sum(1 for w in words if w > 40)
    return {
        "file": path,
        "lines": len(text.splitlines()),
        "sentences": len(words),
        "median words": statistics.median(words) if words else 0,
        "over 40 words": f"{100 * over / len(words):.0f} %" if words else "0 %",
    }


if __name__ == "__main__":
    rows = [stats(p) for p in sys.argv[1:]]
    keys = list(rows[0].keys())
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for r in rows:
        print("| " + " | ".join(str(r[k]) for k in keys) + " |")
