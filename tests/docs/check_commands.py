#!/usr/bin/env python3
"""The salasim commands shown in README.md and docs/*.md still run as shown.

A shown command is a line "$ ./build/salasim ..." inside a fenced code block; the lines after it, up to the next
"$ " line or the end of the block, are its shown output ("..." marks lines left out; "# exit code N" at the end of
a line gives the exit code, 0 otherwise). Commands of the fast, deterministic subcommands (RUN below) are run from
the source tree, and must exit with the shown code and print every shown output line, in order. Every other
command (a GPU, minutes of CPU, or inputs a test writes) is checked against its subcommand's --help: each --option
it uses must exist there.

Usage: check_commands.py SOURCE_DIR SALASIM_BIN BUILD_DIR"""
import os
import re
import shlex
import subprocess
import sys

from doc_files import finish, markdown_files

RUN = {"params", "synth-checkpoint", "tolerances", "model"}
SUBCOMMANDS = set()  # filled from `salasim --help` and each subcommand's --help (two levels), so it cannot go stale
EXIT = re.compile(r"\s*#\s*exit code (\d+)\s*$")


def shown_commands(path):
    """(line number, command, shown output lines, exit code) of every "$ ./build/salasim" line in fenced blocks."""
    out, fence, cur = [], False, None
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for n, line in enumerate(lines, 1):
        if re.match(r"^\s*```", line):
            fence = not fence
            cur = None
            continue
        if not fence:
            continue
        if line.startswith("$ "):
            cur = None
            if line.startswith("$ ./build/salasim "):
                cur = [n, line[2:], [], 0]
                out.append(cur)
        elif cur is not None:
            m = EXIT.search(line)
            if m:
                cur[3] = int(m.group(1))
                line = line[: m.start()]
            cur[2].append(line.rstrip())
    return out


def subcommand(args):
    path = []
    for a in args:
        if a not in SUBCOMMANDS:
            break
        path.append(a)
    return path


def localise(command, binary, build):
    """The shown command with ./build/salasim and build/... paths pointing at this build."""
    words = []
    for w in shlex.split(command, posix=True):
        if w == "./build/salasim":
            w = binary
        elif w.startswith("build/"):
            w = os.path.join(build, w[len("build/"):])
        words.append(w)
    return words


def run_shown(command, output, code, binary, build, source):
    parts = [shlex.join(localise(p, binary, build)) for p in command.split(" | ")]
    r = subprocess.run(["bash", "-o", "pipefail", "-c", " | ".join(parts)], cwd=source, capture_output=True, text=True,
                       timeout=300)
    got = [l.rstrip() for l in (r.stdout + r.stderr).splitlines()]
    if r.returncode != code:
        return f"exited {r.returncode}, the docs show {code}\n" + "\n".join(got[-15:])
    i = 0
    for want in output:
        if want.strip() in ("", "..."):
            continue
        while i < len(got) and got[i] != want:
            i += 1
        if i == len(got):
            return f"printed no line '{want}' (in order)\n" + "\n".join(got[-15:])
        i += 1
    return None


def check_options(command, binary, build, source, helps):
    words = localise(command.split(" | ")[0], binary, build)[1:]
    sub = subcommand(words)
    key = " ".join(sub)
    if key not in helps:
        r = subprocess.run([binary, *sub, "--help"], cwd=source, capture_output=True, text=True)
        if r.returncode != 0:
            return f"'salasim {key} --help' failed: is '{key}' a subcommand?"
        helps[key] = set(re.findall(r"--[a-z][a-z0-9-]*", r.stdout))
    unknown = [w.split("=")[0] for w in words if w.startswith("--") and w.split("=")[0] not in helps[key]]
    return f"salasim {key} has no option {', '.join(unknown)}" if unknown else None


def subcommands_of(binary, path, source):
    r = subprocess.run([binary, *path, "--help"], cwd=source, capture_output=True, text=True)
    text = r.stdout.split("Subcommands:", 1)
    return re.findall(r"^  ([a-z][a-z0-9-]*)\s", text[1], re.M) if len(text) == 2 else []


def main():
    source, binary, build = (os.path.abspath(a) for a in sys.argv[1:4])
    for top in subcommands_of(binary, [], source):
        SUBCOMMANDS.add(top)
        SUBCOMMANDS.update(subcommands_of(binary, [top], source))
    files = markdown_files(source)
    problems, ran, checked, helps = [], 0, 0, {}
    for path in files:
        for n, command, output, code in shown_commands(path):
            sub = subcommand(shlex.split(command)[1:])
            if sub and sub[0] in RUN:
                why = run_shown(command, output, code, binary, build, source)
                ran += 1
            else:
                why = check_options(command, binary, build, source, helps)
                checked += 1
            if why:
                problems.append(f"{os.path.relpath(path, source)}:{n}: $ {command}: {why}")
    finish(problems, f"check_commands: {len(problems)} of {ran + checked} shown commands do not run as shown",
           f"check_commands: OK, {ran} commands ran as shown, {checked} more use only options their subcommand has")


if __name__ == "__main__":
    main()
