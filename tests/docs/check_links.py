#!/usr/bin/env python3
"""Every relative link in README.md and docs/*.md resolves: the file or folder exists, and a #fragment names a
heading (or an explicit <a id/name> anchor) of the target Markdown file, as GitHub renders it.

README.md's documentation table lists every docs/*.md page.

Usage: check_links.py SOURCE_DIR. Prints one line per broken link and exits 1, or "check_links: OK ..." and 0.
Links inside fenced code blocks and inline code are not links; http(s):, mailto: and other schemes are not checked
(nothing here may need the network)."""
import os
import re
import sys

from doc_files import finish, markdown_files

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")


def prose_lines(text):
    """(line number, line) outside fenced code blocks, with inline code spans blanked out."""
    fence = None
    for n, line in enumerate(text.splitlines(), 1):
        m = re.match(r"^\s{0,3}(`{3,}|~{3,})", line)
        if m:
            if fence is None:
                fence = m.group(1)[0] * len(m.group(1))
                continue
            if line.strip().startswith(fence):
                fence = None
                continue
        if fence is None:
            yield n, re.sub(r"(`+)(.+?)\1", lambda c: " " * len(c.group(0)), line)


def slug(heading):
    """GitHub's anchor for a heading: inline markup dropped, lower case, punctuation removed, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links keep their text
    text = text.replace("`", "")
    text = re.sub(r"(\*\*|__|\*)", "", text)
    text = text.strip().lower()
    return "".join(c for c in text if c.isalnum() or c in "-_ ").replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        found, seen = set(), {}
        with open(path, encoding="utf-8") as f:
            text = f.read()
        fence = None
        for line in text.splitlines():
            m = re.match(r"^\s{0,3}(`{3,}|~{3,})", line)
            if m:
                fence = None if fence else m.group(1)
                continue
            if fence:
                continue
            h = HEADING.match(line)
            if h:
                s = slug(h.group(2))
                k = seen.get(s, 0)
                seen[s] = k + 1
                found.add(s if k == 0 else f"{s}-{k}")
            found.update(HTML_ANCHOR.findall(line))
        cache[path] = found
    return cache[path]


def check_file(path, source, problems):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    links = 0
    for n, line in prose_lines(text):
        targets = LINK.findall(line)
        d = REF_DEF.match(line)
        if d:
            targets.append(d.group(1))
        for target in targets:
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                continue  # a URL with a scheme
            links += 1
            where = f"{os.path.relpath(path, source)}:{n}: link '{target}'"
            file_part, _, frag = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            if not os.path.exists(dest):
                problems.append(f"{where}: {os.path.relpath(dest, source)} does not exist")
                continue
            if frag:
                if not dest.endswith(".md"):
                    problems.append(f"{where}: an anchor into a file that is not Markdown")
                elif frag not in anchors(dest):
                    problems.append(f"{where}: {os.path.relpath(dest, source)} has no heading with anchor #{frag}")
    return links


def check_listed(source, problems):
    """README.md's documentation table (its "## Documentation" section) links every page of docs/."""
    with open(os.path.join(source, "README.md"), encoding="utf-8") as f:
        text = f.read()
    at = text.find("\n## Documentation")
    section = text[at:] if at >= 0 else ""
    end = section.find("\n## ", 1)
    section = section[:end] if end > 0 else section
    listed = {os.path.normpath(t.partition("#")[0]) for t in LINK.findall(section)}
    for name in sorted(os.listdir(os.path.join(source, "docs"))):
        if name.endswith(".md") and os.path.join("docs", name) not in listed:
            problems.append(f"README.md: the documentation table does not list docs/{name}")


def main():
    source = os.path.abspath(sys.argv[1])
    files = markdown_files(source)
    problems = []
    links = sum(check_file(p, source, problems) for p in files)
    check_listed(source, problems)
    finish(problems, f"check_links: {len(problems)} broken link(s) of {links} in {len(files)} files",
           f"check_links: OK, {links} relative links in {len(files)} files resolve")


if __name__ == "__main__":
    main()
