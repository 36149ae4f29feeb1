#!/usr/bin/env python3
"""Checks that the code excerpts of a document are the real files' lines.

usage: check_excerpts.py SOURCE_DIR DOC...      (exit 0: every excerpt matches; 1: one differs)
       check_excerpts.py --self-test

In a document (docs/writing-a-game.md) every fenced block of code (```c, ```proto, ```meson,
```sh ...) is preceded by a marker line, an HTML comment markdown does not show:

  <!-- excerpt: games/zhajinhua/zjh_engine.c -->   the block is lines of that file (path from
                                                   the source root)
  <!-- example -->                                 the block is an illustration, from no file

An excerpt's lines must be the file's, in the file's order. A line that is only "..." (any
indentation) leaves lines out; between two such lines the excerpt's lines are consecutive lines
of the file. A run may be indented less than in the file, by the same amount on each of its
lines (an excerpt from the middle of a function); trailing spaces are ignored. A fenced block
without a marker, a marker without a block, a missing file and an excerpt that differs are
errors, each reported with the document's line and, for a difference, the closest lines of the
file. Blocks fenced as ``` alone (a tree of files, output) need no marker.
"""
import os
import re
import sys
import tempfile

MARK = re.compile(r"^\s*<!--\s*(excerpt:\s*(?P<path>\S+)|(?P<example>example))\s*-->\s*$")
FENCE = re.compile(r"^(?P<indent>\s*)```(?P<lang>[A-Za-z0-9_+-]*)\s*$")
ELLIPSIS = re.compile(r"^\s*\.\.\.\s*$")


def blocks(lines):
    """Yields (marker line number or None, marker match, fence line number, language, body)."""
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        start = i
        indent = m.group("indent")
        body = []
        i += 1
        while i < len(lines) and not re.match(r"^\s*```\s*$", lines[i]):
            line = lines[i]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            i += 1
        if i >= len(lines):
            raise ValueError("line %d: a fenced block that never ends" % (start + 1))
        j = start - 1
        while j >= 0 and lines[j].strip() == "":
            j -= 1
        mark = MARK.match(lines[j]) if j >= 0 else None
        yield (j + 1 if mark else None), mark, start + 1, m.group("lang"), body
        i += 1


def runs(body):
    """The excerpt's runs of consecutive lines, each with its first line's index in body."""
    out, cur, at = [], [], 0
    for k, line in enumerate(body):
        if ELLIPSIS.match(line):
            if cur:
                out.append((at, cur))
            cur = []
            continue
        if not cur:
            at = k
        cur.append(line.rstrip())
    if cur:
        out.append((at, cur))
    # blank lines at a run's ends say nothing of the file
    trimmed = []
    for at, run in out:
        while run and run[0] == "":
            run, at = run[1:], at + 1
        while run and run[-1] == "":
            run = run[:-1]
        if run:
            trimmed.append((at, run))
    return trimmed


def find_run(file_lines, run, start):
    """The index in file_lines (from start) where run matches with one indentation added to every
    non-empty line; -1 when nowhere. Also the longest partial match (index, length, the line the
    file should have there) for a report."""
    best = (-1, 0, "")
    lead = min(len(l) - len(l.lstrip()) for l in run if l.strip())
    run = [l[lead:] if l.strip() else "" for l in run]
    first = next(k for k, l in enumerate(run) if l)
    for i in range(start, len(file_lines) - len(run) + 1):
        f0 = file_lines[i + first]
        if not f0.endswith(run[first]):
            continue
        pre = f0[:len(f0) - len(run[first])]
        if pre.strip():
            continue
        n, want = 0, ""
        for k, l in enumerate(run):
            want = pre + l if l else ""
            if file_lines[i + k] != want:
                break
            n += 1
        if n == len(run):
            return i, best
        if n > best[1]:
            best = (i, n, want)
    return -1, best


def check_doc(src, doc):
    """Errors of one document, as strings."""
    with open(doc, encoding="utf-8") as f:
        lines = f.read().split("\n")
    errors, n = [], 0
    marked = set()
    try:
        found = list(blocks(lines))
    except ValueError as e:
        return ["%s: %s" % (doc, e)]
    for mline, mark, fline, lang, body in found:
        if mark is not None:
            marked.add(mline)
        if mark is None:
            if lang:
                errors.append("%s:%d: a ```%s block without a marker (<!-- excerpt: FILE --> or"
                              " <!-- example -->)" % (doc, fline, lang))
            continue
        if mark.group("example"):
            continue
        path = mark.group("path")
        full = os.path.join(src, path)
        if not os.path.isfile(full):
            errors.append("%s:%d: the excerpt's file %s does not exist" % (doc, mline, path))
            continue
        with open(full, encoding="utf-8") as f:
            file_lines = [l.rstrip() for l in f.read().split("\n")]
        n += 1
        pos = 0
        for at, run in runs(body):
            i, (bi, bn, bwant) = find_run(file_lines, run, pos)
            if i < 0:
                where = fline + 1 + at
                if bi >= 0:
                    errors.append("%s:%d: differs from %s:%d: the excerpt has %r, the file %r"
                                  % (doc, where + bn, path, bi + bn + 1, bwant,
                                     file_lines[bi + bn] if bi + bn < len(file_lines) else "(end)"))
                else:
                    errors.append("%s:%d: %r is not a line of %s (after line %d)"
                                  % (doc, where, run[0].strip(), path, pos + 1))
                break
            pos = i + len(run)
    for k, line in enumerate(lines):
        if MARK.match(line) and k + 1 not in marked:
            errors.append("%s:%d: a marker without a fenced block after it" % (doc, k + 1))
    return errors, n


def self_test():
    """The checker's own cases: a matching excerpt, each kind of difference."""
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "a.c"), "w") as f:
            f.write("int f(void)\n{\n    int x = 1;\n    int y = 2;\n\n    return x + y;\n}\n")
        cases = [
            ("<!-- excerpt: a.c -->\n```c\nint f(void)\n{\n    int x = 1;\n```\n", 0),
            ("<!-- excerpt: a.c -->\n```c\nint f(void)\n...\nreturn x + y;\n```\n", 0),
            ("<!-- excerpt: a.c -->\n```c\nint x = 1;\nint y = 2;\n```\n", 0),   # dedented
            ("<!-- excerpt: a.c -->\n```c\nint x = 1;\nint y = 3;\n```\n", 1),   # a changed line
            ("<!-- excerpt: a.c -->\n```c\nint y = 2;\n...\nint x = 1;\n```\n", 1),  # order
            ("<!-- excerpt: a.c -->\n```c\nint x = 1;\n    int y = 2;\n```\n", 1),  # indentation
            ("<!-- excerpt: b.c -->\n```c\nint x;\n```\n", 1),                   # no such file
            ("```c\nint x;\n```\n", 1),                                          # no marker
            ("<!-- example -->\n```c\nanything(at, all);\n```\n", 0),
            ("<!-- excerpt: a.c -->\ntext\n", 1),                                # no block
            ("```\ngames/x/\n```\n", 0),                                         # a tree
        ]
        bad = 0
        for k, (text, want) in enumerate(cases):
            doc = os.path.join(d, "doc%d.md" % k)
            with open(doc, "w") as f:
                f.write(text)
            r = check_doc(d, doc)
            errs = r if isinstance(r, list) else r[0]
            got = 1 if errs else 0
            print("%s case %d: %s" % ("ok" if got == want else "FAIL", k, errs or "matches"))
            bad += got != want
        return 1 if bad else 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) < 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    src, docs = argv[1], argv[2:]
    failed = False
    for doc in docs:
        r = check_doc(src, os.path.join(src, doc) if not os.path.isabs(doc) else doc)
        errors, n = (r, 0) if isinstance(r, list) else r
        for e in errors:
            print("FAIL " + e)
        if errors:
            failed = True
        else:
            print("ok %s: %d excerpts match their files" % (doc, n))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
