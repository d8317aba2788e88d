#!/usr/bin/env python3
"""Checks docs/Environment.md, the table of every environment variable Loom
reads, against the code (test/environment-table.test).

  check-environment.py REPO

1. Every variable a C++ source under lib/, tools/, include/ or bench/ names in
   a string literal ("LOOM_...", "ONEDNN_...", "DNNL_...", "OMP_...",
   "GOMP_...", a launcher's) and every LOOM_... that a script under scripts/
   or .ci/ expands is a row of the table.
2. Every LOOM_/ONEDNN_/DNNL_ row is read somewhere (found by 1).
3. For each switch read through environmentIs("NAME", "v", {known}) or
   environmentChoice("NAME", {known}) (lib/Runtime/Environment.h), or through
   a one-line wrapper of them (`bool f(const char *name) { return
   environmentIs(name, "v", {known}); }` called as f("NAME")), the row's
   values column lists exactly the known values, each in backticks.

Prints one line per problem and exits 1 if there is any."""

import pathlib
import re
import sys

CPP_SUFFIXES = {".cpp", ".h", ".def", ".inc"}
# Quoted names that are environment variables: Loom's, oneDNN's, OpenMP's,
# and the launchers' (lib/Runtime/Comm/Launch.cpp).
CPP_NAME = re.compile(
    r'"((?:LOOM|ONEDNN|DNNL|OMP|GOMP|OMPI|SLURM|MASTER)_[A-Z0-9_]+'
    r'|RANK|WORLD_SIZE|LOCAL_RANK)"')
SCRIPT_NAME = re.compile(r'\$\{?(LOOM_[A-Z0-9_]+)|environ(?:\.get\(|\[)'
                         r'["\'](LOOM_[A-Z0-9_]+)')
# environmentIs("NAME", "value", {"a", "b"}) and environmentChoice("NAME",
# {"a", "b"}), over line breaks.
SWITCH = re.compile(
    r'environment(?:Is|Choice)\(\s*"([A-Z0-9_]+)"\s*,'
    r'(?:\s*"[^"]*"\s*,)?\s*\{([^}]*)\}', re.S)
# A wrapper of a switch's read: `bool f(const char *name) { return
# environmentIs(name, "v", {known}); }`, then called as f("NAME").
WRAPPER = re.compile(
    r'(\w+)\(const char \*(\w+)\)\s*\{\s*return\s+environment(?:Is|Choice)'
    r'\(\s*\2\s*,(?:\s*"[^"]*"\s*,)?\s*\{([^}]*)\}', re.S)
ROW = re.compile(r'^\|\s*`([A-Z0-9_.]+)`\s*\|([^|]*)\|([^|]*)\|')


def sources(repo, folders, suffixes):
    for folder in folders:
        root = repo / folder
        if root.is_file():
            yield root
            continue
        for path in sorted(root.rglob("*")):
            if path.is_file() and (not suffixes or path.suffix in suffixes):
                yield path


def main():
    repo = pathlib.Path(sys.argv[1])
    table = {}
    for line in (repo / "docs/Environment.md").read_text().splitlines():
        m = ROW.match(line)
        if m:
            table[m.group(1)] = m.group(3)
    problems = []
    found = {}
    switches = {}
    for path in sources(repo, ["lib", "tools", "include", "bench"],
                        CPP_SUFFIXES):
        text = path.read_text(errors="replace")
        rel = path.relative_to(repo)
        for m in CPP_NAME.finditer(text):
            found.setdefault(m.group(1), rel)
        for m in SWITCH.finditer(text):
            known = re.findall(r'"([^"]*)"', m.group(2))
            switches.setdefault(m.group(1), (set(), rel))[0].update(known)
        for w in WRAPPER.finditer(text):
            known = re.findall(r'"([^"]*)"', w.group(3))
            for m in re.finditer(r'\b' + w.group(1) + r'\(\s*"([A-Z0-9_]+)"',
                                 text):
                switches.setdefault(m.group(1), (set(), rel))[0].update(known)
    for path in sources(repo, ["scripts", ".ci"], None):
        if path.suffix not in {".sh", ".py", ""}:
            continue
        for m in SCRIPT_NAME.finditer(path.read_text(errors="replace")):
            found.setdefault(m.group(1) or m.group(2), path.relative_to(repo))
    for name, where in sorted(found.items()):
        if name not in table:
            problems.append(f"{where}: reads {name}, which docs/Environment.md "
                            "does not list")
    for name in sorted(table):
        if re.match(r"(LOOM|ONEDNN|DNNL)_", name) and name not in found:
            problems.append(f"docs/Environment.md: lists {name}, which "
                            "nothing reads")
    for name, (known, where) in sorted(switches.items()):
        if name not in table:
            continue  # reported above
        listed = set(re.findall(r"`([^`]*)`", table[name]))
        if listed != known:
            problems.append(
                f"docs/Environment.md: {name} takes "
                f"{', '.join(sorted(known))} ({where}) but the table lists "
                f"{', '.join(sorted(listed)) or 'no value in backticks'}")
    for p in problems:
        print(p)
    print(f"check-environment: {len(table)} variables, {len(found)} read, "
          f"{len(switches)} switches with values, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
