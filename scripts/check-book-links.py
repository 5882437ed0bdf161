#!/usr/bin/env python3
"""Checks the links of the built user guide (mdBook's HTML, `scripts/book` builds it).

Every `href` and `src` in every page that points inside the book must name a file that exists,
and its `#fragment`, if any, an `id` (or `name`) in that file. Links with a scheme (https:,
mailto:, …) are not followed: the guide is checked offline. Prints each broken link as
`page: link (why)` and exits 1 when there is one, 0 otherwise.

With `--readme FILE` (the repository's README.md), that file's relative Markdown links are
checked too: each must name a file that exists, and a `docs/src/<page>.md#anchor` link an
anchor of the built page.

Usage: scripts/check-book-links.py BOOK_DIR [--readme README.md]
"""

import re

import html.parser
import os
import sys
import urllib.parse


class Page(html.parser.HTMLParser):
    """The links and the anchors (ids and names) of one HTML page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links = []
        self.anchors = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if value is None:
                continue
            if name in ("id", "name") and tag != "meta":
                self.anchors.add(value)
            if name == "href" or (name == "src" and tag in ("img", "script")):
                self.links.append(value)


def parse(path, cache):
    if path not in cache:
        page = Page()
        with open(path, encoding="utf-8") as f:
            page.feed(f.read())
        cache[path] = page
    return cache[path]


def check_readme(readme, root, cache, broken):
    """Appends to `broken` each relative link of the Markdown file `readme` that resolves to
    nothing (a file, or an anchor of the guide's built page)."""
    base = os.path.dirname(os.path.realpath(readme))
    src = os.path.join(base, "docs", "src")
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    for link in re.findall(r"\]\(([^)\s]+)\)", text):
        url = urllib.parse.urlsplit(link)
        if url.scheme or url.netloc or not url.path:
            continue
        path = os.path.normpath(os.path.join(base, urllib.parse.unquote(url.path)))
        if not os.path.exists(path):
            broken.append(f"{readme}: {link} (no such file)")
            continue
        if url.fragment and path.startswith(src + os.sep) and path.endswith(".md"):
            page = os.path.join(root, os.path.relpath(path, src)[: -len(".md")] + ".html")
            if not os.path.isfile(page):
                broken.append(f"{readme}: {link} (no built page {page})")
            elif url.fragment not in parse(page, cache).anchors:
                broken.append(f"{readme}: {link} (no anchor #{url.fragment})")


def main():
    args = sys.argv[1:]
    readme = None
    if len(args) == 3 and args[1] == "--readme":
        readme = args[2]
        args = args[:1]
    if len(args) != 1:
        print("usage: check-book-links.py BOOK_DIR [--readme README.md]", file=sys.stderr)
        return 2
    root = os.path.realpath(args[0])
    cache = {}
    broken = []
    pages = 0
    for folder, _, files in os.walk(root):
        for name in sorted(files):
            # 404.html is served for any missing path, so its links are written from the
            # site's root (`<base href="/">`), not from where the file lies.
            if not name.endswith(".html") or name == "404.html":
                continue
            page_path = os.path.join(folder, name)
            pages += 1
            for link in parse(page_path, cache).links:
                url = urllib.parse.urlsplit(link)
                if url.scheme or url.netloc:
                    continue
                rel = os.path.relpath(page_path, root)
                target = page_path
                if url.path:
                    target = os.path.normpath(
                        os.path.join(folder, urllib.parse.unquote(url.path))
                    )
                    if os.path.isdir(target):
                        target = os.path.join(target, "index.html")
                    if not (target == root or target.startswith(root + os.sep)):
                        broken.append(f"{rel}: {link} (points outside the book)")
                        continue
                    if not os.path.isfile(target):
                        broken.append(f"{rel}: {link} (no such file)")
                        continue
                fragment = urllib.parse.unquote(url.fragment)
                if fragment and target.endswith(".html"):
                    if fragment not in parse(target, cache).anchors:
                        broken.append(f"{rel}: {link} (no anchor #{fragment})")
    if readme:
        check_readme(readme, root, cache, broken)
    for line in broken:
        print(line)
    if pages == 0:
        print(f"check-book-links: no HTML pages under {root}", file=sys.stderr)
        return 1
    if broken:
        print(f"check-book-links: {len(broken)} broken links in {pages} pages", file=sys.stderr)
        return 1
    print(f"check-book-links: {pages} pages, every internal link and anchor resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main())
