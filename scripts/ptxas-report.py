#!/usr/bin/env python3
"""ptxas's resource report of every generated CUDA kernel.

Usage: ptxas-report.py [--ptxas PATH] [--summary] [--no-spills] NAME=DIR...

Each DIR is a `loom-compile --target=cuda:... --dump-kernels=DIR` directory
holding one <chip>.ptx per chip, or a `.mlir` file: what `loom-opt` prints
after a kernel pipeline whose `gpu-module-to-binary` has `format=isa` (a
`gpu.binary` with the PTX of each chip as its objects' `assembly`; a
pipeline changed by hand, a pass left out, is reported the same way).
Every kernel of every chip is compiled by `ptxas -v` (the gate: ptxas must
accept it), and its registers, spill stores and loads, stack frame and
shared memory are printed as a Markdown table, one row per kernel and chip (--summary: one row per NAME and chip).
--no-spills exits 1, naming them, when a kernel spills (the generated
elementwise and reduction kernels must not; docs/Codegen/GPU.md).
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ENTRY = re.compile(r"Compiling entry function '([^']+)' for '([^']+)'")
FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, "
                   r"(\d+) bytes spill loads")
USED = re.compile(r"Used (\d+) registers")
SMEM = re.compile(r"(\d+) bytes smem")


def report(ptxas, path, chip):
    """One dict per kernel of the PTX file \\p path compiled for \\p chip."""
    run = subprocess.run([ptxas, "-v", "-arch=" + chip, path, "-o",
                          os.devnull], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit("ptxas rejected %s for %s:\n%s" % (path, chip, run.stderr))
    kernels, current = [], None
    for line in run.stderr.splitlines():
        m = ENTRY.search(line)
        if m:
            current = {"kernel": m.group(1), "chip": chip, "registers": 0,
                       "stack": 0, "spill_stores": 0, "spill_loads": 0,
                       "shared": 0}
            kernels.append(current)
            continue
        if current is None:
            continue
        m = FRAME.search(line)
        if m:
            current["stack"], current["spill_stores"], current["spill_loads"] = (
                int(g) for g in m.groups())
        m = USED.search(line)
        if m:
            current["registers"] = int(m.group(1))
            m = SMEM.search(line)
            current["shared"] = int(m.group(1)) if m else 0
    return kernels


OBJECT = re.compile(r'#gpu\.object<#nvvm\.target<[^>]*chip = "(sm_\w+)"[^>]*>'
                    r', properties = \{[^}]*\}, assembly = "((?:[^"\\]|\\.)*)"')


def ptx_files(directory, scratch):
    """(chip, path) of each chip's PTX in \\p directory (a --dump-kernels
    directory or a .mlir file, whose PTX is written into \\p scratch)."""
    if not directory.endswith(".mlir"):
        return [(os.path.basename(p)[:-len(".ptx")], p) for p in
                sorted(glob.glob(os.path.join(directory, "sm_*.ptx")))]
    with open(directory) as f:
        text = f.read()
    files = []
    for chip, escaped in OBJECT.findall(text):
        # MLIR's string escapes: \XX a byte in hex, \\ a backslash.
        ptx = re.sub(r"\\([0-9A-Fa-f]{2}|\\)", lambda m: "\\" if
                     m.group(1) == "\\" else chr(int(m.group(1), 16)), escaped)
        path = os.path.join(scratch, "%d-%s.ptx" % (len(files), chip))
        with open(path, "w") as f:
            f.write(ptx)
        files.append((chip, path))
    return files


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ptxas", default="/usr/local/cuda/bin/ptxas")
    parser.add_argument("--summary", action="store_true")
    parser.add_argument("--no-spills", action="store_true")
    parser.add_argument("dirs", nargs="+", metavar="NAME=DIR")
    args = parser.parse_args()
    rows = []
    scratch = tempfile.mkdtemp()
    for spec in args.dirs:
        name, _, directory = spec.partition("=")
        files = ptx_files(directory, scratch)
        if not files:
            sys.exit("no <chip>.ptx in %s" % directory)
        for chip, path in files:
            for k in report(args.ptxas, path, chip):
                k["model"] = name
                rows.append(k)
    if args.summary:
        print("| model | chip | kernels | max registers | spill bytes | "
              "max stack | max shared |")
        print("|---|---|---:|---:|---:|---:|---:|")
        keys = sorted({(r["model"], r["chip"]) for r in rows},
                      key=lambda k: ([s.partition("=")[0] for s in args.dirs]
                                     .index(k[0]), k[1]))
        for model, chip in keys:
            group = [r for r in rows if r["model"] == model and r["chip"] == chip]
            print("| %s | %s | %d | %d | %d | %d | %d |" % (
                model, chip, len(group), max(r["registers"] for r in group),
                sum(r["spill_stores"] + r["spill_loads"] for r in group),
                max(r["stack"] for r in group),
                max(r["shared"] for r in group)))
    else:
        print("| model | kernel | chip | registers | spill stores | "
              "spill loads | stack | shared |")
        print("|---|---|---|---:|---:|---:|---:|---:|")
        for r in rows:
            print("| %s | %s | %s | %d | %d | %d | %d | %d |" % (
                r["model"], r["kernel"], r["chip"], r["registers"],
                r["spill_stores"], r["spill_loads"], r["stack"], r["shared"]))
    shutil.rmtree(scratch)
    spilling = [r for r in rows if r["spill_stores"] or r["spill_loads"]]
    if args.no_spills and spilling:
        sys.exit("kernels that spill: " + ", ".join(
            "%s/%s (%s)" % (r["model"], r["kernel"], r["chip"])
            for r in spilling))


if __name__ == "__main__":
    main()
