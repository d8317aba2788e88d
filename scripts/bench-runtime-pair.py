#!/usr/bin/env python3
"""Two builds of loom-run on the same artifacts, alternated: did a runtime change cost speed?

    scripts/bench-runtime-pair.py --old OLD/bin/loom-run --new build/bin/loom-run \
        --inputs in.safetensors a.so b.so ... [--rounds 3] [--repeat 10] [--json out.json]
    scripts/bench-runtime-pair.py ... --old-dir OLD_ARTIFACTS --new-dir NEW_ARTIFACTS a.so b.so ...

The same artifacts by default (a runtime change alone); with --old-dir and --new-dir, each side runs the artifact
of that name its own loom-compile wrote (a compiler and runtime change together).

For every artifact, each round runs the old loom-run and then the new one (the order flips every round, so
neither always runs on a warmer cache), each with --warmup untimed and --repeat timed runs, and reads the median
loom-run prints. A model's latency is the median of its rounds' medians. Then the new side's outputs are compared
with the old side's (loom-run --outputs, then --compare with --tolerance, default 1e-6 relative). Prints a table
(per model, the geometric mean of new/old, the largest difference) and, with --json, every round's figures. Exits
non-zero when a run fails, its output cannot be read, or the outputs differ by more than the tolerance. Measure on an idle machine: a build beside it moves the figures more than most changes.
"""
import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile

MEDIAN = re.compile(r"^time: \S+ s \(best of \d+; median (\S+) s[;)]", re.M)


ERROR = re.compile(r"largest error:? (\S+)", re.I)


def run_loom(command):
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"bench-runtime-pair: {' '.join(command)} failed (exit {done.returncode}):\n"
                 f"{(done.stdout + done.stderr)[-2000:]}")
    return done.stdout + done.stderr


def base_command(loom_run, artifact, args):
    command = [loom_run, artifact]
    if args.inputs:
        command += ["--inputs", args.inputs]
    if args.threads:
        command += ["--num-threads", str(args.threads)]
    return command


def run_once(loom_run, artifact, args):
    command = base_command(loom_run, artifact, args)
    command += ["--warmup", str(args.warmup), "--repeat", str(args.repeat)]
    found = MEDIAN.search(run_loom(command))
    if not found:
        sys.exit(f"bench-runtime-pair: {' '.join(command)} printed no median time")
    return float(found.group(1)) * 1e3


def compare_outputs(paths, args, scratch):
    """The new side's outputs against the old side's; returns loom-run's largest error line."""
    reference = os.path.join(scratch, "old-outputs.safetensors")
    run_loom(base_command(args.old, paths["old"], args) + ["--outputs", reference])
    output = run_loom(base_command(args.new, paths["new"], args) +
                      ["--compare", reference, "--tolerance", str(args.tolerance)])
    found = ERROR.search(output)
    return found.group(1) if found else "?"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", required=True, help="the loom-run before the change")
    parser.add_argument("--new", required=True, help="the loom-run after the change")
    parser.add_argument("--inputs", help="safetensors inputs passed to every run (--inputs of loom-run)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0, help="--num-threads (default: loom-run's)")
    parser.add_argument("--json", help="write every round's figures here")
    parser.add_argument("--old-dir", help="the old side's artifacts (default: the paths as given)")
    parser.add_argument("--new-dir", help="the new side's artifacts (default: the paths as given)")
    parser.add_argument("--tolerance", type=float, default=1e-6,
                        help="largest output difference accepted, loom-run --compare's measure")
    parser.add_argument("artifacts", nargs="+")
    args = parser.parse_args()
    def side_path(artifact, folder):
        return os.path.join(folder, os.path.basename(artifact)) if folder else artifact

    sides = [{"old": side_path(a, args.old_dir), "new": side_path(a, args.new_dir)} for a in args.artifacts]
    for path in [args.old, args.new] + [p for paths in sides for p in paths.values()]:
        if not os.path.exists(path):
            sys.exit(f"bench-runtime-pair: {path}: no such file")

    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for paths in sides:
            rounds = {"old": [], "new": []}
            for r in range(args.rounds):
                order = ["old", "new"] if r % 2 == 0 else ["new", "old"]
                for side in order:
                    rounds[side].append(run_once(getattr(args, side), paths[side], args))
            old, new = statistics.median(rounds["old"]), statistics.median(rounds["new"])
            error = compare_outputs(paths, args, scratch)
            rows.append({"artifact": os.path.basename(paths["new"]), "old_ms": old, "new_ms": new,
                         "ratio": new / old, "largest_error": error, "rounds_ms": rounds})
            print(f"  {rows[-1]['artifact']}: old {old:.2f} ms, new {new:.2f} ms, outputs differ by {error}",
                  file=sys.stderr, flush=True)

    geomean = math.exp(sum(math.log(row["ratio"]) for row in rows) / len(rows))
    print("| artifact | old (ms) | new (ms) | new / old | largest output difference |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for row in rows:
        print(f"| {row['artifact']} | {row['old_ms']:.2f} | {row['new_ms']:.2f} | {row['ratio']:.3f} "
              f"| {row['largest_error']} |")
    print(f"| geometric mean | | | {geomean:.3f} | |")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"old": args.old, "new": args.new, "old_dir": args.old_dir, "new_dir": args.new_dir, "rounds": args.rounds, "repeat": args.repeat,
                       "warmup": args.warmup, "threads": args.threads, "models": rows,
                       "geomean_ratio": geomean}, out, indent=1)


if __name__ == "__main__":
    main()
