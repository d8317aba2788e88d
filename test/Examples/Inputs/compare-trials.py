#!/usr/bin/env python3
"""Compares the trials of a loom-train --trials --json summary with separate
single-trial runs (their --json summaries, in trial order): every step's loss
and every epoch's test accuracy must agree within the tolerance. Prints one
line per trial and exits 1 when one differs. A summary without trials (a
single run, such as one across ranks) is compared as one trial."""
import argparse
import json
import sys

p = argparse.ArgumentParser()
p.add_argument("fused")
p.add_argument("single", nargs="+")
p.add_argument("--tolerance", type=float, required=True,
               help="largest |fused - single| / max(1, |single|) of a step's loss")
p.add_argument("--accuracy-tolerance", type=float, default=0.01,
               help="largest difference of an epoch's test accuracy (a fraction)")
a = p.parse_args()
summary = json.load(open(a.fused))
trials = summary.get("trials", [summary])
if len(trials) != len(a.single):
    sys.exit(f"FAILED: {len(trials)} trials in {a.fused}, {len(a.single)} single runs given")
failed = False
for t, (trial, path) in enumerate(zip(trials, a.single)):
    single = json.load(open(path))
    fused_loss, single_loss = trial["step_loss"], single["step_loss"]
    if len(fused_loss) != len(single_loss):
        sys.exit(f"FAILED: trial {t}: {len(fused_loss)} steps, {path}: {len(single_loss)}")
    loss_err = max(abs(f - s) / max(1.0, abs(s)) for f, s in zip(fused_loss, single_loss))
    acc_err = max(abs(f["test_accuracy"] - s["test_accuracy"])
                  for f, s in zip(trial["epochs"], single["epochs"]))
    ok = loss_err <= a.tolerance and acc_err <= a.accuracy_tolerance
    failed |= not ok
    hp = " ".join(f"{k}={v:g}" for k, v in trial.get("hyper_parameters", {}).items())
    what = f"trial {t} ({hp})" if "trials" in summary else "the run"
    print(f"{'ok' if ok else 'FAILED'}: {what}: {len(fused_loss)} steps, "
          f"largest loss error {loss_err:.2g} (tolerance {a.tolerance:g}), "
          f"test accuracy error {acc_err:.3g} (tolerance {a.accuracy_tolerance:g})")
sys.exit(1 if failed else 0)
