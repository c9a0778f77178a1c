#!/usr/bin/env python3
"""Checks a folder written by `kistore site` (tests/e2e/test_site.sh).

  site_check.py links SITE        every href/src of every page names a file of the site (and an
                                  id of that page, for a #fragment); no URL leaves the folder; no
                                  <script> but site.js, no inline event handler, no <img>; each
                                  page has its JSON beside it; each page parses with no stray tag
  site_check.py dom FILE WHAT...  assertions on a DOM that chromium --dump-dom printed (WHAT:
                                  bars=N rows=N text=STRING notext=STRING noimg title=STRING)
Prints one line per problem and exits 1 if there was any.
"""
import html.parser
import os
import sys
import urllib.parse

VOID = {"meta", "link", "br", "img", "input", "hr", "path", "line", "rect"}


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links, self.ids, self.scripts, self.problems = [], set(), [], []
        self.stack, self.text, self.tags = [], [], {}
        self.title, self._in_title = "", False

    def handle_starttag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        a = dict(attrs)
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"inline event handler {name} on <{tag}>")
            if name == "id":
                self.ids.add(value)
        if tag in ("a", "link") and "href" in a:
            self.links.append(a["href"])
        if tag == "script":
            self.scripts.append(a.get("src"))
            if "src" in a:
                self.links.append(a["src"])
        if tag == "img":
            self.problems.append(f"<img> element: {a}")
        if tag == "title":
            self._in_title = True
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID and self.stack and self.stack[-1] == tag:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes <{self.stack[-1] if self.stack else 'nothing'}>")
            if tag in self.stack:
                while self.stack and self.stack.pop() != tag:
                    pass
            return
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)
        if self._in_title:
            self.title += data


def parse(path):
    p = Page()
    with open(path, encoding="utf-8") as f:
        p.feed(f.read())
    p.close()
    if p.stack:
        p.problems.append(f"unclosed: {p.stack}")
    return p


def check_links(site):
    problems, pages = [], {}
    for folder, _, files in os.walk(site):
        for name in files:
            if name.endswith(".html"):
                path = os.path.join(folder, name)
                pages[os.path.realpath(path)] = parse(path)
    for path, page in sorted(pages.items()):
        rel = os.path.relpath(path, site)
        problems += [f"{rel}: {p}" for p in page.problems]
        if page.scripts != [os.path.relpath(os.path.join(site, "site.js"), os.path.dirname(path))]:
            problems.append(f"{rel}: scripts {page.scripts}, expected site.js only")
        for link in page.links:
            url = urllib.parse.urlsplit(link)
            if url.scheme or url.netloc or link.startswith("/"):
                problems.append(f"{rel}: {link} leaves the site")
                continue
            target = os.path.realpath(os.path.join(os.path.dirname(path), urllib.parse.unquote(url.path))) \
                if url.path else path
            if not target.startswith(os.path.realpath(site) + os.sep):
                problems.append(f"{rel}: {link} points outside the site")
            elif not os.path.isfile(target):
                problems.append(f"{rel}: {link}: no such file")
            elif url.fragment and target in pages and url.fragment not in pages[target].ids:
                problems.append(f"{rel}: {link}: no id {url.fragment!r} there")
        if rel != "index.html" and not os.path.isfile(path[:-5] + ".json"):
            problems.append(f"{rel}: no JSON beside it")
    print(f"{len(pages)} pages, {sum(len(p.links) for p in pages.values())} links checked")
    return problems


def check_dom(path, wants):
    page = parse(path)
    text = " ".join("".join(page.text).split())
    raw = open(path, encoding="utf-8").read()
    problems = []
    for want in wants:
        key, _, value = want.partition("=")
        if key == "bars":
            n = raw.count('<rect class="bar ')
            if n != int(value):
                problems.append(f"{n} chart bars, expected {value}")
        elif key == "rows":
            n = raw.count('<tr class="member"')
            if n != int(value):
                problems.append(f"{n} ranking rows, expected {value}")
        elif key == "text":
            if value not in text:
                problems.append(f"text {value!r} not rendered")
        elif key == "notext":
            if value in text:
                problems.append(f"text {value!r} rendered")
        elif key == "noimg":
            if page.tags.get("img"):
                problems.append(f"{page.tags['img']} <img> elements in the DOM")
            if page.tags.get("script", 0) != 1:
                problems.append(f"{page.tags.get('script', 0)} <script> elements, expected 1 (site.js)")
        elif key == "title":
            if page.title != value:
                problems.append(f"title {page.title!r}, expected {value!r}")
        else:
            problems.append(f"unknown check {want}")
    return problems


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "links":
        problems = check_links(sys.argv[2])
    elif len(sys.argv) >= 4 and sys.argv[1] == "dom":
        problems = check_dom(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)
    for p in problems[:50]:
        print("problem:", p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
