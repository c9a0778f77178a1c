#!/usr/bin/env python3
"""Checks a folder written by `kistore site` (tests/e2e/test_site.sh).

  site_check.py links SITE        every URL of every page (href, src and every other attribute that
                                  names one, url() in a style) names a file of the site, and an id
                                  of that page for a #fragment; no URL leaves the folder; style.css
                                  loads nothing; no <script> but site.js, no inline event handler,
                                  no <img>; each page is well
                                  formed: every element closed in order, no block element inside a
                                  <p> (HTML closes the <p> there), no id twice, every attribute
                                  value in double quotes
  site_check.py tidy SITE         HTML Tidy (Debian's `tidy`) reads every page with no error and no
                                  warning: the HTML5 validator the site is held to
  site_check.py dom FILE WHAT...  assertions on a DOM that chromium --dump-dom printed (WHAT:
                                  bars=N rows=N text=STRING notext=STRING noimg title=STRING)
Prints one line per problem and exits 1 if there was any.
"""
import html.parser
import os
import re
import subprocess
import sys
import urllib.parse

VOID = {"meta", "link", "br", "img", "input", "hr", "path", "line", "rect"}
# Elements whose start tag closes an open <p> (HTML's tree construction): inside a <p> in the
# source, they end it early and the </p> after them opens an empty one.
CLOSES_P = {"address", "article", "aside", "blockquote", "details", "dialog", "div", "dl", "fieldset",
            "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header",
            "hgroup", "hr", "main", "menu", "nav", "ol", "p", "pre", "section", "summary", "table", "ul"}
# Attributes whose value is a URL (or URLs); xmlns names a namespace and is never fetched.
URL_ATTRS = {"href", "src", "xlink:href", "action", "formaction", "data", "poster", "cite",
             "background", "manifest", "longdesc", "ping", "srcset", "imagesrcset"}
CSS_URL = re.compile(r"url\(\s*(['\"]?)([^'\")]*)\1\s*\)|@import\s+(['\"])([^'\"]*)\3", re.I)
# One attribute of a start tag as written: name, then = and a value in double quotes, or nothing.
ATTR = re.compile(r'\s+([^\s"\'>/=]+)(\s*=\s*("[^"]*"|\'[^\']*\'|[^\s"\'=<>`]+))?')


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links, self.ids, self.scripts, self.problems = [], set(), [], []
        self.stack, self.text, self.tags = [], [], {}
        self.title, self._in_title = "", False
        self.p_reported = set()  # places in the stack of the <p>s reported

    def where(self):
        return "line %d" % self.getpos()[0]

    def check_quoting(self, tag):
        raw = self.get_starttag_text() or ""
        body = raw[len(tag) + 1:].rstrip(">").rstrip("/")
        for m in ATTR.finditer(body):
            if m.group(2) and not m.group(3).startswith('"'):
                self.problems.append(f"{self.where()}: <{tag}> {m.group(1)}={m.group(3)}: not in double quotes")

    def handle_starttag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        self.check_quoting(tag)
        if tag in CLOSES_P and "p" in self.stack:
            at = len(self.stack) - 1 - self.stack[::-1].index("p")
            if at not in self.p_reported:  # once per <p>
                self.p_reported.add(at)
                self.problems.append(f"{self.where()}: <{tag}> inside <p> (it ends the <p> there)")
        a = dict(attrs)
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"inline event handler {name} on <{tag}>")
            if name == "id":
                if value in self.ids:
                    self.problems.append(f"{self.where()}: id {value!r} twice")
                self.ids.add(value)
            if name in URL_ATTRS and value is not None:
                urls = [u.strip().split()[0] for u in value.split(",") if u.strip()] if name.endswith("srcset") \
                    else [value]
                self.links += urls
            if name == "style" and value:
                self.links += [m.group(2) or m.group(4) for m in CSS_URL.finditer(value)]
        if tag == "meta" and a.get("http-equiv", "").lower() == "refresh":
            self.problems.append(f"{self.where()}: <meta http-equiv=refresh>")
        if tag == "script":
            self.scripts.append(a.get("src"))
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
        if tag == "p":
            self.p_reported.discard(len(self.stack) - 1)
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"{self.where()}: </{tag}> closes <{self.stack[-1] if self.stack else 'nothing'}>")
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


def link_problem(site, page_path, link, pages):
    """What is wrong with `link` on the page at `page_path`, or None."""
    url = urllib.parse.urlsplit(link)
    if url.scheme or url.netloc or link.startswith("/"):
        return f"{link} leaves the site"
    target = os.path.realpath(os.path.join(os.path.dirname(page_path), urllib.parse.unquote(url.path))) \
        if url.path else page_path
    if not target.startswith(os.path.realpath(site) + os.sep):
        return f"{link} points outside the site"
    if not os.path.isfile(target):
        return f"{link}: no such file"
    if url.fragment and target in pages and url.fragment not in pages[target].ids:
        return f"{link}: no id {url.fragment!r} there"
    if url.fragment and target.endswith(".html") and target not in pages:
        return f"{link}: not a page of the site"
    return None


def check_style_sheets(site):
    """Every .css file of the site loads nothing from outside it."""
    problems = []
    for folder, _, files in os.walk(site):
        for name in files:
            if name.endswith(".css"):
                path = os.path.join(folder, name)
                text = open(path, encoding="utf-8").read()
                for m in CSS_URL.finditer(text):
                    problem = link_problem(site, os.path.realpath(path), m.group(2) or m.group(4), {})
                    if problem:
                        problems.append(f"{os.path.relpath(path, site)}: {problem}")
    return problems


def check_links(site):
    problems, pages = check_style_sheets(site), {}
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
            problem = link_problem(site, path, link, pages)
            if problem:
                problems.append(f"{rel}: {problem}")
    print(f"{len(pages)} pages, {sum(len(p.links) for p in pages.values())} links checked")
    return problems


def check_tidy(site):
    """HTML Tidy's messages on every page of the site, as problems."""
    pages = sorted(os.path.join(folder, name) for folder, _, files in os.walk(site)
                   for name in files if name.endswith(".html"))
    problems = []
    for i in range(0, len(pages), 200):
        # -e: only errors and warnings; empty elements (a legend's swatch) are valid HTML5.
        r = subprocess.run(["tidy", "-quiet", "-errors", "--gnu-emacs", "yes", "--drop-empty-elements", "no"]
                           + pages[i:i + 200], capture_output=True, text=True)
        problems += [os.path.relpath(line, site) if line.startswith(site) else line
                     for line in (r.stdout + r.stderr).splitlines() if line.strip()]
        if r.returncode not in (0, 1, 2):
            problems.append(f"tidy exited {r.returncode}")
        elif r.returncode and not (r.stdout + r.stderr).strip():
            problems.append(f"tidy exited {r.returncode} with no message")
    print(f"{len(pages)} pages read by tidy")
    return problems


def check_dom(path, wants):
    page = parse(path)
    text = " ".join("".join(page.text).split())
    raw = open(path, encoding="utf-8").read()
    problems = []
    for want in wants:
        key, _, value = want.partition("=")
        if key == "bars":
            ranking = "".join(re.findall(r'<table class="ranking".*?</table>', raw, re.S))
            n = ranking.count('<svg')  # a bar a ranked run, in its row
            if n != int(value):
                problems.append(f"{n} chart bars, expected {value}")
        elif key == "rows":
            n = raw.count('<tr id="run-')
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
    elif len(sys.argv) >= 3 and sys.argv[1] == "tidy":
        problems = check_tidy(sys.argv[2])
    elif len(sys.argv) >= 4 and sys.argv[1] == "dom":
        problems = check_dom(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)
    for p in problems[:50]:
        print("problem:", p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
