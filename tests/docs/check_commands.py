#!/usr/bin/env python3
"""The salasim commands shown in README.md and docs/*.md run as shown, and print what is shown.

A shown command is a line "$ ./build/salasim ..." inside a fenced code block; the lines after it, up to the next
"$ " line or the end of the block, are its shown output: "..." on a line of its own marks lines left out, and "…"
inside a line stands for a value that changes from run to run (a time, a date, a path of the machine), matching any
text. "# exit code N" at the end of a line gives the exit code (0 otherwise).

A command runs when a CPU runs it in seconds: its subcommand is in RUN, it needs no GPU (`run`, `--backend gpu`,
`ruler`, `golden record`, or a remark "  # ... GPU ..." after it), and a verify, ref or golden check names a
--scenario or --golden (the default scenario takes a minute: of those only the main job, a bare `verify`, runs). Each file's commands run in the order written, in one fresh
folder per file laid out as a checkout (scratch_tree: a command may read what an earlier one of its page wrote),
and each must exit with the shown code and print every shown line, in order. Every other command is checked
against its subcommand's --help: each --option it uses must exist there.

--write regenerates the shown outputs instead: a shown line that is no longer printed as it stands is replaced by
the printed line that differs from it only in its numbers (and in the text its "…" stand for), so figures that moved
are rewritten and every other difference is reported for a person to resolve.

Usage: check_commands.py SOURCE_DIR SALASIM_BIN BUILD_DIR [--write]"""
import os
import re
import shlex
import subprocess
import sys
import tempfile

from doc_files import finish, markdown_files

RUN = {"params", "synth-checkpoint", "tolerances", "model", "explain", "op", "diff", "ref", "verify", "golden",
       "report"}
SUBCOMMANDS = set()  # filled from `salasim --help` and each subcommand's --help (two levels), so it cannot go stale
EXIT = re.compile(r"\s*#\s*exit code (\d+)\s*$")
WILD = "…"


class Shown:
    def __init__(self, line, command):
        self.line, self.command, self.output, self.code = line, command, [], 0
        self.output_lines = []  # the file's line numbers of self.output


def shown_commands(lines):
    """Every "$ ./build/salasim" line of fenced blocks, with its shown output lines and exit code."""
    out, fence, cur = [], False, None
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
                cur = Shown(n, line[2:])
                out.append(cur)
        elif cur is not None:
            m = EXIT.search(line)
            if m:
                cur.code = int(m.group(1))
                line = line[: m.start()]
            cur.output.append(line.rstrip())
            cur.output_lines.append(n)
    return out


def subcommand(args):
    path = []
    for a in args:
        if a not in SUBCOMMANDS:
            break
        path.append(a)
    return path


def runs_here(words):
    sub = subcommand(words)
    if not sub or sub[0] not in RUN:
        return False
    if "--backend" in words and words[words.index("--backend") + 1:][:1] == ["gpu"]:
        return False
    if sub[:2] == ["golden", "record"]:
        return False
    if words == ["verify"]:
        return True  # the main job itself, the one command of a minute that runs (docs/verify.md shows it whole)
    if sub[0] in ("verify", "ref", "golden") and "--scenario" not in words and "--golden" not in words:
        return False
    return True


def scratch_tree(cwd, source, binary, build):
    """The folder commands run in, laid out as a checkout: ./build/salasim is this binary, build/tests/ (what tests
    wrote) this build's, and the source tree's data folders are there, so a command runs exactly as written and
    what it writes (ref.h5, build/report/) stays in the folder. build/tests/tmp/ is its own: what a page shows of
    a test's files is made by running that test case into it (PREPARE), never read from the build, where a
    concurrent ctest case may be rewriting it."""
    os.makedirs(os.path.join(cwd, "build", "tests", "tmp"))
    os.symlink(binary, os.path.join(cwd, "build", "salasim"))
    for built in ("lib", "examples"):  # carried libraries; the example implementations docs check
        if os.path.isdir(os.path.join(build, built)):
            os.symlink(os.path.join(build, built), os.path.join(cwd, "build", built))
    for top in ("scenarios", "reports", "tests", "tools", "bench", "docs", "examples", "include"):
        os.symlink(os.path.join(source, top), os.path.join(cwd, top))


# Files some shown commands read that a test case writes: the case is run first, into the scratch folder's
# build/tests/tmp (SALASIM_TEST_TMP).
PREPARE = {
    "build/tests/tmp/fault_element/": ("tests/salasim_compare_tests",
                                       ["harness: each fault fails and names its tap as the first divergence"]),
    # (a comma separates Catch2 test specs, hence the wildcard; -c runs the one section)
    "build/tests/tmp/golden_cli/": ("tests/salasim_scenarios_tests",
                                    ["golden: recorded from the peer it passes*", "-c",
                                     "salasim golden check passes a good file and fails an altered one with the "
                                     "re-record command"]),
}


def prepare(command, build, cwd):
    for prefix, (exe, args) in PREPARE.items():
        if prefix in command and not os.path.exists(os.path.join(cwd, prefix)):
            env = dict(os.environ, SALASIM_TEST_TMP=os.path.join(cwd, "build", "tests", "tmp"))
            r = subprocess.run([os.path.join(build, exe), *args], cwd=cwd, capture_output=True, text=True, env=env,
                               timeout=600)
            if r.returncode != 0:
                sys.exit(f"check_commands: preparing {prefix}: {exe} {args} failed:\n{r.stdout[-2000:]}")


def strip_comment(command):
    """The command without a trailing "  # ..." remark, and the remark."""
    m = re.search(r"\s+#\s+(.*)$", command)
    return (command[: m.start()], m.group(1)) if m else (command, "")


NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?")


def pattern(shown, numbers):
    """A regex for a shown line: "…" matches any text; with `numbers`, every number matches any number."""
    parts = []
    for piece in re.split(f"({WILD})", shown):
        if piece == WILD:
            parts.append(".*?")
            continue
        last = 0
        if numbers:
            for m in NUMBER.finditer(piece):
                parts.append(re.escape(piece[last:m.start()]))
                parts.append(r"-?[0-9][0-9.e+-]*")
                last = m.end()
        parts.append(re.escape(piece[last:]))
    return re.compile("^" + "".join(parts) + "$")


def run(command, cwd):
    r = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=cwd, capture_output=True, text=True,
                       timeout=300)
    return r.returncode, [l.rstrip() for l in (r.stdout + r.stderr).splitlines()]


def compare(s, code, got, write):
    """None when every shown line is printed in order; else the problem. With `write`, s.output is regenerated
    where lines differ only in numbers (and wildcards), and the problem is what could not be."""
    if code != s.code:
        return f"exited {code}, the docs show {s.code}\n" + "\n".join(got[-15:])
    i = 0
    for k, want in enumerate(s.output):
        if want.strip() in ("", "..."):
            continue
        exact, loose = pattern(want, False), pattern(want, True)
        j = i
        while j < len(got) and not exact.match(got[j]):
            j += 1
        if j < len(got):
            i = j + 1
            continue
        if write:
            j = i
            while j < len(got) and not loose.match(got[j]):
                j += 1
            if j < len(got):
                s.output[k] = got[j] if WILD not in want else want  # a wildcard line keeps its shape
                i = j + 1
                continue
        return f"printed no line '{want}' (in order)\n" + "\n".join(got[-15:])
    return None


def check_options(command, binary, source, helps):
    words = shlex.split(strip_comment(command)[0].split(" | ")[0])[1:]
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


def check_file(path, source, binary, build, write, helps, problems):
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    ran = checked = 0
    rewritten = False
    with tempfile.TemporaryDirectory(prefix="salasim-docs-") as cwd:
        scratch_tree(cwd, source, binary, build)
        for s in shown_commands(lines):
            command, remark = strip_comment(s.command)
            words = shlex.split(command.split(" | ")[0])[1:]
            if runs_here(words) and "GPU" not in remark:
                prepare(command, build, cwd)
                code, got = run(command, cwd)
                before = list(s.output)
                why = compare(s, code, got, write)
                if s.output != before:
                    for n, text in zip(s.output_lines, s.output):
                        suffix = f"  # exit code {s.code}" if EXIT.search(lines[n - 1]) else ""
                        lines[n - 1] = text + suffix
                    rewritten = True
                ran += 1
            else:
                why = check_options(s.command, binary, source, helps)
                checked += 1
            if why:
                problems.append(f"{os.path.relpath(path, source)}:{s.line}: $ {s.command}: {why}")
    if write and rewritten:
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        print(f"rewrote the shown output in {os.path.relpath(path, source)}")
    return ran, checked


def main():
    args = [a for a in sys.argv[1:] if a != "--write"]
    write = "--write" in sys.argv[1:]
    source, binary, build = (os.path.abspath(a) for a in args[:3])
    for top in subcommands_of(binary, [], source):
        SUBCOMMANDS.add(top)
        SUBCOMMANDS.update(subcommands_of(binary, [top], source))
    problems, ran, checked, helps = [], 0, 0, {}
    for path in markdown_files(source):
        r, c = check_file(path, source, binary, build, write, helps, problems)
        ran += r
        checked += c
    finish(problems, f"check_commands: {len(problems)} of {ran + checked} shown commands do not run as shown",
           f"check_commands: OK, {ran} commands ran as shown, {checked} more use only options their subcommand has")


if __name__ == "__main__":
    main()
