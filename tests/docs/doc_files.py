"""Shared by the docs checks: which files are the documentation, and how a check ends."""
import os
import sys


def markdown_files(source):
    """README.md and every docs/*.md, in a stable order."""
    docs = os.path.join(source, "docs")
    return [os.path.join(source, "README.md")] + sorted(
        os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))


def finish(problems, failed, passed):
    """Prints each problem; exits 1 with `failed` when there are any, else prints `passed`."""
    for p in problems:
        print(p)
    if problems:
        sys.exit(failed)
    print(passed)
